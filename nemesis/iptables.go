package nemesis

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
// jumped to from INPUT by one rule chaos adds, so a family's Stop and
// Heal flush and remove that chain and that jump and never look at any
// other rule of the host; partition and packet faults can be active at
// once without one's Stop removing the other's rules.
//
// Every rule matches the source AND the destination address (-s peer
// -d self): where several nodes share one host (local mode: 127.0.0.11..15
// on lo) their rules share that host's INPUT chain, and each rule still
// cuts exactly one node's link.
const (
	partitionChain = "CHAOS-PARTITION"
	packetChain    = "CHAOS-PACKET"
)

// iptChain is a chain of chaos's own and where it hangs: the table that
// holds it and the built-in chain that jumps to it. The partition, target
// and packet chains hang from the filter table's INPUT (inInput); the
// fault proxy's from nat's and mangle's (see proxyrules.go).
type iptChain struct{ table, from, name string }

// inInput is the chain called name, jumped to from the filter table's
// INPUT.
func inInput(name string) iptChain { return iptChain{table: "filter", from: "INPUT", name: name} }

// inInputs are the chains called names, each in INPUT (inInput).
func inInputs(names []string) []iptChain {
	out := make([]iptChain, len(names))
	for i, n := range names {
		out[i] = inInput(n)
	}
	return out
}

// iptables is the command that acts on c's table: `iptables -w`, with
// `-t TABLE` for any table but filter.
func (c iptChain) iptables() string { return iptTableCmd(c.table) }

// iptTableCmd is the command that acts on table (see iptChain.iptables).
func iptTableCmd(table string) string {
	if table == "filter" {
		return "iptables -w"
	}
	return "iptables -w -t " + table
}

// where names c for people: "CHAOS-PROXY" in filter, else "nat chain
// CHAOS-PROXY"; and its jump's origin: "INPUT", or "nat OUTPUT".
func (c iptChain) where() (chain, from string) {
	if c.table == "filter" {
		return "chain " + c.name, c.from
	}
	return c.table + " chain " + c.name, c.table + " " + c.from
}

// ensureCmds create c when it does not exist yet and jump to it from the
// top of its built-in chain unless a jump is there already. They are safe
// to run again, and for several nodes on one host one after the other.
func (c iptChain) ensureCmds() []string {
	ipt := c.iptables()
	return []string{
		ipt + " -N " + c.name + " 2>/dev/null || " + ipt + " -S " + c.name + " >/dev/null",
		ipt + " -C " + c.from + " -j " + c.name + " 2>/dev/null || " + ipt + " -I " + c.from + " 1 -j " + c.name,
	}
}

// jumpRule is how `iptables -S` prints the jump ensureCmds adds.
func (c iptChain) jumpRule() string { return "-A " + c.from + " -j " + c.name }

// healCmds are the commands that remove c and every jump to it, given the
// rules of its table as `iptables -S` prints them; none when neither is
// there. Only lines that are exactly chaos's jump are deleted: the host's
// own rules stay, even those in the built-in chain.
func (c iptChain) healCmds(rules string) []string {
	var cmds []string
	exists := false
	ipt := c.iptables()
	for line := range strings.SplitSeq(rules, "\n") {
		switch strings.TrimSpace(line) {
		case c.jumpRule():
			cmds = append(cmds, ipt+" -D "+c.from+" -j "+c.name)
		case "-N " + c.name:
			exists = true
		}
	}
	if exists {
		cmds = append(cmds, ipt+" -F "+c.name, ipt+" -X "+c.name)
	}
	return cmds
}

// left describes what of c the rules of its table (as `iptables -S`
// prints them) hold, or "" when neither the chain nor its jump is there.
func (c iptChain) left(rules string) string {
	exists, jump, count := false, false, 0
	for line := range strings.SplitSeq(rules, "\n") {
		switch line = strings.TrimSpace(line); {
		case line == "-N "+c.name:
			exists = true
		case line == c.jumpRule():
			jump = true
		case strings.HasPrefix(line, "-A "+c.name+" "):
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
		return "iptables jump to " + c.name + " from " + from
	}
	return ""
}

// iptEnsureCmds are ensureCmds of the chain called chain in INPUT.
func iptEnsureCmds(chain string) []string { return inInput(chain).ensureCmds() }

// iptDropCmd drops, in chain, packets from `from` to `to`: all of them
// when probability is 1, else each with that probability (the statistic
// match), as a lossy link would.
func iptDropCmd(chain string, from, to netip.Addr, probability float64) string {
	cmd := fmt.Sprintf("iptables -w -A %s -s %s/32 -d %s/32", chain, from, to)
	if probability < 1 {
		cmd += " -m statistic --mode random --probability " + strconv.FormatFloat(probability, 'f', -1, 64)
	}
	return cmd + " -j DROP"
}

// iptJumpRule is how `iptables -S` prints the jump iptEnsureCmds adds.
func iptJumpRule(chain string) string { return inInput(chain).jumpRule() }

// iptHealCmds are healCmds of the chain called chain in INPUT.
func iptHealCmds(chain, rules string) []string { return inInput(chain).healCmds(rules) }

// iptChainLeft is left of the chain called chain in INPUT.
func iptChainLeft(chain, rules string) string { return inInput(chain).left(rules) }

// iptHeal removes each of the chains called chains, in INPUT, and their
// jumps (see iptHealChains).
func iptHeal(ctx context.Context, r control.Remote, chains ...string) error {
	return iptHealChains(ctx, r, inInputs(chains)...)
}

// iptLeftovers names each of the chains called chains, in INPUT, that is
// left (see iptChainsLeft).
func iptLeftovers(ctx context.Context, r control.Remote, chains ...string) ([]string, error) {
	return iptChainsLeft(ctx, r, inInputs(chains)...)
}

// iptHealChains removes each of chains and its jumps on r's host, listing
// the rules of each table once. A host where iptables is not installed,
// or may not be used (not root), has nothing of chaos's to remove: chaos
// could not have added rules there either.
func iptHealChains(ctx context.Context, r control.Remote, chains ...iptChain) error {
	names := make([]string, len(chains))
	for i, c := range chains {
		names[i] = c.name
	}
	what := "heal " + strings.Join(names, ", ")
	return iptEachTable(ctx, r, chains, func(c iptChain, rules string) error {
		return netRun(ctx, r, "heal "+c.name, c.healCmds(rules))
	}, what)
}

// iptChainsLeft names each of chains that exists on r's host, with its
// rule count ("iptables chain CHAOS-PARTITION (4 rules)", "iptables nat
// chain CHAOS-PROXY (1 rule)"), or its jump when only that is left; none
// on a host where iptables is missing or may not be used. It changes
// nothing.
func iptChainsLeft(ctx context.Context, r control.Remote, chains ...iptChain) ([]string, error) {
	var found []string
	err := iptEachTable(ctx, r, chains, func(c iptChain, rules string) error {
		if what := c.left(rules); what != "" {
			found = append(found, what)
		}
		return nil
	}, "list iptables")
	return found, err
}

// iptEachTable lists the rules of each table chains are in, once per
// table, and calls f for each chain, in order, with its table's rules.
// A host where iptables is missing or may not be used lists nothing, and
// f is not called. Errors say what for.
func iptEachTable(ctx context.Context, r control.Remote, chains []iptChain, f func(c iptChain, rules string) error, what string) error {
	listed := map[string]string{}
	for _, c := range chains {
		rules, ok := listed[c.table]
		if !ok {
			list := c.iptables() + " -S"
			res, err := r.Run(ctx, list)
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if iptUnusable(res) {
				return nil
			}
			if err := res.Err(r.Host(), list); err != nil && !iptNoTable(res) {
				return fmt.Errorf("%s: %w", what, err)
			}
			rules = string(res.Stdout) // none when the kernel lacks the table
			listed[c.table] = rules
		}
		if err := f(c, rules); err != nil {
			return err
		}
	}
	return nil
}

// iptUnusable reports whether a failed iptables command failed because
// iptables is missing or the user may not use it.
func iptUnusable(res control.Result) bool {
	if res.ExitCode == 127 {
		return true
	}
	msg := string(res.Stderr)
	return res.ExitCode != 0 && (strings.Contains(msg, "Permission denied") || strings.Contains(msg, "must be root"))
}

// iptNoTable reports whether a failed `iptables -t TABLE -S` failed
// because the kernel has no such table (no nat module, say): it holds no
// chain of chaos's.
func iptNoTable(res control.Result) bool {
	msg := string(res.Stderr)
	return res.ExitCode != 0 && (strings.Contains(msg, "Table does not exist") || strings.Contains(msg, "does not exist (do you need to insmod?)"))
}

// netRun runs cmds on r in order and stops at the first failure; errors
// say what for ("partition", "heal CHAOS-PACKET"). The caller names the
// node.
func netRun(ctx context.Context, r control.Remote, what string, cmds []string) error {
	for _, cmd := range cmds {
		if _, err := control.Output(ctx, r, cmd); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

// iptNodeIPs returns every node's IPv4 address, by name. Node addresses
// that are names are resolved on this machine; the rules need addresses.
func iptNodeIPs(ctx context.Context, nodes []db.Node) (map[string]netip.Addr, error) {
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
