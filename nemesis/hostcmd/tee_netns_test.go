package hostcmd

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/testbed/bedtest"
)

// Duplication through TEE is duplication on the wire, visible only as TCP
// allows: with the rules the packet family installs (every packet from the
// node to the peer cloned), a 2 MB stream arrives whole and in order, the
// rule cloned packets, and the kernel counted the duplicate segments it
// received (the receiver reports them back as D-SACKs).
func TestDuplicatedPacketsAreVisibleOnlyAsTCPAllows(t *testing.T) {
	if !bedtest.InOwnNetNS(t) {
		return
	}
	node, peer := netip.MustParseAddr("10.98.0.1"), netip.MustParseAddr("10.98.0.2")
	cmds := []string{"ip link set lo up", "ip addr add 10.98.0.1/32 dev lo", "ip addr add 10.98.0.2/32 dev lo"}
	cmds = append(cmds, TeeChain().EnsureCmds()...)
	for _, c := range append(cmds, TeeCmd(node, peer, 1)) {
		out, err := exec.Command("sh", "-c", c).CombinedOutput()
		require.NoError(t, err, "%s: %s", c, out)
	}
	dsacks := tcpExtCounter(t, "TCPDSACKRecv")

	ln, err := net.Listen("tcp", peer.String()+":0")
	require.NoError(t, err)
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	sent := make([]byte, 2<<20)
	_, err = rand.Read(sent)
	require.NoError(t, err)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: node.AsSlice()}}
	c, err := d.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	_, err = c.Write(sent)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	assert.True(t, bytes.Equal(sent, <-got), "the stream arrives whole and in order")

	rules, err := exec.Command("iptables", "-w", "-t", "mangle", "-L", teeChainName, "-v", "-n", "-x").CombinedOutput()
	require.NoError(t, err)
	assert.Greater(t, teeRulePackets(t, string(rules)), 10, "the rule cloned packets:\n%s", rules)
	assert.Greater(t, tcpExtCounter(t, "TCPDSACKRecv"), dsacks, "duplicate segments arrived and were acknowledged as such")
}

// teeRulePackets is the packet count of the TEE rule in `iptables -L -v -x`
// output.
func teeRulePackets(t *testing.T, listing string) int {
	for line := range strings.SplitSeq(listing, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[2] == "TEE" {
			n, err := strconv.Atoi(f[0])
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no TEE rule in:\n%s", listing)
	return 0
}

// tcpExtCounter reads one TcpExt counter of this namespace from
// /proc/net/netstat (a line of names followed by a line of values).
func tcpExtCounter(t *testing.T, name string) int {
	b, err := os.ReadFile("/proc/net/netstat")
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || names[0] != "TcpExt:" {
			continue
		}
		for j, n := range names {
			if n == name && j < len(values) {
				v, err := strconv.Atoi(values[j])
				require.NoError(t, err)
				return v
			}
		}
	}
	t.Fatalf("no TcpExt %s in /proc/net/netstat", name)
	return 0
}
