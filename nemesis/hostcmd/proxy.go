package hostcmd

import (
	"fmt"
	"net/netip"
	"strings"

	"chaos/faultproxy"
)

// proxyChainName is the nat chain of the fault proxy's REDIRECT rules,
// jumped to from nat's OUTPUT: the host's own new connections pass there.
const proxyChainName = "CHAOS-PROXY"

// ProxyChain is the fault proxy's chain (proxyChainName).
func ProxyChain() Chain { return Chain{Table: "nat", From: "OUTPUT", Name: proxyChainName} }

// ProxyRedirectCmds send the connections from opens toward to's ports
// (every TCP port when none) to the proxy's port, in the proxy's chain.
// Packets of the proxy's own connections carry faultproxy.Mark and are
// left alone.
func ProxyRedirectCmds(from, to netip.Addr, ports []uint16, proxyPort int) []string {
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

// ProxyResetCmd resets (ss -K) the TCP connections from opened toward
// to's ports (any port when none) that are not the proxy's own: REDIRECT
// sees only new connections, so the nodes must reconnect to go through
// the proxy.
func ProxyResetCmd(from, to netip.Addr, ports []uint16) string {
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
