package dockerbed

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/testbed"
)

// fakeEngine records the docker commands it is given and fails the first
// one that contains failOn.
type fakeEngine struct {
	cmds   []string
	failOn string
}

func (f *fakeEngine) Docker(_ context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	line := strings.Join(args, " ")
	f.cmds = append(f.cmds, line)
	if stdin != nil {
		_, _ = io.Copy(io.Discard, stdin)
	}
	if f.failOn != "" && strings.Contains(line, f.failOn) {
		f.failOn = ""
		return nil, errors.New("docker " + args[0] + ": canned failure")
	}
	return nil, nil
}

// transcript is f's commands with the testbed's prefix replaced by $P.
func (f *fakeEngine) transcript(prefix string) string {
	return strings.ReplaceAll(strings.Join(f.cmds, "\n"), prefix, "$P")
}

func TestUpMakesNetworkAndContainersAndDownRemovesThem(t *testing.T) {
	dir := t.TempDir()
	e := &fakeEngine{}
	st, err := Up(context.Background(), e, Config{Dir: dir, Hosts: 2, Image: "mine:1"})
	require.NoError(t, err)
	caps := "--init --restart no --cap-add NET_ADMIN --cap-add SYS_ADMIN --cap-add SYS_PTRACE --device /dev/fuse mine:1 sleep 2147483647"
	require.Equal(t, "network create --driver bridge --label chaos.testbed=$P $P-net\n"+
		"run -d --name $P-n1 --hostname n1 --network $P-net --label chaos.testbed=$P "+caps+"\n"+
		"run -d --name $P-n2 --hostname n2 --network $P-net --label chaos.testbed=$P "+caps, e.transcript(st.Prefix))
	nodes, err := os.ReadFile(filepath.Join(dir, testbed.NodesFile))
	require.NoError(t, err)
	require.Contains(t, string(nodes), "\ndocker:"+st.Prefix+"-n1\ndocker:"+st.Prefix+"-n2\n")

	_, err = Up(context.Background(), e, Config{Dir: dir, Hosts: 2})
	require.ErrorContains(t, err, "a testbed is already up in")

	e.cmds = nil
	_, err = Down(context.Background(), e, dir)
	require.NoError(t, err)
	require.Equal(t, "ps -a --filter label=chaos.testbed=$P --format {{.Names}}\n"+
		"rm -f --volumes $P-n1 $P-n2\nnetwork rm $P-net", e.transcript(st.Prefix), "a given image is the user's: kept")
	require.NoFileExists(t, filepath.Join(dir, StateFile))
	require.NoFileExists(t, filepath.Join(dir, testbed.NodesFile))
	_, err = Down(context.Background(), e, dir)
	require.ErrorIs(t, err, testbed.ErrNotUp)
}

// A failure half-way removes what was made, the image Up built included,
// and leaves no state behind.
func TestUpRollsBackAFailure(t *testing.T) {
	dir := t.TempDir()
	e := &fakeEngine{failOn: "--name " + testbed.PrefixFor(dir) + "-n2"}
	_, err := Up(context.Background(), e, Config{Dir: dir, Hosts: 3})
	require.ErrorContains(t, err, "start container "+testbed.PrefixFor(dir)+"-n2: docker run: canned failure")
	last := e.cmds[len(e.cmds)-3:]
	require.Equal(t, []string{"rm -f --volumes $P-n1 $P-n2 $P-n3", "network rm $P-net", "image rm -f $P-image:default"},
		strings.Split(strings.ReplaceAll(strings.Join(last, "\n"), testbed.PrefixFor(dir), "$P"), "\n"))
	require.NoFileExists(t, filepath.Join(dir, StateFile))
}

func TestUpRefusesABadSize(t *testing.T) {
	for _, n := range []int{0, MaxHosts + 1} {
		_, err := Up(context.Background(), &fakeEngine{}, Config{Dir: t.TempDir(), Hosts: n})
		require.ErrorContains(t, err, "want 1 to 50")
	}
}
