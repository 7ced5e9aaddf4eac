package faultproxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/testbed/bedtest"
)

// The proxy behind a real iptables REDIRECT, in a network namespace of the
// test's own (unshare --net: nothing of the machine's is touched, and the
// rules die with the namespace). The test binary runs itself there.
func TestRedirectInNetworkNamespace(t *testing.T) {
	if !bedtest.InOwnNetNS(t) {
		return
	}
	var (
		node = netip.MustParseAddr("10.99.0.1")
		peer = netip.MustParseAddr("10.99.0.2")
	)
	for _, cmd := range []string{"ip link set lo up", "ip addr add 10.99.0.1/32 dev lo", "ip addr add 10.99.0.2/32 dev lo"} {
		netnsRun(t, cmd)
	}
	peerPort, _ := echoServer(t, peer.String()+":0")
	otherPort, _ := echoServer(t, peer.String()+":0")

	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Config{Dir: dir, Log: slog.New(slog.NewTextHandler(os.Stderr, nil))}) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	st, err := SetLinks(ctx, ControlSocket(dir), "n1", []Link{{From: node, To: peer, Behavior: Behavior{DelayMS: 200}}})
	require.NoError(t, err)
	netnsRun(t, fmt.Sprintf("iptables -w -t nat -A OUTPUT -s %s/32 -d %s/32 -p tcp --dport %d -m mark ! --mark %#x -j REDIRECT --to-ports %d",
		node, peer, peerPort.Port(), Mark, st.Port))

	t.Run("original destination", func(t *testing.T) { netnsOriginalDst(t, node, peerPort) })
	t.Run("delayed through the proxy", func(t *testing.T) {
		took, local := netnsRoundTrip(t, node, peerPort)
		assert.GreaterOrEqual(t, took, 200*time.Millisecond)
		assert.Less(t, took, 5*time.Second)
		assert.Equal(t, node, local, "the peer must see the node's address")
	})
	t.Run("other ports untouched", func(t *testing.T) {
		took, _ := netnsRoundTrip(t, node, otherPort)
		assert.Less(t, took, 200*time.Millisecond)
	})
}

// netnsRun runs a shell command, failing the test when it fails.
func netnsRun(t *testing.T, cmd string) {
	t.Helper()
	out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
	require.NoError(t, err, "%s: %s", cmd, out)
}

// netnsRoundTrip sends a byte from node to dst and waits for its echo,
// and returns how long that took and the address the peer saw.
func netnsRoundTrip(t *testing.T, node netip.Addr, dst netip.AddrPort) (time.Duration, netip.Addr) {
	t.Helper()
	d := net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(node, 0)), Timeout: 5 * time.Second}
	c, err := d.Dial("tcp4", dst.String())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	start := time.Now()
	_, err = c.Write([]byte("x"))
	require.NoError(t, err)
	_, err = io.ReadFull(c, make([]byte, 1))
	require.NoError(t, err)
	took := time.Since(start)
	t.Logf("round trip to %v: %v", dst, took)
	return took, netnsSeenFrom(t, dst)
}

// netnsSeenFrom is the source address of the newest connection the echo
// server at dst holds, as `ss` lists it on the server's side.
func netnsSeenFrom(t *testing.T, dst netip.AddrPort) netip.Addr {
	t.Helper()
	out, err := exec.Command("ss", "-Htn", "state", "established", "src", dst.String()).CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Fields(string(out))
	require.GreaterOrEqual(t, len(lines), 4, "ss: %s", out)
	ap, err := netip.ParseAddrPort(lines[3])
	require.NoError(t, err)
	return ap.Addr()
}

// netnsOriginalDst accepts, on a listener of its own that the rule
// redirects to, a connection toward dst, and checks that OriginalDst reads
// dst from it.
func netnsOriginalDst(t *testing.T, node netip.Addr, dst netip.AddrPort) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	rule := fmt.Sprintf("-s %s/32 -d %s/32 -p tcp --dport %d -j REDIRECT --to-ports %d", node, dst.Addr(), dst.Port(), port)
	netnsRun(t, "iptables -w -t nat -I OUTPUT 1 "+rule)
	defer netnsRun(t, "iptables -w -t nat -D OUTPUT "+rule)
	d := net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(node, 0)), Timeout: 5 * time.Second}
	c, err := d.Dial("tcp4", dst.String())
	require.NoError(t, err)
	defer c.Close()
	in, err := ln.Accept()
	require.NoError(t, err)
	defer in.Close()
	got, err := OriginalDst(in.(*net.TCPConn))
	require.NoError(t, err)
	assert.Equal(t, dst, got)
}
