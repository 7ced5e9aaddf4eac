package hostcmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"chaos/control"
	"chaos/db"
)

// Chains of chaos's own. Each family keeps its rules in its own chain,
// jumped to from a built-in chain by one rule chaos adds, so a family's
// Stop and Heal flush and remove that chain and that jump and never look
// at any other rule of the host; partition and packet faults can be active
// at once without one's Stop removing the other's rules.
//
// Every rule matches the source AND the destination address (-s peer
// -d self): where several nodes share one host (local mode: 127.0.0.11..15
// on lo) their rules share that host's INPUT chain, and each rule still
// cuts exactly one node's link.
const (
	// PartitionChain holds the partition family's DROP rules, in INPUT.
	PartitionChain = "CHAOS-PARTITION"
	// TargetChain holds the targeted faults' cuts, in INPUT, apart from
	// the partition family's, so that neither's Stop removes the other's
	// rules.
	TargetChain = "CHAOS-TARGET"
	// PacketChain holds the packet family's lossy DROP rules, in INPUT.
	PacketChain = "CHAOS-PACKET"
)

// Chain is a chain of chaos's own and where it hangs: the Table that
// holds it and the built-in chain (From) that jumps to it. The partition,
// target and packet chains hang from the filter table's INPUT (InInput);
// the fault proxy's from nat's OUTPUT (ProxyChain, proxy.go) and the
// duplication's from mangle's POSTROUTING (TeeChain, tee.go).
type Chain struct{ Table, From, Name string }

// InInput is the chain called name, jumped to from the filter table's
// INPUT.
func InInput(name string) Chain { return Chain{Table: "filter", From: "INPUT", Name: name} }

// InInputs are the chains called names, each in INPUT (InInput).
func InInputs(names ...string) []Chain {
	out := make([]Chain, len(names))
	for i, n := range names {
		out[i] = InInput(n)
	}
	return out
}

// iptables is the command that acts on c's table: `iptables -w`, with
// `-t TABLE` for any table but filter.
func (c Chain) iptables() string { return tableCmd(c.Table) }

// tableCmd is the command that acts on table (see Chain.iptables).
func tableCmd(table string) string {
	if table == "filter" {
		return "iptables -w"
	}
	return "iptables -w -t " + table
}

// where names c for people: "CHAOS-PROXY" in filter, else "nat chain
// CHAOS-PROXY"; and its jump's origin: "INPUT", or "nat OUTPUT".
func (c Chain) where() (chain, from string) {
	if c.Table == "filter" {
		return "chain " + c.Name, c.From
	}
	return c.Table + " chain " + c.Name, c.Table + " " + c.From
}

// EnsureCmds create c when it does not exist yet and jump to it from the
// top of its built-in chain unless a jump is there already. They are safe
// to run again, and for several nodes on one host one after the other.
func (c Chain) EnsureCmds() []string {
	ipt := c.iptables()
	return []string{
		ipt + " -N " + c.Name + " 2>/dev/null || " + ipt + " -S " + c.Name + " >/dev/null",
		ipt + " -C " + c.From + " -j " + c.Name + " 2>/dev/null || " + ipt + " -I " + c.From + " 1 -j " + c.Name,
	}
}

// jumpRule is how `iptables -S` prints the jump EnsureCmds adds.
func (c Chain) jumpRule() string { return "-A " + c.From + " -j " + c.Name }

// healCmds are the commands that remove c and every jump to it, given the
// rules of its table as `iptables -S` prints them; none when neither is
// there. Only lines that are exactly chaos's jump are deleted: the host's
// own rules stay, even those in the built-in chain.
func (c Chain) healCmds(rules string) []string {
	var cmds []string
	exists := false
	ipt := c.iptables()
	for line := range strings.SplitSeq(rules, "\n") {
		switch strings.TrimSpace(line) {
		case c.jumpRule():
			cmds = append(cmds, ipt+" -D "+c.From+" -j "+c.Name)
		case "-N " + c.Name:
			exists = true
		}
	}
	if exists {
		cmds = append(cmds, ipt+" -F "+c.Name, ipt+" -X "+c.Name)
	}
	return cmds
}

// left describes what of c the rules of its table (as `iptables -S`
// prints them) hold, or "" when neither the chain nor its jump is there.
func (c Chain) left(rules string) string {
	exists, jump, count := false, false, 0
	for line := range strings.SplitSeq(rules, "\n") {
		switch line = strings.TrimSpace(line); {
		case line == "-N "+c.Name:
			exists = true
		case line == c.jumpRule():
			jump = true
		case strings.HasPrefix(line, "-A "+c.Name+" "):
			count++
		}
	}
	chain, from := c.where()
	switch {
	case exists && count == 1:
		return "iptables " + chain + " (1 rule)"
	case exists:
		return fmt.Sprintf("iptables %s (%d rules)", chain, count)
	case jump:
		return "iptables jump to " + c.Name + " from " + from
	}
	return ""
}

// DropCmd drops, in chain, packets from `from` to `to`: all of them
// when probability is 1, else each with that probability (the statistic
// match), as a lossy link would.
func DropCmd(chain string, from, to netip.Addr, probability float64) string {
	cmd := fmt.Sprintf("iptables -w -A %s -s %s/32 -d %s/32", chain, from, to)
	if probability < 1 {
		cmd += " -m statistic --mode random --probability " + strconv.FormatFloat(probability, 'f', -1, 64)
	}
	return cmd + " -j DROP"
}

// HealChains removes each of chains and its jumps on r's host, listing
// the rules of each table once. A host where iptables is not installed,
// or may not be used (not root), has nothing of chaos's to remove: chaos
// could not have added rules there either.
func HealChains(ctx context.Context, r control.Remote, chains ...Chain) error {
	names := make([]string, len(chains))
	for i, c := range chains {
		names[i] = c.Name
	}
	what := "heal " + strings.Join(names, ", ")
	return eachTable(ctx, r, chains, func(c Chain, rules string) error {
		return Run(ctx, r, "heal "+c.Name, c.healCmds(rules))
	}, what)
}

// ChainsLeft names each of chains that exists on r's host, with its
// rule count ("iptables chain CHAOS-PARTITION (4 rules)", "iptables nat
// chain CHAOS-PROXY (1 rule)"), or its jump when only that is left; none
// on a host where iptables is missing or may not be used. It changes
// nothing.
func ChainsLeft(ctx context.Context, r control.Remote, chains ...Chain) ([]string, error) {
	var found []string
	err := eachTable(ctx, r, chains, func(c Chain, rules string) error {
		if what := c.left(rules); what != "" {
			found = append(found, what)
		}
		return nil
	}, "list iptables")
	return found, err
}

// eachTable lists the rules of each table chains are in, once per
// table, and calls f for each chain, in order, with its table's rules.
// A host where iptables is missing or may not be used lists nothing, and
// f is not called. Errors say what for.
func eachTable(ctx context.Context, r control.Remote, chains []Chain, f func(c Chain, rules string) error, what string) error {
	listed := map[string]string{}
	for _, c := range chains {
		rules, ok := listed[c.Table]
		if !ok {
			list := c.iptables() + " -S"
			res, err := r.Run(ctx, list)
			if outOfReach(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if unusable(res) {
				return nil
			}
			if err := res.Err(r.Host(), list); err != nil && !noTable(res) {
				return fmt.Errorf("%s: %w", what, err)
			}
			rules = string(res.Stdout) // none when the kernel lacks the table
			listed[c.Table] = rules
		}
		if err := f(c, rules); err != nil {
			return err
		}
	}
	return nil
}

// outOfReach reports whether err says the host's network side is out of
// reach (a container whose Engine is on another machine) or gone (see
// Stopped): there is nothing of chaos's to list or heal there.
func outOfReach(err error) bool {
	var e *control.NetOutOfReachError
	return errors.As(err, &e) || Stopped(err)
}

// Stopped reports whether err says the host is a stopped container: its
// network namespace went with it, and it gets a new one when it starts.
func Stopped(err error) bool {
	var s *control.NotRunningError
	return errors.As(err, &s)
}

// unusable reports whether a failed iptables command failed because
// iptables is missing or the user may not use it.
func unusable(res control.Result) bool {
	if res.ExitCode == 127 {
		return true
	}
	msg := string(res.Stderr)
	return res.ExitCode != 0 && (strings.Contains(msg, "Permission denied") || strings.Contains(msg, "must be root"))
}

// noTable reports whether a failed `iptables -t TABLE -S` failed
// because the kernel has no such table (no nat module, say): it holds no
// chain of chaos's.
func noTable(res control.Result) bool {
	msg := string(res.Stderr)
	return res.ExitCode != 0 && (strings.Contains(msg, "Table does not exist") || strings.Contains(msg, "does not exist (do you need to insmod?)"))
}

// Run runs cmds on r in order and stops at the first failure; errors
// say what for ("partition", "heal CHAOS-PACKET"). The caller names the
// node.
func Run(ctx context.Context, r control.Remote, what string, cmds []string) error {
	for _, cmd := range cmds {
		if _, err := control.Output(ctx, r, cmd); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

// NodeIPs returns every node's IPv4 address, by name. Node addresses
// that are names are resolved on this machine; the rules need addresses.
func NodeIPs(ctx context.Context, nodes []db.Node) (map[string]netip.Addr, error) {
	out := make(map[string]netip.Addr, len(nodes))
	for _, n := range nodes {
		ip, err := netip.ParseAddr(n.Addr)
		if err != nil {
			ips, lerr := net.DefaultResolver.LookupNetIP(ctx, "ip4", n.Addr)
			if lerr == nil && len(ips) == 0 {
				lerr = errors.New("no IPv4 address")
			}
			if lerr != nil {
				return nil, fmt.Errorf("%s: resolve %q: %w", n.Name, n.Addr, lerr)
			}
			ip = ips[0]
		}
		ip = ip.Unmap()
		if !ip.Is4() {
			return nil, fmt.Errorf("%s: address %s: network faults support IPv4 node addresses only", n.Name, ip)
		}
		out[n.Name] = ip
	}
	return out, nil
}
