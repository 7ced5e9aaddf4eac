package transport

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// processed reports whether node from's sender has written or dropped n
// messages to peer to in total.
func (c *cluster) processed(from, to uint64, n uint64) func() bool {
	return func() bool {
		st := c.nodes[from].Stats().Peers[to]
		return st.Sent+st.Dropped == n
	}
}

func TestDropCutsTheLinkBothWaysAndClearingRestoresIt(t *testing.T) {
	c := newCluster(t, 2, nil)
	require.NoError(t, c.nodes[1].SetFaults(2, Faults{Drop: true}))

	c.nodes[1].Send(heartbeats(1, 2, 0, 100))
	require.Equal(t, uint64(100), c.nodes[1].Stats().Peers[2].Dropped, "outbound: dropped at Send")
	c.nodes[2].Send(heartbeats(2, 1, 0, 100))
	require.Eventually(t, func() bool { return c.nodes[1].Stats().Peers[2].DroppedInbound == 100 }, waitFor, pollTick,
		"inbound: discarded on receipt")

	c.nodes[1].ClearFaults()
	c.nodes[1].Send(heartbeats(1, 2, 1000, 1))
	c.nodes[2].Send(heartbeats(2, 1, 1000, 1))
	require.Eventually(t, func() bool { return c.inbox[1].len() == 1 && c.inbox[2].len() == 1 }, waitFor, pollTick)
	for _, id := range []uint64{1, 2} {
		msgs, _ := c.inbox[id].snapshot()
		require.Equal(t, []uint64{1000}, indexes(msgs), "only what was sent after clearing")
	}
}

func TestDropAppliesToMessagesAlreadyQueued(t *testing.T) {
	c := newCluster(t, 2, nil)
	require.NoError(t, c.nodes[1].SetFaults(2, Faults{Delay: 50 * time.Millisecond}))
	c.nodes[1].Send(heartbeats(1, 2, 0, 10))
	require.NoError(t, c.nodes[1].SetFaults(0, Faults{Drop: true}))
	require.NoError(t, c.nodes[1].SetFaults(2, Faults{}), "now the all-peers Drop applies to peer 2")
	require.Eventually(t, c.processed(1, 2, 10), waitFor, pollTick)
	require.Equal(t, uint64(10), c.nodes[1].Stats().Peers[2].Dropped)
	require.Zero(t, c.inbox[2].len())
}

func TestLossOverTCP(t *testing.T) {
	c := newCluster(t, 2, nil)
	require.NoError(t, c.nodes[1].SetFaults(2, Faults{Loss: 1}))
	c.nodes[1].Send(heartbeats(1, 2, 0, 200))
	require.Eventually(t, c.processed(1, 2, 200), waitFor, pollTick)
	require.Equal(t, uint64(200), c.nodes[1].Stats().Peers[2].Dropped)

	require.NoError(t, c.nodes[1].SetFaults(2, Faults{Loss: 0.5}))
	c.nodes[1].Send(heartbeats(1, 2, 1000, 2000))
	require.Eventually(t, c.processed(1, 2, 2200), waitFor, pollTick)
	st := c.nodes[1].Stats().Peers[2]
	lost := st.Dropped - 200
	require.InDelta(t, 1000, lost, 100, "a share near half of 2000 is lost")
	require.Eventually(t, func() bool { return uint64(c.inbox[2].len()) == st.Sent }, waitFor, pollTick)
	msgs, _ := c.inbox[2].snapshot()
	for _, m := range msgs {
		require.GreaterOrEqual(t, m.Index, uint64(1000), "nothing of the Loss 1.0 phase arrived")
	}
}

func TestDuplicateOverTCP(t *testing.T) {
	c := newCluster(t, 2, nil)
	require.NoError(t, c.nodes[1].SetFaults(2, Faults{Duplicate: 1}))
	c.nodes[1].Send(heartbeats(1, 2, 0, 100))
	require.Eventually(t, func() bool { return c.inbox[2].len() == 200 }, waitFor, pollTick)
	msgs, _ := c.inbox[2].snapshot()
	count := map[uint64]int{}
	for _, m := range msgs {
		count[m.Index]++
	}
	require.Len(t, count, 100)
	for idx, n := range count {
		require.Equal(t, 2, n, "index %d", idx)
	}
}

func TestDelayOverTCP(t *testing.T) {
	c := newCluster(t, 2, nil)
	const delay = 50 * time.Millisecond
	require.NoError(t, c.nodes[1].SetFaults(2, Faults{Delay: delay, Jitter: 20 * time.Millisecond}))
	c.nodes[2].Send(heartbeats(2, 1, 0, 1)) // other peers and directions are not delayed
	sent := time.Now()
	c.nodes[1].Send(heartbeats(1, 2, 0, 20))
	require.Eventually(t, func() bool { return c.inbox[2].len() == 20 }, waitFor, pollTick)
	_, arrivals := c.inbox[2].snapshot()
	for _, at := range arrivals {
		require.GreaterOrEqual(t, at.Sub(sent), delay)
	}
	require.Eventually(t, func() bool { return c.inbox[1].len() == 1 }, waitFor, pollTick)
}

func TestReorderOverTCPDeliversEverythingOutOfOrder(t *testing.T) {
	c := newCluster(t, 2, func(_ uint64, cfg *Config) {
		cfg.KeepAlive, cfg.IdleTimeout = 10*time.Millisecond, time.Second
	})
	require.NoError(t, c.nodes[1].SetFaults(2, Faults{Reorder: 0.5}))
	c.nodes[1].Send(heartbeats(1, 2, 0, 500))
	require.Eventually(t, func() bool { return c.inbox[2].len() == 500 }, waitFor, pollTick,
		"held messages are released by the next batch or tick")
	msgs, _ := c.inbox[2].snapshot()
	require.ElementsMatch(t, seq(0, 500), indexes(msgs))
	require.NotEqual(t, seq(0, 500), indexes(msgs))
}
