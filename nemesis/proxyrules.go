package nemesis

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"chaos/db"
	"chaos/faultproxy"
)

// proxyChainName is the nat chain of the fault proxy's REDIRECT rules,
// jumped to from nat's OUTPUT: the host's own new connections pass there.
const proxyChainName = "CHAOS-PROXY"

// proxyChain is the fault proxy's chain (proxyChainName).
func proxyChain() iptChain { return iptChain{table: "nat", from: "OUTPUT", name: proxyChainName} }

// proxyPorts are the ports of n the proxy intercepts connections toward:
// its peer port and its client port, in that order, for a system that
// names its peer address (c.Peers, the Peers capability); none, meaning
// every TCP port, for one that does not (a described system without
// ports.peer), whose peers may talk on any port.
func proxyPorts(c *Cluster, n db.Node) []uint16 {
	if c.Peers == nil {
		return nil
	}
	peer, ok := c.Peers.PeerAddr(n)
	if !ok {
		return nil
	}
	var ports []uint16
	for _, addr := range []string{peer, c.DB.ClientAddr(n)} {
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			return nil
		}
		port, err := strconv.ParseUint(p, 10, 16)
		if err != nil || port == 0 {
			return nil
		}
		if !slices.Contains(ports, uint16(port)) {
			ports = append(ports, uint16(port))
		}
	}
	return ports
}

// proxyRedirectCmds send the connections from opens toward to's ports
// (every TCP port when none) to the proxy's port, in the proxy's chain.
// Packets of the proxy's own connections carry faultproxy.Mark and are
// left alone.
func proxyRedirectCmds(from, to netip.Addr, ports []uint16, proxyPort int) []string {
	rule := func(dport string) string {
		return fmt.Sprintf("iptables -w -t nat -A %s -s %s/32 -d %s/32 -p tcp%s -m mark ! --mark %#x -j REDIRECT --to-ports %d",
			proxyChainName, from, to, dport, faultproxy.Mark, proxyPort)
	}
	if len(ports) == 0 {
		return []string{rule("")}
	}
	cmds := make([]string, len(ports))
	for i, p := range ports {
		cmds[i] = rule(fmt.Sprintf(" --dport %d", p))
	}
	return cmds
}

// proxyResetCmd resets (ss -K) the TCP connections from opened toward
// to's ports (any port when none) that are not the proxy's own: REDIRECT
// sees only new connections, so the nodes must reconnect to go through
// the proxy.
func proxyResetCmd(from, to netip.Addr, ports []uint16) string {
	filter := fmt.Sprintf("fwmark != %#x/0xffffffff", faultproxy.Mark)
	if len(ports) > 0 {
		dports := make([]string, len(ports))
		for i, p := range ports {
			dports[i] = fmt.Sprintf("dport = :%d", p)
		}
		filter = "( " + strings.Join(dports, " or ") + " ) and " + filter
	}
	return fmt.Sprintf("ss -K -tn src %s dst %s '%s' >/dev/null", from, to, filter)
}
