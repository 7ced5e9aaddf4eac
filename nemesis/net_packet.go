package nemesis

import (
	"chaos/control"
	"chaos/history/faultrec"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"chaos/db"
	"chaos/history"
	"chaos/nemesis/hostcmd"
)

// Parts of a packet fault, as the op value's "mechanism" and "unavailable"
// name them.
const (
	PartLoss      = "loss"
	PartDelay     = "delay" // delay and jitter
	PartDuplicate = "duplicate"
	PartReorder   = "reorder"
	PartCorrupt   = "corrupt"
	PartRate      = "rate"
)

// packetMaxDelayMS bounds delay plus jitter: chaos-node's hooks refuse
// more (transport.MaxFaultDelay), and longer delays only stall TCP.
const packetMaxDelayMS = 60_000

// PacketBehavior is what happens to packets on a degraded link: the
// record's fields (faultrec.PacketBehavior, where each is described), with
// the fault's own checks. Zero fields leave that part out.
type PacketBehavior faultrec.PacketBehavior

// UnreliableNetwork is the network of seed 003 (TestFigure8Unreliable):
// a tenth of the packets lost, delays of 20 to 80 ms that reorder them,
// some reordered outright and a few duplicated.
func UnreliableNetwork() PacketBehavior {
	return PacketBehavior{Loss: 0.1, DelayMS: 20, JitterMS: 60, Reorder: 0.1, Duplicate: 0.01}
}

// Validate reports whether b is a fault at all and within bounds.
func (b PacketBehavior) Validate() error {
	for _, p := range []struct {
		name string
		v    float64
	}{{PartLoss, b.Loss}, {PartDuplicate, b.Duplicate}, {PartReorder, b.Reorder}, {PartCorrupt, b.Corrupt}} {
		if math.IsNaN(p.v) || p.v < 0 || p.v > 1 {
			return fmt.Errorf("packet behavior: %s probability %v outside [0, 1]", p.name, p.v)
		}
	}
	const maxMS = packetMaxDelayMS
	switch {
	case math.IsNaN(b.DelayMS) || math.IsNaN(b.JitterMS) || b.DelayMS < 0 || b.JitterMS < 0 || b.DelayMS+b.JitterMS > maxMS:
		return fmt.Errorf("packet behavior: delay %v ms plus jitter %v ms outside [0, %v] ms", b.DelayMS, b.JitterMS, maxMS)
	case b.RateKbit < 0:
		return fmt.Errorf("packet behavior: negative rate %d kbit/s", b.RateKbit)
	case b.Reorder > 0 && b.DelayMS == 0:
		return errors.New("packet behavior: reorder needs delay_ms > 0 (a reordered packet overtakes delayed ones)")
	case len(b.Parts()) == 0:
		return errors.New("packet behavior: no fault in it")
	}
	return nil
}

// Parts lists the parts b has, in a fixed order.
func (b PacketBehavior) Parts() []string {
	var out []string
	for _, p := range []struct {
		part string
		on   bool
	}{{PartLoss, b.Loss > 0}, {PartDelay, b.DelayMS > 0 || b.JitterMS > 0}, {PartDuplicate, b.Duplicate > 0},
		{PartReorder, b.Reorder > 0}, {PartCorrupt, b.Corrupt > 0}, {PartRate, b.RateKbit > 0}} {
		if p.on {
			out = append(out, p.part)
		}
	}
	return out
}

// PacketLinks are the degraded links: each sender, by name, to the nodes
// its packets toward are degraded. Only traffic toward those peers is
// touched, never the clients' or the controller's.
type PacketLinks map[string][]string

// PacketUnavailableError lists the parts of a packet fault the hosts cannot
// perform, and why, mechanism by mechanism.
type PacketUnavailableError struct {
	Parts []string
	Why   map[string]error
}

func (e *PacketUnavailableError) Error() string {
	var why []string
	for _, p := range e.Parts {
		why = append(why, fmt.Sprintf("%s (%v)", p, e.Why[p]))
	}
	return fmt.Sprintf("packet: these hosts cannot perform %s: %s", strings.Join(e.Parts, ", "), strings.Join(why, "; "))
}

// Packet degrades the network from some nodes toward the others (see
// PacketBehavior): the unreliable network of seed 003 by default. Each
// part goes to the best mechanism every host involved offers:
//
//   - where the senders' kernels have netem (with htb and u32): a tc
//     netem qdisc on the interface toward the peers, with u32 filters on
//     the peers' addresses, does delay, loss, duplication, reordering and
//     corruption, and an htb class the bandwidth cap;
//   - elsewhere: loss by iptables' statistic match in chaos's packet chain
//     on the receivers (else the hooks); delay, duplication and reordering
//     by chaos-node's transport hooks (POST /faults/net); the bandwidth cap
//     by an htb class. Corruption needs netem;
//   - without hooks either (etcd, described systems): delay and jitter, and
//     the bandwidth cap where htb is missing, by chaos's fault proxy on
//     the hosts (net_proxy.go), duplication by iptables' TEE target on the
//     senders (net_duplicate.go). Reordering needs netem or the hooks.
//
// A part no mechanism can perform is listed in the op value's
// "unavailable"; Available reports it as a *PacketUnavailableError.
//
// A Packet keeps what it probed and the active fault; use one value for
// the whole run. Its methods are safe for concurrent use.
type Packet struct {
	// Behavior is what happens to the packets; the zero value means
	// UnreliableNetwork.
	Behavior PacketBehavior
	// Links chooses the degraded links at each Start; nil picks, with rng,
	// one node, a minority, a majority or all of them, each degraded
	// toward every other node.
	Links func(ctx context.Context, c *Cluster, rng *rand.Rand) (PacketLinks, error)
	// NoNetem leaves netem out even where the kernel has it.
	NoNetem bool

	caps  netCapsCache
	proxy proxyState // guarded by mu

	mu     sync.Mutex
	active *faultrec.Packet
}

// Name is "packet".
func (p *Packet) Name() string { return "packet" }

func (p *Packet) behavior() PacketBehavior {
	if p.Behavior == (PacketBehavior{}) {
		return UnreliableNetwork()
	}
	return p.Behavior
}

// Available reports, as a *PacketUnavailableError, the parts of the
// behavior the hosts cannot perform on links from any node toward any
// other, or another error when the fault cannot run at all. It probes the
// hosts (see ProbeNet) but changes nothing.
func (p *Packet) Available(ctx context.Context, c *Cluster) error {
	b := p.behavior()
	if err := b.Validate(); err != nil {
		return fmt.Errorf("packet: %w", err)
	}
	if len(c.Nodes) < 2 {
		return fmt.Errorf("packet: needs at least 2 nodes, the cluster has %d", len(c.Nodes))
	}
	caps, err := p.caps.get(ctx, c)
	if err != nil {
		return fmt.Errorf("packet: %w", err)
	}
	all := PacketLinks{}
	for _, n := range c.Nodes {
		all[n.Name] = slices.DeleteFunc(partitionNames(c.Nodes), func(m string) bool { return m == n.Name })
	}
	return p.plan(c, caps, b, all).err()
}

// Start degrades the links Links chooses, performs every part some
// mechanism can, and returns start-packet with a *faultrec.Packet. It fails
// when a packet fault is active already or no part can be performed.
// When a node refuses its part, Start heals what it did and returns the
// error.
func (p *Packet) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active != nil {
		return Op{}, errors.New("packet: a packet fault is active already; stop it first")
	}
	b := p.behavior()
	if err := b.Validate(); err != nil {
		return Op{}, fmt.Errorf("packet: %w", err)
	}
	caps, err := p.caps.get(ctx, c)
	if err != nil {
		return Op{}, fmt.Errorf("packet: %w", err)
	}
	links, err := p.links(ctx, c, rng)
	if err != nil {
		return Op{}, fmt.Errorf("packet: %w", err)
	}
	plan := p.plan(c, caps, b, links)
	if len(plan.mech) == 0 {
		return Op{}, plan.err()
	}
	if err := p.apply(ctx, c, b, links, plan.mech); err != nil {
		return Op{}, errors.Join(err, p.heal(ctx, c, plan.mech))
	}
	p.active = &faultrec.Packet{Targets: links, Behavior: faultrec.PacketBehavior(b), Mechanism: plan.mech, Unavailable: plan.unavailable}
	return Op{F: history.FStartPacket, Value: p.active}, nil
}

// Stop ends the packet fault and returns stop-packet with the value of the
// start-packet it ends (an empty one when none was active). It undoes only
// the mechanisms the active fault used, so a node another fault paused
// does not hold up the removal of rules and qdiscs; with no fault active
// it removes everything Heal does.
func (p *Packet) Stop(ctx context.Context, c *Cluster) (Op, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	value := p.active
	var used map[string]string
	if value == nil {
		value = &faultrec.Packet{Targets: PacketLinks{}, Mechanism: map[string]string{}}
	} else {
		used = value.Mechanism
	}
	c.ruleTable().drop(p)
	if err := p.heal(ctx, c, used); err != nil {
		return Op{F: history.FStopPacket, Value: value}, err
	}
	p.active = nil
	return Op{F: history.FStopPacket, Value: value}, nil
}

// Heal removes, from every node's host, chaos's root qdisc (and so its
// netem leaves and filters) and chaos's packet chain with its jump, and
// clears every node's hook network faults. Nodes that are down have no
// hook faults to clear. Idempotent; it reaches every node even when some
// fail, and returns their errors joined.
func (p *Packet) Heal(ctx context.Context, c *Cluster) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.ruleTable().drop(p)
	if err := p.heal(ctx, c, nil); err != nil {
		return err
	}
	p.active = nil
	return nil
}

// leftovers names chaos's root qdiscs, packet, TEE and proxy chains and
// fault proxy on n's host (see leftoverFinder); the hooks' message faults
// live in the node processes.
func (p *Packet) leftovers(ctx context.Context, c *Cluster, n db.Node) ([]string, error) {
	r, err := nodeRemote(c, n)
	if err != nil {
		return nil, err
	}
	roots, err := hostcmd.NetemLeftovers(ctx, control.NetSide(r))
	if err != nil {
		return nil, err
	}
	chains, err := hostcmd.ChainsLeft(ctx, control.NetSide(r), hostcmd.InInput(hostcmd.PacketChain), hostcmd.TeeChain(), hostcmd.ProxyChain())
	if err != nil {
		return append(roots, chains...), err
	}
	procs, err := proxyLeftovers(ctx, r, c.FaultProxy)
	return append(append(roots, chains...), procs...), err
}

// heal undoes, on every node, what the mechanisms in used (part ->
// mechanism) can leave; nil means every mechanism.
func (p *Packet) heal(ctx context.Context, c *Cluster, used map[string]string) error {
	uses := func(mechs ...string) bool {
		return used == nil || slices.ContainsFunc(mechs, func(m string) bool { return packetUses(used, m) })
	}
	var errs []error
	for _, n := range c.Nodes {
		r := c.Remotes[n.Name]
		if r != nil && uses(MechNetem, MechHTB) {
			if err := hostcmd.NetemHeal(ctx, control.NetSide(r)); err != nil {
				errs = append(errs, fmt.Errorf("%s: packet: %w", n.Name, err))
			}
		}
		if r != nil && uses(MechIPTables) {
			if err := hostcmd.HealChains(ctx, control.NetSide(r), hostcmd.InInput(hostcmd.PacketChain), hostcmd.TeeChain()); err != nil {
				errs = append(errs, fmt.Errorf("%s: packet: %w", n.Name, err))
			}
		}
		if r != nil && uses(MechProxy) {
			if err := proxyHeal(ctx, r, c.FaultProxy); err != nil {
				errs = append(errs, fmt.Errorf("%s: packet: %w", n.Name, err))
			}
		}
		if hooked(c, n.Name) && uses(MechHooks) {
			if err := c.Hooks.ClearNetFaults(ctx, n.Name); err != nil {
				errs = append(errs, fmt.Errorf("packet: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// links returns the links to degrade, checked and normalized: every name a
// node, no self-links, lists sorted without duplicates, no empty lists.
func (p *Packet) links(ctx context.Context, c *Cluster, rng *rand.Rand) (PacketLinks, error) {
	nodes := partitionNames(c.Nodes)
	var raw PacketLinks
	if p.Links == nil {
		if len(nodes) < 2 {
			return nil, fmt.Errorf("needs at least 2 nodes, the cluster has %d", len(nodes))
		}
		raw = packetDefaultLinks(nodes, rng)
	} else {
		var err error
		if raw, err = p.Links(ctx, c, rng); err != nil {
			return nil, err
		}
	}
	out := PacketLinks{}
	for from, tos := range raw {
		for _, to := range tos {
			if !slices.Contains(nodes, from) || !slices.Contains(nodes, to) || from == to {
				return nil, fmt.Errorf("link %s -> %s: not a link between two nodes of the cluster", from, to)
			}
			if !slices.Contains(out[from], to) {
				out[from] = append(out[from], to)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no link to degrade")
	}
	for from := range out {
		slices.Sort(out[from])
	}
	return out, nil
}

// packetDefaultLinks picks with rng one node, a minority, a majority or
// every node, and degrades each toward every other node.
func packetDefaultLinks(nodes []string, rng *rand.Rand) PacketLinks {
	n := len(nodes)
	sizes := []int{1, max(n/2, 1), n/2 + 1, n}
	k := sizes[rng.IntN(len(sizes))]
	idx := rng.Perm(n)[:k]
	slices.Sort(idx)
	links := PacketLinks{}
	for _, i := range idx {
		links[nodes[i]] = slices.Delete(slices.Clone(nodes), i, i+1)
	}
	return links
}

// packetPlan says which mechanism performs each part of a fault, and why
// the others cannot be performed.
type packetPlan struct {
	mech        map[string]string
	unavailable []string
	why         map[string]error
}

// err is nil when every part has a mechanism.
func (pl packetPlan) err() error {
	if len(pl.unavailable) == 0 {
		return nil
	}
	return &PacketUnavailableError{Parts: pl.unavailable, Why: pl.why}
}

// packetMechOption is a mechanism for a part and why it cannot serve (nil
// when it can).
type packetMechOption struct {
	mech string
	err  error
}

// plan gives each part of b the first mechanism, in order of preference,
// that every host involved in links offers, and says why the others
// cannot serve.
func (p *Packet) plan(c *Cluster, caps map[string]NetCaps, b PacketBehavior, links PacketLinks) packetPlan {
	options := p.mechOptions(c, caps, links)
	pl := packetPlan{mech: map[string]string{}, why: map[string]error{}}
	for _, part := range b.Parts() {
		var whyNot []string
		for _, o := range options[part] {
			if o.err == nil {
				pl.mech[part] = o.mech
				break
			}
			whyNot = append(whyNot, o.mech+": "+o.err.Error())
		}
		if _, ok := pl.mech[part]; !ok {
			pl.unavailable = append(pl.unavailable, part)
			pl.why[part] = errors.New(strings.Join(whyNot, "; "))
		}
	}
	return pl
}

// mechOptions lists, for each part, its mechanisms in order of preference
// with why each cannot serve links: tc (netem, htb) needs the senders'
// hosts, iptables the receivers' (loss) or the senders' (TEE), hooks the
// senders, the proxy both ends' hosts.
func (p *Packet) mechOptions(c *Cluster, caps map[string]NetCaps, links PacketLinks) map[string][]packetMechOption {
	senders, receivers := links.ends(c)
	first := func(nodes []string, picks ...func(NetCaps) error) error {
		for _, pick := range picks {
			if err := netFirstErr(nodes, caps, pick); err != nil {
				return err
			}
		}
		return nil
	}
	htb := first(senders, func(nc NetCaps) error { return nc.HTB }, func(nc NetCaps) error { return nc.U32 })
	netem := first(senders, func(nc NetCaps) error { return nc.Netem })
	if netem == nil {
		netem = htb
	}
	if p.NoNetem {
		netem = errors.New("not used (Packet.NoNetem)")
	}
	stat := first(receivers, func(nc NetCaps) error { return nc.IPTables }, func(nc NetCaps) error { return nc.Statistic })
	tee := first(senders, func(nc NetCaps) error { return nc.IPTables }, func(nc NetCaps) error { return nc.TEE })
	hooks := netHooksMissing(c, senders)
	proxy := proxyMissing(c.FaultProxy, caps, links.allEnds(c))
	return map[string][]packetMechOption{
		PartLoss:      {{MechNetem, netem}, {MechIPTables, stat}, {MechHooks, hooks}},
		PartDelay:     {{MechNetem, netem}, {MechHooks, hooks}, {MechProxy, proxy}},
		PartDuplicate: {{MechNetem, netem}, {MechHooks, hooks}, {MechIPTables, tee}},
		PartReorder:   {{MechNetem, netem}, {MechHooks, hooks}, {MechProxy, errProxyReorder}},
		PartCorrupt:   {{MechNetem, netem}},
		PartRate:      {{MechHTB, htb}, {MechProxy, proxy}},
	}
}

// allEnds returns the nodes at either end of links, in the order of
// c.Nodes.
func (l PacketLinks) allEnds(c *Cluster) []string {
	senders, receivers := l.ends(c)
	var out []string
	for _, n := range c.Nodes {
		if slices.Contains(senders, n.Name) || slices.Contains(receivers, n.Name) {
			out = append(out, n.Name)
		}
	}
	return out
}

// ends returns the nodes that send on links and those that receive, each
// in the order of c.Nodes.
func (l PacketLinks) ends(c *Cluster) (senders, receivers []string) {
	for _, n := range c.Nodes {
		if len(l[n.Name]) > 0 {
			senders = append(senders, n.Name)
		}
		for _, tos := range l {
			if slices.Contains(tos, n.Name) {
				receivers = append(receivers, n.Name)
				break
			}
		}
	}
	return senders, receivers
}

// apply performs the planned parts: tc on the senders' hosts first, then
// iptables loss on the receivers', duplication on the senders', the
// proxy on both ends', then the senders' hooks. All but the hooks become
// c's rules in force (see net_reapply.go); the hooks live in the node
// processes, whose restart does not give them back.
func (p *Packet) apply(ctx context.Context, c *Cluster, b PacketBehavior, links PacketLinks, mech map[string]string) error {
	uses := func(m string) bool { return packetUses(mech, m) }
	ips, err := hostcmd.NodeIPs(ctx, c.Nodes)
	if err != nil {
		return fmt.Errorf("packet: %w", err)
	}
	applied := map[string][]nodeRule{}
	if uses(MechNetem) || uses(MechHTB) {
		if err := p.applyTC(ctx, c, b, links, mech, ips, applied); err != nil {
			return err
		}
	}
	if mech[PartLoss] == MechIPTables {
		if err := p.applyLoss(ctx, c, b.Loss, links, ips, applied); err != nil {
			return err
		}
	}
	if mech[PartDuplicate] == MechIPTables {
		if err := p.applyDuplicate(ctx, c, b.Duplicate, links, ips, applied); err != nil {
			return err
		}
	}
	if uses(MechProxy) {
		if err := p.applyProxy(ctx, c, b, links, mech, ips, applied); err != nil {
			return err
		}
	}
	c.ruleTable().set(p, applied)
	if uses(MechHooks) {
		return p.applyHooks(ctx, c, b, links, mech)
	}
	return nil
}

// netemArgs are netem's arguments for b's parts that parts says netem
// performs. Delay and jitter follow PacketBehavior (uniform in
// [delay, delay+jitter)): netem draws uniformly in mean ± spread when given
// no distribution, so the mean is delay+jitter/2 and the spread jitter/2.
func netemArgs(b PacketBehavior, parts map[string]string) string {
	var args []string
	if parts[PartDelay] == MechNetem && b.DelayMS+b.JitterMS > 0 {
		d := "delay " + hostcmd.NetemMS(b.DelayMS+b.JitterMS/2)
		if b.JitterMS > 0 {
			d += " " + hostcmd.NetemMS(b.JitterMS/2)
		}
		args = append(args, d)
	}
	for _, p := range []struct {
		part, word string
		v          float64
	}{{PartLoss, "loss", b.Loss}, {PartDuplicate, "duplicate", b.Duplicate},
		{PartReorder, "reorder", b.Reorder}, {PartCorrupt, "corrupt", b.Corrupt}} {
		if parts[p.part] == MechNetem && p.v > 0 {
			args = append(args, p.word+" "+hostcmd.NetemPercent(p.v))
		}
	}
	return strings.Join(args, " ")
}

// applyTC sets up chaos's tc tree on each sender's host (see
// hostcmd/netem.go), senders one after the other so that senders sharing
// a host share its root qdisc without racing for it; applied gets each
// sender's commands.
func (p *Packet) applyTC(ctx context.Context, c *Cluster, b PacketBehavior, links PacketLinks, mech map[string]string, ips map[string]netip.Addr, applied map[string][]nodeRule) error {
	if len(c.Nodes) > hostcmd.NetemMaxSenders {
		return fmt.Errorf("packet: tc faults support up to %d nodes, the cluster has %d", hostcmd.NetemMaxSenders, len(c.Nodes))
	}
	args := netemArgs(b, mech)
	rate := 0
	if mech[PartRate] == MechHTB {
		rate = b.RateKbit
	}
	for k, n := range c.Nodes {
		if len(links[n.Name]) == 0 {
			continue
		}
		r, err := netRemote(c, n)
		if err != nil {
			return fmt.Errorf("packet: %w", err)
		}
		peers := make([]netip.Addr, len(links[n.Name]))
		for i, to := range links[n.Name] {
			peers[i] = ips[to]
		}
		rule := tcRule(k+1, ips[n.Name], peers, rate, args)
		if err := applyNow(ctx, r, rule); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		applied[n.Name] = append(applied[n.Name], rule)
	}
	return nil
}

// tcRule is the nodeRule that sets up chaos's tc tree for sender k (at
// self) toward peers: each interface that routes to some of them gets
// their classes and leaves (hostcmd.NetemSenderCmds).
func tcRule(k int, self netip.Addr, peers []netip.Addr, rate int, args string) nodeRule {
	return func(ctx context.Context, r control.Remote) error {
		ns := control.NetSide(r)
		devs, byDev, err := hostcmd.NetemDevs(ctx, ns, peers)
		if err != nil {
			return fmt.Errorf("packet: %w", err)
		}
		var cmds []string
		for _, dev := range devs {
			cmds = append(cmds, hostcmd.NetemSenderCmds(dev, k, self, byDev[dev], rate, args)...)
		}
		return hostcmd.Run(ctx, ns, "packet", cmds)
	}
}

// applyLoss makes each receiver drop, in chaos's packet chain, each
// packet from its degraded senders with probability loss; applied gets
// each receiver's commands.
func (p *Packet) applyLoss(ctx context.Context, c *Cluster, loss float64, links PacketLinks, ips map[string]netip.Addr, applied map[string][]nodeRule) error {
	for _, recv := range c.Nodes {
		var cmds []string
		for _, from := range c.Nodes {
			if slices.Contains(links[from.Name], recv.Name) {
				cmds = append(cmds, hostcmd.DropCmd(hostcmd.PacketChain, ips[from.Name], ips[recv.Name], loss))
			}
		}
		if len(cmds) == 0 {
			continue
		}
		r, err := netRemote(c, recv)
		if err != nil {
			return fmt.Errorf("packet: %w", err)
		}
		rule := runRule("packet", append(hostcmd.InInput(hostcmd.PacketChain).EnsureCmds(), cmds...))
		if err := applyNow(ctx, r, rule); err != nil {
			return fmt.Errorf("%s: %w", recv.Name, err)
		}
		applied[recv.Name] = append(applied[recv.Name], rule)
	}
	return nil
}

// packetUses reports whether the plan mech (part -> mechanism) uses m.
func packetUses(mech map[string]string, m string) bool {
	for _, v := range mech {
		if v == m {
			return true
		}
	}
	return false
}

// applyHooks sets, in each sender, the parts planned for the hooks on its
// links.
func (p *Packet) applyHooks(ctx context.Context, c *Cluster, b PacketBehavior, links PacketLinks, mech map[string]string) error {
	body := db.NetFaults{}
	if mech[PartLoss] == MechHooks {
		body.Loss = b.Loss
	}
	if mech[PartDuplicate] == MechHooks {
		body.Duplicate = b.Duplicate
	}
	if mech[PartReorder] == MechHooks {
		body.Reorder = b.Reorder
	}
	if mech[PartDelay] == MechHooks {
		body.DelayMS, body.JitterMS = b.DelayMS, b.JitterMS
	}
	for _, n := range c.Nodes {
		if len(links[n.Name]) == 0 {
			continue
		}
		body.Peers = links[n.Name]
		if !hooked(c, n.Name) {
			return fmt.Errorf("packet: %s: the node has no fault hooks", n.Name)
		}
		if err := c.Hooks.SetNetFaults(ctx, n.Name, body); err != nil {
			return fmt.Errorf("packet: %w", err)
		}
	}
	return nil
}
