package testbed

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"chaos/internal/golden"
)

// keyStream is a fixed source of key material, so keys are the same on
// every run.
func keyStream() *bytes.Reader {
	return bytes.NewReader(bytes.Repeat([]byte("chaos testbed keys "), 64))
}

// upFake runs Up for n hosts on fake in a new directory and returns the
// directory and the testbed's state.
func upFake(t *testing.T, fake *fakeSystem, n int) (string, State) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tb")
	st, err := Up(context.Background(), fake, Config{Dir: dir, Hosts: n, Rand: keyStream()})
	require.NoError(t, err)
	return dir, st
}

func TestUpThreeHosts(t *testing.T) {
	fake := newFakeSystem()
	dir, st := upFake(t, fake, 3)
	golden.Equal(t, "testdata/up-3-hosts.txt", fake.transcript(dir, st.Prefix))
	golden.Equal(t, "testdata/host-script.sh", hostScript()+"\n")

	assert.Equal(t, []int{1001, 1002, 1003}, fake.alive())
	assert.Equal(t, map[string]bool{"lo": true, "eth0": true, st.Prefix + "-br": true,
		st.Prefix + "-n1": true, st.Prefix + "-n2": true, st.Prefix + "-n3": true}, fake.links)
	loaded, err := LoadState(dir)
	require.NoError(t, err)
	assert.Equal(t, st, loaded, "the state file holds what Up returned")
	assert.Equal(t, []string{"/opt/chaos", "/var/lib/chaos"}, st.MadeDirs)
	assert.True(t, st.MadeTestbedDir)

	nodes, err := os.ReadFile(filepath.Join(dir, NodesFile))
	require.NoError(t, err)
	assert.Equal(t, "10.77.0.11\n10.77.0.12\n10.77.0.13\n", string(nodes))
	config, err := os.ReadFile(filepath.Join(dir, "hosts", "n1", "sshd_config"))
	require.NoError(t, err)
	golden.Equal(t, "testdata/sshd_config-n1.txt", strings.ReplaceAll(string(config), st.Prefix, "$P"))
	for _, name := range []string{"opt-chaos", "var-lib-chaos", "tmp"} {
		assert.DirExists(t, filepath.Join(dir, "hosts", "n3", name))
	}
	info, err := os.Stat(filepath.Join(dir, "hosts", "n1", "tmp"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeDir|os.ModeSticky|0o777, info.Mode(), "the host's /tmp")
}

func TestUpWritesKeysThatFitTogether(t *testing.T) {
	dir, st := upFake(t, newFakeSystem(), 2)

	info, err := os.Stat(filepath.Join(dir, KeyFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "ssh refuses a private key others can read")
	client := parseKey(t, filepath.Join(dir, KeyFile))
	authorized, err := os.ReadFile(filepath.Join(dir, authorizedKeysFile))
	require.NoError(t, err)
	assert.Equal(t, string(ssh.MarshalAuthorizedKey(client.PublicKey())), string(authorized))

	check, err := knownhosts.New(filepath.Join(dir, KnownHostsFile))
	require.NoError(t, err)
	n1 := parseKey(t, filepath.Join(dir, "hosts", "n1", hostKeyFile)).PublicKey()
	n2 := parseKey(t, filepath.Join(dir, "hosts", "n2", hostKeyFile)).PublicKey()
	addr := func(h Host) net.Addr { return &net.TCPAddr{IP: net.ParseIP(h.Addr), Port: 22} }
	assert.NoError(t, check(st.Hosts[0].Addr+":22", addr(st.Hosts[0]), n1))
	assert.NoError(t, check(st.Hosts[1].Addr+":22", addr(st.Hosts[1]), n2))
	var keyErr *knownhosts.KeyError
	assert.ErrorAs(t, check(st.Hosts[0].Addr+":22", addr(st.Hosts[0]), n2), &keyErr, "n2's key is not n1's")
}

func parseKey(t *testing.T, path string) ssh.Signer {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	signer, err := ssh.ParsePrivateKey(b)
	require.NoError(t, err)
	return signer
}

func TestUpRollsBackWhenAStepFails(t *testing.T) {
	fake := newFakeSystem()
	dir := filepath.Join(t.TempDir(), "tb")
	prefix := PrefixFor(dir)
	fake.failOn = "ip link add " + prefix + "-n2"

	_, err := Up(context.Background(), fake, Config{Dir: dir, Hosts: 3, Rand: keyStream()})
	require.ErrorContains(t, err, "make n2's network")
	assert.NotErrorIs(t, err, ErrConfig)
	golden.Equal(t, "testdata/up-rollback.txt", fake.transcript(dir, prefix))
	assert.Equal(t, map[string]bool{"lo": true, "eth0": true}, fake.links)
	assert.Empty(t, fake.netns)
	assert.NoDirExists(t, dir, "Up made the directory, so the rollback removes it")
}

func TestUpRollsBackWhenSSHDExits(t *testing.T) {
	fake := newFakeSystem()
	fake.sshdExits = true
	dir := filepath.Join(t.TempDir(), "tb")

	_, err := Up(context.Background(), fake, Config{Dir: dir, Hosts: 2, Rand: keyStream()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "n1: sshd exited: the end of "+filepath.Join(dir, "hosts", "n1", "sshd.log")+
		": fake sshd: cannot bind | fake sshd: exiting")
	assert.Equal(t, map[string]bool{"lo": true, "eth0": true}, fake.links)
	assert.Empty(t, fake.netns)
	assert.Empty(t, fake.alive())
	assert.Equal(t, map[string]bool{"/opt": true, "/var": true, "/var/lib": true, "/tmp": true}, fake.dirs)
	assert.NoDirExists(t, dir)
}

func TestUpKeepsADirectoryItDidNotMake(t *testing.T) {
	fake := newFakeSystem()
	fake.failOn = "ip link add"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes"), []byte("mine"), 0o644))

	_, err := Up(context.Background(), fake, Config{Dir: dir, Hosts: 1, Rand: keyStream()})
	require.Error(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "notes", entries[0].Name())
}

// The rule goes in even when nothing filters bridged traffic yet: dockerd,
// started later, sets FORWARD's policy to DROP.
func TestUpAlwaysLetsBridgedTrafficThrough(t *testing.T) {
	fake := newFakeSystem()
	dir, st := upFake(t, fake, 2)
	require.Equal(t, []string{"FORWARD", "-i", st.Bridge, "-o", st.Bridge, "-j", "ACCEPT"}, st.FirewallRule)
	_, err := Down(context.Background(), fake, dir)
	require.NoError(t, err)
	assert.Equal(t, "run iptables -w 5 -I FORWARD -i $P-br -o $P-br -j ACCEPT\n"+
		"run iptables -w 5 -C FORWARD -i $P-br -o $P-br -j ACCEPT\nrun iptables -w 5 -D FORWARD -i $P-br -o $P-br -j ACCEPT\n",
		grepLines(fake.transcript(dir, st.Prefix), "iptables"))
	assert.Empty(t, fake.rules)
}

// grepLines keeps the lines of s that contain word.
func grepLines(s, word string) string {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter([]byte(s), []byte("\n")) {
		if bytes.Contains(line, []byte(word)) {
			out.Write(line)
		}
	}
	return out.String()
}

func TestUpRefusesBadConfigurationBeforeTouchingTheMachine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tb")
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Dir: dir, Hosts: 0}, "--hosts 0: want 1 to 50"},
		{Config{Dir: dir, Hosts: 51}, "--hosts 51: want 1 to 50"},
		{Config{Hosts: 3}, "no testbed directory"},
		{Config{Dir: dir, Hosts: 3, Subnet: "10.77.0.0"}, `--subnet "10.77.0.0": want an IPv4 network`},
		{Config{Dir: dir, Hosts: 3, Subnet: "fd00::/64"}, `want an IPv4 network`},
		{Config{Dir: dir, Hosts: 3, Subnet: "10.77.0.5/24"}, "give the network address, 10.77.0.0/24"},
		{Config{Dir: dir, Hosts: 3, Subnet: "10.77.0.0/29"}, "too small for 3 hosts (they take offsets 11..13): use a /28 or larger"},
		{Config{Dir: dir, Hosts: 50, Subnet: "10.77.0.0/27"}, "use a /26 or larger"},
		{Config{Dir: dir, Hosts: 3, ReadyTimeout: -1}, "ready timeout -1ns is negative"},
	}
	for _, c := range cases {
		fake := newFakeSystem()
		_, err := Up(context.Background(), fake, c.cfg)
		assert.ErrorIs(t, err, ErrConfig, "%+v", c.cfg)
		assert.ErrorContains(t, err, c.want)
		assert.Empty(t, fake.calls)
	}
	assert.NoDirExists(t, dir)
}

func TestConfigAcceptsTheSmallestSubnets(t *testing.T) {
	for _, c := range []Config{
		{Dir: "d", Hosts: 3, Subnet: "10.77.0.0/28"},
		{Dir: "d", Hosts: 50, Subnet: "10.77.0.0/26"},
		{Dir: "d", Hosts: 1},
	} {
		_, err := c.Validate()
		assert.NoError(t, err, "%+v", c)
	}
}

func TestUpRefusesASubnetInUse(t *testing.T) {
	fake := newFakeSystem()
	fake.routes = `[{"dst":"default","gateway":"10.0.0.1","dev":"eth0"},{"dst":"10.77.0.0/16","dev":"wg0"}]`
	dir := filepath.Join(t.TempDir(), "tb")

	_, err := Up(context.Background(), fake, Config{Dir: dir, Hosts: 3})
	assert.ErrorIs(t, err, ErrConfig)
	assert.EqualError(t, err, "--subnet 10.77.0.0/24 overlaps the route to 10.77.0.0/16 on wg0: choose another --subnet")
	assert.Equal(t, []string{"run ip -j -4 route show"}, fake.calls)
	assert.NoDirExists(t, dir)
}

func TestUpRefusesWhenATestbedIsUp(t *testing.T) {
	fake := newFakeSystem()
	dir, _ := upFake(t, fake, 1)
	fake.calls = nil

	_, err := Up(context.Background(), fake, Config{Dir: dir, Hosts: 1})
	assert.ErrorIs(t, err, ErrConfig)
	assert.ErrorContains(t, err, "a testbed is already up in "+dir)
	assert.Empty(t, fake.calls)
}

func TestUpRollsBackWhenInterrupted(t *testing.T) {
	fake := newFakeSystem()
	dir := filepath.Join(t.TempDir(), "tb")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // as an interrupt while Up waits for sshds that never answer

	_, err := Up(ctx, &unreachable{fake}, Config{Dir: dir, Hosts: 2, Rand: keyStream()})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.Empty(t, fake.alive())
	assert.Empty(t, fake.netns)
	assert.NoDirExists(t, dir)
}

// unreachable is a fakeSystem whose sshds never answer.
type unreachable struct{ *fakeSystem }

func (u *unreachable) SSHBanner(ctx context.Context, addr string, _ time.Duration) (string, error) {
	u.record("ssh-banner %s", addr)
	return "", ctx.Err()
}
