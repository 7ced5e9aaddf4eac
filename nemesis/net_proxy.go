package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"chaos/control"
	"chaos/db"
	"chaos/faultproxy"
	"chaos/nemesis/hostcmd"
)

// The proxy mechanism of the packet fault: where the kernel has no netem
// and the system no hooks, delay, jitter and the bandwidth cap are done by
// chaos's fault proxy (package faultproxy) on the nodes' hosts. For a
// degraded link A -> B, iptables REDIRECTs (in nat's CHAOS-PROXY chain)
// the connections A's host opens toward B's peer and client ports, and
// those B's host opens toward A's, to the proxy on the same host, which
// shapes the bytes each way by the link that carries them. REDIRECT only
// sees new connections, so the connections already open on those links
// are reset (ss -K) once the rules are in: the nodes reconnect, through
// the proxy. A fault's Stop removes the rules and stops the proxy: the
// proxied connections close, and the nodes reconnect directly.

// FaultProxy says where the fault proxy runs on the nodes' hosts, as
// `chaos fault-proxy serve`. Its files are the host's, not a node's: nodes
// that share a host (local mode) share its proxy, each setting its own
// links.
type FaultProxy struct {
	// HostBinary is the chaos binary the hosts run the proxy with.
	HostBinary
	// Dir is the proxy's directory on each host: its pidfile, start
	// record and log (fault-proxy.pid, .started, .log) and its control
	// socket.
	Dir string
}

// NewFaultProxy places the fault proxy in layout: this executable, copied
// to BinDir/chaos-fault-proxy when upload, its files in
// DataDir/fault-proxy.
func NewFaultProxy(layout db.Layout, upload bool) *FaultProxy {
	return &FaultProxy{HostBinary: newHostBinary(layout, upload, "chaos-fault-proxy"), Dir: path.Join(layout.DataDir, "fault-proxy")}
}

// daemon is the proxy's process on a host. Its directory, which holds
// the control socket, is made mode 0700 (the proxy narrows one found
// wider, and refuses one another user owns).
func (fp *FaultProxy) daemon() db.Daemon {
	return db.Daemon{Dir: fp.Dir, Name: "fault-proxy", Private: true}
}

// missing says why fp cannot run the proxy, or nil: it is placed and its
// binary is an executable file on this machine.
func (fp *FaultProxy) missing() error {
	if fp == nil {
		return errors.New("no place for it on the hosts (Cluster.FaultProxy is nil)")
	}
	return fp.HostBinary.missing()
}

// errProxyReorder is why the proxy does not reorder: a byte stream cannot.
var errProxyReorder = errors.New("a TCP stream delivers its bytes in order")

// proxyMissing says why the proxy cannot serve links whose ends are the
// nodes ends, or nil: it needs fp, and on every end's host iptables with
// nat REDIRECT and ss. Connections are intercepted on the host that opens
// them, which either end may be.
func proxyMissing(fp *FaultProxy, caps map[string]NetCaps, ends []string) error {
	if err := fp.missing(); err != nil {
		return err
	}
	for _, pick := range []func(NetCaps) error{
		func(nc NetCaps) error { return nc.IPTables },
		func(nc NetCaps) error { return nc.Redirect },
		func(nc NetCaps) error { return nc.SS },
	} {
		if err := netFirstErr(ends, caps, pick); err != nil {
			return err
		}
	}
	return nil
}

// proxyState is what a Packet remembers of the proxies it used: the
// hosts where the binary was checked or copied. Its user serializes the
// calls.
type proxyState struct{ installs }

// install makes sure fp's binary is on r's host (node's).
func (ps *proxyState) install(ctx context.Context, fp *FaultProxy, r control.Remote, node string) error {
	if err := ps.installs.install(ctx, &fp.HostBinary, r, node); err != nil {
		return fmt.Errorf("fault proxy: %w", err)
	}
	return nil
}

// start runs the proxy on r's host unless it runs already, and sets
// owner's links in it; it returns the port the proxy takes redirected
// connections on.
func (ps *proxyState) start(ctx context.Context, fp *FaultProxy, r control.Remote, owner string, links []faultproxy.Link) (int, error) {
	if err := ps.install(ctx, fp, r, owner); err != nil {
		return 0, err
	}
	d := fp.daemon()
	proc, err := d.Process(ctx, r)
	if err != nil {
		return 0, fmt.Errorf("fault proxy: %w", err)
	}
	if proc.Pid == 0 {
		if err := d.Start(ctx, r, []string{fp.Path, "fault-proxy", "serve", "--dir", fp.Dir}); err != nil {
			return 0, fmt.Errorf("fault proxy: start: %w", err)
		}
	}
	body, err := json.Marshal(links)
	if err != nil {
		return 0, err
	}
	cmd := fmt.Sprintf("%s fault-proxy set --dir %s --owner %s %s", control.ShellQuote(fp.Path),
		control.ShellQuote(fp.Dir), control.ShellQuote(owner), control.ShellQuote(string(body)))
	out, err := control.Output(ctx, r, cmd)
	if err != nil {
		return 0, fmt.Errorf("fault proxy: set links: %w", err)
	}
	var st faultproxy.Status
	if err := json.Unmarshal(out, &st); err != nil || st.Port <= 0 || st.Port > 65535 {
		return 0, fmt.Errorf("fault proxy: set links: unexpected answer %q", strings.TrimSpace(string(out)))
	}
	return st.Port, nil
}

// proxyBehavior is the part of b the plan mech gives the proxy.
func proxyBehavior(b PacketBehavior, mech map[string]string) faultproxy.Behavior {
	var fb faultproxy.Behavior
	if mech[PartDelay] == MechProxy {
		fb.DelayMS, fb.JitterMS = b.DelayMS, b.JitterMS
	}
	if mech[PartRate] == MechProxy {
		fb.RateKbit = b.RateKbit
	}
	return fb
}

// proxyPeers are the nodes linked to node in either direction, in the
// order of c.Nodes, and the proxy's links for the connections node opens
// toward them: node -> peer and peer -> node, where degraded, with fb.
func proxyPeers(c *Cluster, node string, links PacketLinks, fb faultproxy.Behavior, ips map[string]netip.Addr) ([]db.Node, []faultproxy.Link) {
	var peers []db.Node
	var out []faultproxy.Link
	for _, m := range c.Nodes {
		to, from := packetLinked(links, node, m.Name), packetLinked(links, m.Name, node)
		if !to && !from {
			continue
		}
		peers = append(peers, m)
		if to {
			out = append(out, faultproxy.Link{From: ips[node], To: ips[m.Name], Behavior: fb})
		}
		if from {
			out = append(out, faultproxy.Link{From: ips[m.Name], To: ips[node], Behavior: fb})
		}
	}
	return peers, out
}

// packetLinked reports whether links degrade from -> to.
func packetLinked(links PacketLinks, from, to string) bool {
	for _, t := range links[from] {
		if t == to {
			return true
		}
	}
	return false
}

// applyProxy sends the connections on links through the fault proxy,
// with the parts mech gives it: on the host of each node at an end of a
// link, one node after the other (nodes of one host share its proxy and
// its chain), the proxy is started (or kept) with the node's links, the
// REDIRECT rules are added, and the connections they would have taken are
// reset; applied gets each node's part.
func (p *Packet) applyProxy(ctx context.Context, c *Cluster, b PacketBehavior, links PacketLinks, mech map[string]string, ips map[string]netip.Addr, applied map[string][]nodeRule) error {
	fb := proxyBehavior(b, mech)
	for _, n := range c.Nodes {
		peers, own := proxyPeers(c, n.Name, links, fb, ips)
		if len(own) == 0 {
			continue
		}
		r, err := nodeRemote(c, n)
		if err != nil {
			return fmt.Errorf("packet: %w", err)
		}
		rule := p.proxyRule(c, n.Name, peers, own, ips)
		if err := applyNow(ctx, r, rule); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		applied[n.Name] = append(applied[n.Name], rule)
	}
	return nil
}

// proxyRule is the nodeRule of node's part of the proxied links own,
// toward peers: its host's proxy started (or kept) with them, the
// REDIRECT rules added, the connections they would have taken reset.
func (p *Packet) proxyRule(c *Cluster, node string, peers []db.Node, own []faultproxy.Link, ips map[string]netip.Addr) nodeRule {
	return func(ctx context.Context, r control.Remote) error {
		port, err := p.proxy.start(ctx, c.FaultProxy, r, node, own)
		if err != nil {
			return fmt.Errorf("packet: %w", err)
		}
		cmds := hostcmd.ProxyChain().EnsureCmds()
		for _, m := range peers {
			ports := proxyPorts(c, m)
			cmds = append(cmds, hostcmd.ProxyRedirectCmds(ips[node], ips[m.Name], ports, port)...)
			cmds = append(cmds, hostcmd.ProxyResetCmd(ips[node], ips[m.Name], ports))
		}
		return hostcmd.Run(ctx, control.NetSide(r), "packet", cmds)
	}
}

// proxyHeal removes the REDIRECT chain from r's host and stops its proxy,
// when fp places one: the proxied connections close, and the nodes
// reconnect directly. Rules first, so that no connection is redirected to
// a proxy that is gone.
func proxyHeal(ctx context.Context, r control.Remote, fp *FaultProxy) error {
	if err := hostcmd.HealChains(ctx, control.NetSide(r), hostcmd.ProxyChain()); err != nil {
		return err
	}
	if fp == nil {
		return nil
	}
	if err := fp.daemon().Stop(ctx, r); err != nil {
		return fmt.Errorf("stop the fault proxy: %w", err)
	}
	return nil
}

// proxyLeftovers names the fault proxy's process on r's host, when fp
// places one and it runs ("fault proxy process 4242, running").
func proxyLeftovers(ctx context.Context, r control.Remote, fp *FaultProxy) ([]string, error) {
	if fp == nil {
		return nil, nil
	}
	proc, err := fp.daemon().Process(ctx, r)
	switch {
	case err != nil:
		return nil, fmt.Errorf("fault proxy: %w", err)
	case proc.Pid == 0:
		return nil, nil
	case proc.Stopped:
		return []string{fmt.Sprintf("fault proxy process %d, paused", proc.Pid)}, nil
	}
	return []string{fmt.Sprintf("fault proxy process %d, running", proc.Pid)}, nil
}

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
