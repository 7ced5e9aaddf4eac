package nemesis

import (
	"context"
	"fmt"
	"net/netip"

	"chaos/nemesis/hostcmd"
)

// Duplication without netem: iptables' TEE target clones a packet and
// sends the clone to a gateway; with the packet's own destination as the
// gateway, the peer receives it twice, on the wire, as netem's duplicate
// would make it. The rules live in mangle's CHAOS-TEE chain, jumped to
// from POSTROUTING, on the senders' hosts: after NAT, so a connection the
// fault proxy takes over is duplicated on the proxy's way to the peer,
// never on the host's loopback. TCP then does with the copies what it
// does with any duplicate segment: it drops them and acknowledges again.

// applyDuplicate makes each sender's host duplicate its packets toward
// its degraded peers with probability p; applied gets each sender's
// commands.
func (p *Packet) applyDuplicate(ctx context.Context, c *Cluster, prob float64, links PacketLinks, ips map[string]netip.Addr, applied map[string][]nodeRule) error {
	for _, n := range c.Nodes {
		if len(links[n.Name]) == 0 {
			continue
		}
		cmds := hostcmd.TeeChain().EnsureCmds()
		for _, to := range links[n.Name] {
			cmds = append(cmds, hostcmd.TeeCmd(ips[n.Name], ips[to], prob))
		}
		r, err := netRemote(c, n)
		if err != nil {
			return fmt.Errorf("packet: %w", err)
		}
		rule := runRule("packet", cmds)
		if err := applyNow(ctx, r, rule); err != nil {
			return fmt.Errorf("%s: %w", n.Name, err)
		}
		applied[n.Name] = append(applied[n.Name], rule)
	}
	return nil
}
