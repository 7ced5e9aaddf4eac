package hostcmd

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"

	"chaos/control"
)

// tc layout of a packet fault on one interface of a sender's host:
//
//	root  htb, handle NetemRoot, no default class: traffic no filter
//	      claims (clients, SSH, anything not toward a peer) leaves directly,
//	      unshaped
//	class NetemRoot:K per sender node K (its 1-based place among the
//	      cluster's nodes, in hex): the bandwidth cap, or 10gbit
//	leaf  netem, handle netemLeafBase+K, under class K, when netem is used
//	u32   one filter per link: src sender, dst peer -> class K
//
// The handle marks the root qdisc as chaos's: NetemHeal deletes a root qdisc only
// when it carries that handle (and the kernel refuses the delete if the
// root changed in between), never a qdisc the host set up. Several senders
// on one host (local mode) share the root and get a class each.
const (
	// NetemRoot is the handle of chaos's root qdisc, which marks it as
	// chaos's.
	NetemRoot     = "c4a5:"
	netemLeafBase = 0xc500
	// NetemMaxSenders bounds K so that class minors and leaf handles stay
	// distinct from the root's.
	NetemMaxSenders = 0xff
	// netemLimit is the leaf's queue length in packets: long delays hold
	// many packets, and netem's default (1000) would drop the excess.
	netemLimit = 10000
)

// netemRootCmd adds chaos's root qdisc on dev, or accepts it when a
// sender sharing the host added it already. It fails, saying so, when
// dev's root qdisc is the host's own: chaos does not replace it. dev has
// passed checkIfName; it is quoted all the same.
func netemRootCmd(dev string) string {
	q := control.ShellQuote(dev)
	why := control.ShellQuote("cannot add the chaos root qdisc on " + dev + ": the root qdisc there belongs to the host")
	return fmt.Sprintf("tc qdisc add dev %[1]s root handle %[2]s htb 2>/dev/null || "+
		"tc qdisc show dev %[1]s root | grep -q '^qdisc htb %[2]s ' || "+
		"{ echo %[3]s >&2; exit 1; }",
		q, NetemRoot, why)
}

// NetemSenderCmds degrade the links from self to peers, which all leave
// through dev, for the sender at place k: its class (capped at rateKbit
// when > 0), a netem leaf with args unless args is empty, and a filter per
// peer. dev has passed checkIfName; it is quoted all the same.
func NetemSenderCmds(dev string, k int, self netip.Addr, peers []netip.Addr, rateKbit int, args string) []string {
	class := fmt.Sprintf("%s%x", NetemRoot, k)
	q := control.ShellQuote(dev)
	rate := "10gbit"
	if rateKbit > 0 {
		rate = strconv.Itoa(rateKbit) + "kbit"
	}
	cmds := []string{netemRootCmd(dev),
		fmt.Sprintf("tc class add dev %s parent %s classid %s htb rate %s ceil %s quantum 60000", q, NetemRoot, class, rate, rate)}
	if args != "" {
		cmds = append(cmds, fmt.Sprintf("tc qdisc add dev %s parent %s handle %x: netem limit %d %s",
			q, class, netemLeafBase+k, netemLimit, args))
	}
	for _, p := range peers {
		cmds = append(cmds, fmt.Sprintf("tc filter add dev %s parent %s protocol ip prio 1 u32 match ip src %s/32 match ip dst %s/32 flowid %s",
			q, NetemRoot, self, p, class))
	}
	return cmds
}

// NetemMS formats milliseconds for tc, to the microsecond.
func NetemMS(ms float64) string {
	return strconv.FormatFloat(math.Round(ms*1000)/1000, 'f', -1, 64) + "ms"
}

// NetemPercent formats a probability as tc's percentage, to 1e-4 %.
func NetemPercent(p float64) string {
	return strconv.FormatFloat(math.Round(p*1e6)/1e4, 'f', -1, 64) + "%"
}

// NetemDevs groups peers by the interface that routes to them from r's
// host (`ip -o route get`), devices in the order first met. A device name
// that checkIfName refuses is an error: it never reaches a command.
func NetemDevs(ctx context.Context, r control.Remote, peers []netip.Addr) ([]string, map[string][]netip.Addr, error) {
	var order []string
	byDev := map[string][]netip.Addr{}
	for _, p := range peers {
		cmd := "ip -o route get " + p.String()
		out, err := control.Output(ctx, r, cmd)
		if err != nil {
			return nil, nil, fmt.Errorf("route to %s: %w", p, err)
		}
		dev := netemRouteDev(string(out))
		if dev == "" {
			return nil, nil, fmt.Errorf("route to %s: no device in %q", p, strings.TrimSpace(string(out)))
		}
		if err := checkIfName(dev); err != nil {
			return nil, nil, fmt.Errorf("route to %s: %w", p, err)
		}
		if _, ok := byDev[dev]; !ok {
			order = append(order, dev)
		}
		byDev[dev] = append(byDev[dev], p)
	}
	return order, byDev, nil
}

// netemRouteDev is the word after "dev" in `ip route get`'s answer.
func netemRouteDev(out string) string {
	f := strings.Fields(out)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "dev" {
			return f[i+1]
		}
	}
	return ""
}

// netemRoots are the interfaces that carry chaos's root qdisc, in the
// order `tc qdisc show` lists them ("qdisc htb c4a5: dev eth0 root ...").
// A device name that checkIfName refuses is an error.
func netemRoots(show string) ([]string, error) {
	var devs []string
	for line := range strings.SplitSeq(show, "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && f[0] == "qdisc" && f[2] == NetemRoot && f[3] == "dev" && f[5] == "root" {
			if err := checkIfName(f[4]); err != nil {
				return nil, fmt.Errorf("tc qdisc show: %w", err)
			}
			devs = append(devs, f[4])
		}
	}
	return devs, nil
}

// netemHealCmds delete chaos's root qdisc from every interface that has
// it, given `tc qdisc show`'s output.
func netemHealCmds(show string) ([]string, error) {
	devs, err := netemRoots(show)
	cmds := make([]string, len(devs))
	for i, dev := range devs {
		cmds[i] = fmt.Sprintf("tc qdisc del dev %s root handle %s", control.ShellQuote(dev), NetemRoot)
	}
	return cmds, err
}

// NetemLeftovers names chaos's root qdiscs on r's host ("tc root qdisc
// c4a5: on eth0"); none on a host without tc or out of reach (see
// outOfReach). It changes nothing.
func NetemLeftovers(ctx context.Context, r control.Remote) ([]string, error) {
	const show = "tc qdisc show"
	res, err := r.Run(ctx, show)
	if outOfReach(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list tc: %w", err)
	}
	if res.ExitCode == 127 {
		return nil, nil
	}
	if err := res.Err(r.Host(), show); err != nil {
		return nil, fmt.Errorf("list tc: %w", err)
	}
	devs, err := netemRoots(string(res.Stdout))
	found := make([]string, len(devs))
	for i, dev := range devs {
		found[i] = fmt.Sprintf("tc root qdisc %s on %s", NetemRoot, dev)
	}
	return found, err
}

// NetemHeal removes chaos's root qdisc, and with it its classes, leaves
// and filters, from every interface of r's host. A host without tc, or
// out of reach, has none.
func NetemHeal(ctx context.Context, r control.Remote) error {
	const show = "tc qdisc show"
	res, err := r.Run(ctx, show)
	if outOfReach(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("heal tc: %w", err)
	}
	if res.ExitCode == 127 {
		return nil
	}
	if err := res.Err(r.Host(), show); err != nil {
		return fmt.Errorf("heal tc: %w", err)
	}
	cmds, err := netemHealCmds(string(res.Stdout))
	if err != nil {
		return fmt.Errorf("heal tc: %w", err)
	}
	return Run(ctx, r, "heal tc", cmds)
}
