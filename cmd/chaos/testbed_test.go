package main

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"chaos/testbed"
)

func TestTestbedArguments(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"testbed", "up", "--hosts", "0", "--dir", dir}, exitUsage, "--hosts 0: want 1 to 50"},
		{[]string{"testbed", "up", "--hosts", "51", "--dir", dir}, exitUsage, "--hosts 51: want 1 to 50"},
		{[]string{"testbed", "up", "--subnet", "10.77.0.5/24", "--dir", dir}, exitUsage, "give the network address, 10.77.0.0/24"},
		{[]string{"testbed", "up", "extra"}, exitUsage, `unknown command "extra"`},
		{[]string{"testbed", "sideways"}, exitUsage, `unknown command "sideways"`},
		{[]string{"testbed"}, exitUsage, "needs a subcommand: up, down or status"},
		{[]string{"testbed", "status", "--dir", dir}, exitSetup, "no testbed is up in " + dir},
		{[]string{"testbed", "up", "--image", "busybox", "--dir", dir}, exitUsage, "--image needs --docker"},
		{[]string{"testbed", "up", "--docker", "--subnet", "10.77.0.0/24", "--dir", dir}, exitUsage, "with --docker, Docker picks the network's subnet"},
		{[]string{"testbed", "up", "--docker", "--hosts", "0", "--dir", dir}, exitUsage, "--hosts 0: want 1 to 50"},
		{[]string{"test-all", "merge", dir}, exitUsage, "holds no campaign.json: give each shard's campaign directory"},
	}
	for _, c := range cases {
		code, _, errOut := execute(t, c.args...)
		assert.Equal(t, c.code, code, "chaos %v: %s", c.args, errOut)
		assert.Contains(t, errOut, c.want, "chaos %v", c.args)
	}
	assert.NoFileExists(t, filepath.Join(dir, testbed.StateFile))
}

func TestTestbedDownWithoutTestbedSucceeds(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := execute(t, "testbed", "down", "--dir", dir)
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "no testbed in "+dir+": nothing to remove\n", out)
}

// Bounds of the end-to-end test's polling.
const (
	testbedPollDeadline = 15 * time.Second
	testbedPollInterval = 50 * time.Millisecond
)

// needTestbedMachine skips the test unless the machine can run a testbed
// (root, Linux, the requirements installed); under CI=true it fails instead,
// so CI cannot pass without running it.
func needTestbedMachine(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: makes network namespaces and runs sshd")
	}
	var reason string
	if err := testbed.Platform(); err != nil {
		reason = err.Error()
	} else if os.Geteuid() != 0 {
		reason = "needs root"
	} else if missing := testbed.Missing(testbed.NewSystem()); len(missing) > 0 {
		reason = (&testbed.MissingError{Missing: missing}).Error()
	}
	if reason == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chaos testbed end-to-end test: " + reason)
	}
	t.Skip("chaos testbed end-to-end test: " + reason)
}

func TestTestbedDownLeavesNoNamespaceLinkOrProcess(t *testing.T) {
	needTestbedMachine(t)
	dir := filepath.Join(t.TempDir(), "tb")
	t.Cleanup(func() {
		if _, err := testbed.LoadState(dir); err == nil {
			_, err := testbed.Down(context.Background(), testbed.NewSystem(), dir)
			assert.NoError(t, err, "cleanup")
		}
	})

	code, out, errOut := execute(t, "testbed", "up", "--hosts", "3", "--dir", dir, "--subnet", "10.77.250.0/24")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "chaos run --nodes-file "+filepath.Join(dir, "nodes"))
	st, err := testbed.LoadState(dir)
	require.NoError(t, err)

	addrs := readNodesFile(t, filepath.Join(dir, testbed.NodesFile))
	require.Equal(t, []string{"10.77.250.11", "10.77.250.12", "10.77.250.13"}, addrs)
	clients := dialTestbedHosts(t, dir, addrs)
	for i, c := range clients {
		name := "n" + strconv.Itoa(i+1)
		assert.Equal(t, name, strings.TrimSpace(sshRun(t, c, "hostname")))
		assert.Contains(t, sshRun(t, c, "cat /proc/1/cmdline"), "sshd", "%s's PID 1 is its sshd: a PID namespace of its own", name)
	}
	assertPrivateOptChaos(t, dir, clients)
	assertHostsReachEachOther(t, clients[0], addrs[1])

	code, out, errOut = execute(t, "testbed", "status", "--dir", dir)
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, 3, strings.Count(out, "SSH-2.0-"), out)

	code, _, errOut = execute(t, "testbed", "down", "--dir", dir)
	require.Equal(t, exitOK, code, errOut)
	assertNothingOfTestbedLeft(t, st)
	assert.NoDirExists(t, dir)

	code, _, _ = execute(t, "testbed", "status", "--dir", dir)
	assert.Equal(t, exitSetup, code, "status after down")
	code, _, errOut = execute(t, "testbed", "down", "--dir", dir)
	assert.Equal(t, exitOK, code, "down twice: %s", errOut)
}

// dialTestbedHosts logs in to every address as root with the testbed's key,
// checking host keys against its known_hosts, as chaos run does.
func dialTestbedHosts(t *testing.T, dir string, addrs []string) []*ssh.Client {
	t.Helper()
	key, err := os.ReadFile(filepath.Join(dir, testbed.KeyFile))
	require.NoError(t, err)
	signer, err := ssh.ParsePrivateKey(key)
	require.NoError(t, err)
	hostKeys, err := knownhosts.New(filepath.Join(dir, testbed.KnownHostsFile))
	require.NoError(t, err)
	config := &ssh.ClientConfig{
		User:            "root",
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: hostKeys,
		Timeout:         5 * time.Second,
	}
	var clients []*ssh.Client
	for _, addr := range addrs {
		assertSSHBanner(t, net.JoinHostPort(addr, "22"))
		c, err := ssh.Dial("tcp", net.JoinHostPort(addr, "22"), config)
		require.NoError(t, err, "ssh root@%s", addr)
		t.Cleanup(func() { c.Close() })
		clients = append(clients, c)
	}
	return clients
}

// assertSSHBanner checks that addr answers with an SSH identification line.
func assertSSHBanner(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	line, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(line, "SSH-2.0-"), "banner of %s: %q", addr, line)
}

// sshRun runs a shell command on a host and returns its output.
func sshRun(t *testing.T, c *ssh.Client, command string) string {
	t.Helper()
	s, err := c.NewSession()
	require.NoError(t, err)
	defer s.Close()
	out, err := s.CombinedOutput(command)
	require.NoError(t, err, "%s: %s", command, out)
	return string(out)
}

// assertPrivateOptChaos writes a file into n1's /opt/chaos and checks that
// neither n2 nor this machine sees it there.
func assertPrivateOptChaos(t *testing.T, dir string, clients []*ssh.Client) {
	t.Helper()
	probe := "probe-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	sshRun(t, clients[0], "echo n1 > /opt/chaos/"+probe)
	assert.Equal(t, "n1\n", sshRun(t, clients[0], "cat /opt/chaos/"+probe))
	assert.Equal(t, "absent\n", sshRun(t, clients[1], "test -e /opt/chaos/"+probe+" || echo absent"))
	assert.NoFileExists(t, filepath.Join("/opt/chaos", probe))
	assert.FileExists(t, filepath.Join(dir, "hosts", "n1", "opt-chaos", probe), "where n1's /opt/chaos lives")
}

// assertHostsReachEachOther has from's sshd open a connection to to:22 from
// inside from's network namespace (SSH port forwarding) and read the banner.
func assertHostsReachEachOther(t *testing.T, from *ssh.Client, to string) {
	t.Helper()
	conn, err := from.Dial("tcp", net.JoinHostPort(to, "22"))
	require.NoError(t, err, "n1 to %s", to)
	defer conn.Close()
	line, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(line, "SSH-2.0-"), "n1 reads %s's banner: %q", to, line)
}

// assertNothingOfTestbedLeft checks that no network namespace, link or process of
// the testbed remains, waiting a bounded time for processes to be reaped.
func assertNothingOfTestbedLeft(t *testing.T, st testbed.State) {
	t.Helper()
	netns, err := exec.Command("ip", "netns", "list").CombinedOutput()
	require.NoError(t, err, "%s", netns)
	assert.NotContains(t, string(netns), st.Prefix)
	links, err := exec.Command("ip", "-o", "link", "show").CombinedOutput()
	require.NoError(t, err, "%s", links)
	assert.NotContains(t, string(links), st.Prefix)
	rules, err := exec.Command("iptables", "-w", "5", "-S").CombinedOutput()
	require.NoError(t, err, "%s", rules)
	assert.NotContains(t, string(rules), st.Prefix)
	for _, h := range st.Hosts {
		assert.NoFileExists(t, "/run/netns/"+h.Netns)
		assert.True(t, pidGone(h.Pid), "%s's sshd, pid %d, remains", h.Name, h.Pid)
	}
	assert.Empty(t, processesNaming("/run/"+st.Prefix+"/"), "processes of the testbed's hosts")
}

// pidGone waits, bounded, until no process has pid.
func pidGone(pid int) bool {
	deadline := time.Now().Add(testbedPollDeadline)
	for {
		_, err := os.Stat("/proc/" + strconv.Itoa(pid))
		if errors.Is(err, fs.ErrNotExist) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(testbedPollInterval)
	}
}

// processesNaming lists the pids of processes whose command line contains s.
func processesNaming(s string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), s) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func readNodesFile(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Fields(string(b))
}
