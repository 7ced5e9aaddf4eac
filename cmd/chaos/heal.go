package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"chaos/campaign"
	"chaos/control"
	"chaos/db"
	"chaos/nemesis"
)

// healOptions are the flags of `chaos heal`.
type healOptions struct {
	nodes, nodesFile string
	user, keyFile    string
	password         string
	sshPort          int
	strictHostKeys   bool
	knownHosts       string
	db               string
	dataDir          string
	timeout          time.Duration
}

func newHealCmd() *cobra.Command {
	var o healOptions
	cmd := &cobra.Command{
		Use:   "heal",
		Short: "Remove every fault chaos can leave on nodes (iptables, tc, SIGSTOP, clock)",
		Long: `heal removes every fault chaos can leave behind on the nodes, whether or not
this process injected it: for use after a controller crash or an interrupt.
On every host it sends SIGCONT to the node's daemon, removes chaos's iptables
chains and tc qdiscs, clears chaos-node's fault hooks (clock, drops, packet
faults) and, where chaos stopped NTP to set the system clock, sets the clock
and starts NTP again. Killed nodes stay down: the next run redeploys them.

Without --nodes it heals the five local nodes n1..n5 (127.0.0.11..15).
Hosts are named n1, n2, ... in the order given, as chaos run names them.

Exit status: 0 every host healed, 254 bad arguments, 255 some host could not
be reached or healed (one line each on stderr).`,
		Example: `  chaos heal
  chaos heal --nodes-file testbed/nodes --ssh-private-key testbed/id_ed25519 --known-hosts testbed/known_hosts`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runHeal(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.nodes, "nodes", "", "hosts, comma separated (name or address, optional :port); none: local mode")
	f.StringVar(&o.nodesFile, "nodes-file", "", "file with one host per line (# comments and blank lines skipped)")
	f.StringVar(&o.user, "username", "root", "SSH user (sudo is used when it is not root)")
	f.StringVar(&o.keyFile, "ssh-private-key", "", "SSH private key file (default ~/.ssh/id_ed25519 and id_rsa; the SSH agent is tried too)")
	f.StringVar(&o.password, "password", "", "SSH and sudo password")
	f.IntVar(&o.sshPort, "ssh-port", 22, "SSH port for hosts given without one")
	f.BoolVar(&o.strictHostKeys, "strict-host-key-checking", true, "verify host keys against --known-hosts")
	f.StringVar(&o.knownHosts, "known-hosts", "", "known_hosts file (default ~/.ssh/known_hosts)")
	f.StringVar(&o.db, "db", "chaos-node", "system under test: chaos-node or etcd")
	f.StringVar(&o.dataDir, "data-dir", "", "where the nodes keep their data and pidfiles (default "+db.DefaultLayout().DataDir+", or in local mode "+campaign.LocalDataDir()+")")
	f.DurationVar(&o.timeout, "timeout", 2*time.Minute, "bound on the whole heal")
	return cmd
}

func runHeal(cmd *cobra.Command, o healOptions) error {
	hosts, err := o.validate()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	local := len(hosts) == 0
	nodes := healNodes(hosts)
	c, outcome, err := o.connect(ctx, nodes, hosts)
	if err != nil {
		return err
	}
	defer func() {
		for _, r := range c.Remotes {
			_ = r.Close()
		}
	}()
	c.SharedClock = local
	for _, h := range nemesis.HealEach(ctx, c, healFaults(local)) {
		outcome[h.Node.Name] = h.Err
	}
	return printHeal(cmd.OutOrStdout(), cmd.ErrOrStderr(), nodes, outcome)
}

// validate checks the flags and returns the hosts to heal, none in local
// mode.
func (o healOptions) validate() ([]string, error) {
	if o.db != "chaos-node" && o.db != "etcd" {
		return nil, usageErrorf("--db %q: want chaos-node or etcd", o.db)
	}
	if o.timeout <= 0 {
		return nil, usageErrorf("--timeout %v: want a positive duration such as 2m", o.timeout)
	}
	if o.sshPort < 1 || o.sshPort > 65535 {
		return nil, usageErrorf("--ssh-port %d: want 1 to 65535", o.sshPort)
	}
	if o.nodes != "" && o.nodesFile != "" {
		return nil, usageErrorf("give --nodes or --nodes-file, not both")
	}
	hosts, err := readNodes(o.nodes, o.nodesFile)
	if err != nil {
		return nil, err
	}
	return hosts, noDuplicateHosts(hosts, o.sshPort)
}

// healNodes names the hosts n1, n2, ... in order, as chaos run does; no
// hosts means local mode's five nodes.
func healNodes(hosts []string) []db.Node {
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.11", "127.0.0.12", "127.0.0.13", "127.0.0.14", "127.0.0.15"}
	}
	nodes := make([]db.Node, len(hosts))
	for i, h := range hosts {
		addr := h
		if host, _, err := net.SplitHostPort(h); err == nil {
			addr = host
		}
		nodes[i] = db.Node{Name: fmt.Sprintf("n%d", i+1), Addr: strings.Trim(addr, "[]")}
	}
	return nodes
}

// connect reaches the nodes' hosts, over SSH (hosts, in the nodes' order)
// or locally (no hosts), and builds the cluster of those it reached. The
// outcome holds the dial error of each node it could not reach. Its error
// is a bad SSH configuration (254).
func (o healOptions) connect(ctx context.Context, nodes []db.Node, hosts []string) (*nemesis.Cluster, map[string]error, error) {
	remotes := make([]control.Remote, len(nodes))
	errs := make([]error, len(nodes))
	if len(hosts) == 0 {
		for i, n := range nodes {
			remotes[i] = control.NewLocal(n.Name)
		}
	} else {
		dialer, err := control.NewSSHDialer(o.sshConfig())
		if err != nil {
			return nil, nil, usageErrorf("%v", err)
		}
		var wg sync.WaitGroup
		for i, h := range hosts {
			wg.Go(func() { remotes[i], errs[i] = dialer.Dial(ctx, h) })
		}
		wg.Wait()
	}
	c, outcome := o.cluster(nodes, remotes, errs)
	return c, outcome, nil
}

func (o healOptions) sshConfig() control.SSHConfig {
	cfg := control.SSHConfig{User: o.user, Port: o.sshPort, Password: o.password, Agent: true,
		InsecureIgnoreHostKey: !o.strictHostKeys, KnownHosts: o.knownHosts}
	if o.keyFile != "" {
		cfg.KeyFiles = []string{o.keyFile}
	}
	return cfg
}

// cluster is the nodes whose host was reached, with the system under test
// and its hook addresses, and the dial error of every other node.
func (o healOptions) cluster(nodes []db.Node, remotes []control.Remote, errs []error) (*nemesis.Cluster, map[string]error) {
	layout := db.DefaultLayout()
	switch {
	case o.dataDir != "":
		layout.DataDir = o.dataDir
	case len(o.nodes) == 0 && o.nodesFile == "":
		layout.DataDir = campaign.LocalDataDir()
	}
	c := &nemesis.Cluster{Remotes: map[string]control.Remote{}, HookAddrs: map[string]string{}}
	outcome := map[string]error{}
	for i, n := range nodes {
		if errs[i] != nil {
			outcome[n.Name] = errs[i]
			continue
		}
		c.Nodes = append(c.Nodes, n)
		c.Remotes[n.Name] = remotes[i]
	}
	if o.db == "etcd" {
		c.DB = &db.Etcd{Layout: layout, Nodes: nodes}
		return c, outcome
	}
	d := &db.ChaosNode{Layout: layout, Nodes: nodes}
	c.DB = d
	for _, n := range c.Nodes {
		c.HookAddrs[n.Name] = d.ClientAddr(n)
	}
	return c, outcome
}

// healFaults are every fault family, in heal order: SIGCONT first, so that
// the nodes answer the hooks the others clear. The system clock is reset
// only where a fault of chaos's left NTP off, and never on hosts that
// share this machine's clock.
func healFaults(sharedClock bool) []nemesis.Fault {
	faults := []nemesis.Fault{&nemesis.Pause{}, &nemesis.Partition{}, &nemesis.Packet{},
		&nemesis.Clock{Strategy: nemesis.ClockHook}}
	if !sharedClock {
		faults = append(faults, &nemesis.Clock{Strategy: nemesis.ClockSystem})
	}
	return append(faults, &nemesis.Kill{})
}

// printHeal writes a line per node, in order: "healed" on stdout, or why
// not on stderr. It returns the exit error (255) when some node failed.
func printHeal(out, errOut io.Writer, nodes []db.Node, outcome map[string]error) error {
	failed := 0
	for _, n := range nodes {
		if err := outcome[n.Name]; err != nil {
			failed++
			fmt.Fprintf(errOut, "chaos: heal %s (%s): %s\n", n.Name, n.Addr, strings.ReplaceAll(err.Error(), "\n", "; "))
			continue
		}
		fmt.Fprintf(out, "%s (%s): healed\n", n.Name, n.Addr)
	}
	if failed > 0 {
		return setupError(fmt.Errorf("heal failed on %d of %d hosts", failed, len(nodes)))
	}
	return nil
}
