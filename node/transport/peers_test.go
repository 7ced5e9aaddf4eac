package transport

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A member that joins becomes a peer both ways once added; one that leaves
// stops being one both ways once removed.
func TestPeersJoinAndLeave(t *testing.T) {
	c := newCluster(t, 3, func(id uint64, cfg *Config) {
		if id == 1 { // node 1 starts knowing only node 2
			cfg.Peers = map[uint64]string{1: cfg.Peers[1], 2: cfg.Peers[2]}
		}
	})
	c.nodes[1].Send(heartbeats(1, 3, 0, 1))
	require.Eventually(t, func() bool { return c.nodes[1].Stats().Unroutable == 1 }, waitFor, pollTick)

	require.NoError(t, c.nodes[1].AddPeer(3, c.addrs[3]))
	require.NoError(t, c.nodes[1].AddPeer(3, c.addrs[3]), "again, at the same address")
	require.Error(t, c.nodes[1].AddPeer(3, c.addrs[2]), "at another address")
	require.Error(t, c.nodes[1].AddPeer(1, c.addrs[1]), "itself")
	require.Error(t, c.nodes[1].AddPeer(0, c.addrs[1]))
	require.Error(t, c.nodes[1].AddPeer(4, ""))

	c.nodes[1].Send(heartbeats(1, 3, 0, 10))
	require.Eventually(t, func() bool { return c.inbox[3].len() == 10 }, waitFor, pollTick)
	c.nodes[3].Send(heartbeats(3, 1, 0, 10))
	require.Eventually(t, func() bool { return c.inbox[1].len() == 10 }, waitFor, pollTick,
		"node 3's messages are taken once it is a peer (its sender redials after a refusal)")

	c.nodes[1].RemovePeer(2)
	c.nodes[1].RemovePeer(2) // again: nothing
	require.NotContains(t, c.nodes[1].Stats().Peers, uint64(2))
	c.nodes[1].Send(heartbeats(1, 2, 0, 5))
	require.Eventually(t, func() bool { return c.nodes[1].Stats().Unroutable == 6 }, waitFor, pollTick)
	before := c.inbox[1].len()
	c.nodes[2].Send(heartbeats(2, 1, 0, 5))
	c.nodes[3].Send(heartbeats(3, 1, 100, 1))
	require.Eventually(t, func() bool { return c.inbox[1].len() == before+1 }, waitFor, pollTick)
	msgs, _ := c.inbox[1].snapshot()
	for _, m := range msgs[before:] {
		require.Equal(t, uint64(3), m.From, "nothing from the removed peer")
	}
}
