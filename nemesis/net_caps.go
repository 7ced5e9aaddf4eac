package nemesis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"chaos/control"
	"chaos/db"
	"chaos/nemesis/hostcmd"
)

// Mechanisms a network fault can use, as op values record them.
const (
	// MechIPTables is the host's packet filter: DROP rules in a chain of
	// chaos's own, and the statistic match for random loss.
	MechIPTables = "iptables"
	// MechNetem is the kernel's network emulator, a tc qdisc on the
	// interface toward the peers.
	MechNetem = "netem"
	// MechHTB is a tc htb class that caps the bandwidth toward the peers.
	MechHTB = "htb"
	// MechHooks is chaos-node's in-process transport faults
	// (--enable-fault-hooks): only the Raft peer traffic of chaos-node.
	MechHooks = "hooks"
	// MechProxy is chaos's fault proxy on the hosts (faultproxy): iptables
	// REDIRECTs the nodes' peer connections to it, and it delays and
	// rate-limits their bytes (see net_proxy.go).
	MechProxy = "proxy"
)

// NetCaps is what one host offers for network faults. Each field is nil
// when the host can do it, or says why not.
type NetCaps struct {
	// IPTables: iptables runs and may change rules (installed, and root).
	IPTables error
	// Statistic: iptables' statistic match (random loss) works in the kernel.
	Statistic error
	// HTB: the htb qdisc, for per-destination classes and bandwidth caps.
	HTB error
	// U32: u32 filters, to send traffic to a peer into its class.
	U32 error
	// Netem: the netem qdisc (delay, loss, duplication, reordering,
	// corruption).
	Netem error
	// Redirect: iptables' nat REDIRECT with a mark match, which sends
	// connections to the fault proxy.
	Redirect error
	// TEE: iptables' TEE target in the mangle table, which duplicates
	// packets on the wire.
	TEE error
	// SS: ss(8) with its mark filter, which resets the connections a
	// fault proxy must take over (ss -K; the kernel needs
	// CONFIG_INET_DIAG_DESTROY).
	SS error
}

// ProbeNet finds out what r's host offers for network faults. It changes
// nothing on the host. A host whose network side is out of reach (a
// container whose Engine is on another machine) offers nothing, each
// capability failing with why. The error is for a probe that could not
// run at all.
func ProbeNet(ctx context.Context, r control.Remote) (NetCaps, error) {
	out, err := control.Output(ctx, r, hostcmd.NetProbeScript)
	if e := (*control.NetOutOfReachError)(nil); errors.As(err, &e) {
		return NetCaps{IPTables: e, Statistic: e, HTB: e, U32: e, Netem: e, Redirect: e, TEE: e, SS: e}, nil
	}
	if err != nil {
		return NetCaps{}, fmt.Errorf("%s: probe network fault support: %w", r.Host(), err)
	}
	return parseNetProbe(string(out))
}

// parseNetProbe reads hostcmd.NetProbeScript's output. A capability the output
// does not mention is unavailable.
func parseNetProbe(out string) (NetCaps, error) {
	found := map[string]error{}
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		name, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch {
		case rest == "ok":
			found[name] = nil
		case strings.HasPrefix(rest, "no "):
			found[name] = errors.New(name + ": " + strings.TrimPrefix(rest, "no "))
		default:
			return NetCaps{}, fmt.Errorf("probe network fault support: unexpected output line %q", line)
		}
	}
	get := func(name string) error {
		if err, ok := found[name]; ok {
			return err
		}
		return errors.New(name + ": not probed")
	}
	return NetCaps{IPTables: get("iptables"), Statistic: get("statistic"), HTB: get("htb"),
		U32: get("u32"), Netem: get("netem"), Redirect: get("redirect"), TEE: get("tee"), SS: get("ss")}, nil
}

// netCapsCache probes each node's host once and remembers the answer; a
// fault keeps one, so Available and every Start agree. Safe for
// concurrent use; the zero value is ready.
type netCapsCache struct {
	mu   sync.Mutex
	caps map[string]NetCaps
}

// get returns the capabilities of every node's host, by node name,
// probing the hosts it has not probed yet, one after the other.
func (cc *netCapsCache) get(ctx context.Context, c *Cluster) (map[string]NetCaps, error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.caps == nil {
		cc.caps = map[string]NetCaps{}
	}
	out := make(map[string]NetCaps, len(c.Nodes))
	for _, n := range c.Nodes {
		if caps, ok := cc.caps[n.Name]; ok {
			out[n.Name] = caps
			continue
		}
		r, err := netRemote(c, n)
		if err != nil {
			return nil, err
		}
		caps, err := ProbeNet(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
		cc.caps[n.Name], out[n.Name] = caps, caps
	}
	return out, nil
}

// netRemote returns the Remote for commands on n's host's network
// (iptables, tc, ip: control.NetSide), or an error naming n.
func netRemote(c *Cluster, n db.Node) (control.Remote, error) {
	if r := c.Remotes[n.Name]; r != nil {
		return control.NetSide(r), nil
	}
	return nil, fmt.Errorf("%s: no remote for the node's host", n.Name)
}

// netFirstErr returns the first of nodes whose capability (chosen by pick)
// is missing, with why, or nil when every node has it.
func netFirstErr(nodes []string, caps map[string]NetCaps, pick func(NetCaps) error) error {
	for _, n := range nodes {
		if err := pick(caps[n]); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	return nil
}

// netHooksMissing returns an error naming the first of nodes without fault
// hooks, or nil when all have them.
func netHooksMissing(c *Cluster, nodes []string) error {
	for _, n := range nodes {
		if hooked(c, n) {
			continue
		}
		why := "the node runs without them"
		if c.Hooks == nil {
			why = systemName(c) + " has none"
		}
		return fmt.Errorf("%s: no fault hooks (%s)", n, why)
	}
	return nil
}
