package nemesis

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/nemesis/hostcmd"
	"chaos/testbed/dockerbed"
)

// answersDB is a system whose nodes always answer: the containers' main
// process (sleep) stands for the server.
type answersDB struct{ db.DB }

func (answersDB) Name() string                         { return "sleep" }
func (answersDB) Ready(context.Context, db.Node) error { return nil }
func (answersDB) Up(context.Context, db.Node) error    { return nil }

// requireDockerHere skips (fails under CI, where test.sh starts dockerd)
// unless this process is root and a Docker daemon answers.
func requireDockerHere(t *testing.T) {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "needs root (nsenter into containers)"
	} else if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		why = "no Docker daemon answers: " + strings.TrimSpace(string(out))
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// containerCluster is a cluster of n containers of a docker testbed, each
// the node itself (db.ContainerNodes), reached in nsenter mode.
func containerCluster(t *testing.T, ctx context.Context, n int) *Cluster {
	t.Helper()
	e, dir := dockerbed.NewEngine(), t.TempDir()
	st, err := dockerbed.Up(ctx, e, dockerbed.Config{Dir: dir, Hosts: n})
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = dockerbed.Down(context.Background(), e, dir) })
	c := &Cluster{Remotes: map[string]control.Remote{}, DB: db.ContainerNodes(answersDB{}), rules: &ruleTable{}}
	for i, name := range st.Containers {
		node := fmt.Sprintf("n%d", i+1)
		r, err := control.DialDocker(ctx, node, name, control.DockerConfig{Mode: control.DockerNsenter, Stopped: true})
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		ct, _ := control.ContainerOf(r)
		_, addr, err := ct.Inspect(ctx)
		require.NoError(t, err)
		c.Nodes = append(c.Nodes, db.Node{Name: node, Addr: addr})
		c.Remotes[node] = r
	}
	return c
}

// chaosRules are the rules of chaos's chains in r's network namespace,
// as `iptables -S` prints them.
func chaosRules(t *testing.T, ctx context.Context, r control.Remote) string {
	t.Helper()
	out, err := control.Output(ctx, control.NetSide(r), "iptables -w -S")
	require.NoError(t, err)
	var rules []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "CHAOS") {
			rules = append(rules, l)
		}
	}
	return strings.Join(rules, "\n")
}

// A container that is the node, killed and started again while a
// partition and a targeted cut are in force, comes back in a new network
// namespace with their rules put back as they were; once they are healed,
// a restart brings none back; a partition started or stopped while it is
// down acts on it when it is back. Real containers, real iptables.
func TestContainerRestartedUnderNetFaultsGetsThemBack(t *testing.T) {
	requireDockerHere(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := containerCluster(t, ctx, 3)
	p := &Partition{Topologies: []Topology{IsolateOne}}
	_, err := p.Start(ctx, c, netRand(1))
	require.NoError(t, err)
	cut := &netCut{owner: "lease"}
	require.NoError(t, cut.set(ctx, c, grudgeIsolate([]string{"n1", "n2", "n3"}, "n1")))
	n1, r1 := c.Nodes[0], c.Remotes["n1"]
	before := chaosRules(t, ctx, r1)
	require.Contains(t, before, "-N "+hostcmd.PartitionChain)
	require.Contains(t, before, "-N "+hostcmd.TargetChain)

	require.NoError(t, c.DB.Kill(ctx, r1, n1))
	_, err = control.Output(ctx, control.NetSide(r1), "true")
	require.Error(t, err, "the container stopped with its node")
	require.NoError(t, restartNode(ctx, c, r1, n1, 30*time.Second))
	require.Equal(t, before, chaosRules(t, ctx, r1), "the restarted container's namespace has the faults again")

	require.NoError(t, cut.stop(ctx, c))
	_, err = p.Stop(ctx, c)
	require.NoError(t, err)
	require.NoError(t, c.DB.Kill(ctx, r1, n1))
	require.NoError(t, restartNode(ctx, c, r1, n1, 30*time.Second))
	require.Empty(t, chaosRules(t, ctx, r1), "healed faults do not come back")

	// A partition that starts while the container is stopped puts its
	// part there when it starts again; one that stops meanwhile heals
	// nothing there, and leaves nothing to put back.
	require.NoError(t, c.DB.Kill(ctx, r1, n1))
	_, err = p.Start(ctx, c, netRand(2))
	require.NoError(t, err)
	require.NoError(t, restartNode(ctx, c, r1, n1, 30*time.Second))
	require.Contains(t, chaosRules(t, ctx, r1), "-A "+hostcmd.PartitionChain+" -s ")
	require.NoError(t, c.DB.Kill(ctx, r1, n1))
	_, err = p.Stop(ctx, c)
	require.NoError(t, err)
	require.NoError(t, restartNode(ctx, c, r1, n1, 30*time.Second))
	require.Empty(t, chaosRules(t, ctx, r1))
	for _, n := range c.Nodes[1:] {
		require.NotContains(t, chaosRules(t, ctx, c.Remotes[n.Name]), hostcmd.PartitionChain, n.Name)
	}
}
