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

// iptEnsureCmds create chain when it does not exist yet and jump to it
// from the top of INPUT unless a jump is there already. They are safe to
// run again, and for several nodes on one host one after the other.
func iptEnsureCmds(chain string) []string {
	return []string{
		"iptables -w -N " + chain + " 2>/dev/null || iptables -w -S " + chain + " >/dev/null",
		"iptables -w -C INPUT -j " + chain + " 2>/dev/null || iptables -w -I INPUT 1 -j " + chain,
	}
}

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
func iptJumpRule(chain string) string { return "-A INPUT -j " + chain }

// iptHealCmds are the commands that remove chain and every jump to it
// from INPUT, given the host's rules as `iptables -S` prints them; none
// when neither is there. Only lines that are exactly chaos's jump are
// deleted: the host's own rules stay, even those in INPUT.
func iptHealCmds(chain, rules string) []string {
	var cmds []string
	exists := false
	for line := range strings.SplitSeq(rules, "\n") {
		switch strings.TrimSpace(line) {
		case iptJumpRule(chain):
			cmds = append(cmds, "iptables -w -D INPUT -j "+chain)
		case "-N " + chain:
			exists = true
		}
	}
	if exists {
		cmds = append(cmds, "iptables -w -F "+chain, "iptables -w -X "+chain)
	}
	return cmds
}

// iptHeal removes each of chains and its jumps on r's host, listing the
// rules once. A host where iptables is not installed, or may not be used
// (not root), has nothing of chaos's to remove: chaos could not have added
// rules there either.
func iptHeal(ctx context.Context, r control.Remote, chains ...string) error {
	const list = "iptables -w -S"
	what := "heal " + strings.Join(chains, ", ")
	res, err := r.Run(ctx, list)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if iptUnusable(res) {
		return nil
	}
	if err := res.Err(r.Host(), list); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	for _, chain := range chains {
		if err := netRun(ctx, r, "heal "+chain, iptHealCmds(chain, string(res.Stdout))); err != nil {
			return err
		}
	}
	return nil
}

// iptLeftovers names each of chains that exists on r's host, with its
// rule count ("iptables chain CHAOS-PARTITION (4 rules)"), or its jump
// from INPUT when only that is left; none on a host where iptables is
// missing or may not be used. It changes nothing.
func iptLeftovers(ctx context.Context, r control.Remote, chains ...string) ([]string, error) {
	const list = "iptables -w -S"
	res, err := r.Run(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("list iptables: %w", err)
	}
	if iptUnusable(res) {
		return nil, nil
	}
	if err := res.Err(r.Host(), list); err != nil {
		return nil, fmt.Errorf("list iptables: %w", err)
	}
	var found []string
	for _, chain := range chains {
		if what := iptChainLeft(chain, string(res.Stdout)); what != "" {
			found = append(found, what)
		}
	}
	return found, nil
}

// iptChainLeft describes what of chain the rules (as `iptables -S` prints
// them) hold, or "" when neither the chain nor its jump is there.
func iptChainLeft(chain, rules string) string {
	exists, jump, count := false, false, 0
	for line := range strings.SplitSeq(rules, "\n") {
		switch line = strings.TrimSpace(line); {
		case line == "-N "+chain:
			exists = true
		case line == iptJumpRule(chain):
			jump = true
		case strings.HasPrefix(line, "-A "+chain+" "):
			count++
		}
	}
	switch {
	case exists && count == 1:
		return "iptables chain " + chain + " (1 rule)"
	case exists:
		return fmt.Sprintf("iptables chain %s (%d rules)", chain, count)
	case jump:
		return "iptables jump to " + chain + " from INPUT"
	}
	return ""
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
