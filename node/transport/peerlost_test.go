package transport

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lostLog records PeerLost calls, and how many messages the node's inbox
// held at each (to check that a notice comes after what was read).
type lostLog struct {
	mu    sync.Mutex
	ids   []uint64
	inbox []int
}

func (l *lostLog) calls() []uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]uint64(nil), l.ids...)
}

// A peer whose process ends (here: its transport closes its connections)
// is reported lost by the receiver, once, after the messages it sent.
func TestPeerLostWhenThePeerClosesItsConnection(t *testing.T) {
	lost := &lostLog{}
	var c *cluster
	c = newCluster(t, 2, func(id uint64, cfg *Config) {
		if id == 2 {
			cfg.PeerLost = func(from uint64) {
				lost.mu.Lock()
				defer lost.mu.Unlock()
				lost.ids = append(lost.ids, from)
				lost.inbox = append(lost.inbox, c.inbox[2].len())
			}
		}
	})
	c.nodes[1].Send(heartbeats(1, 2, 0, 3))
	require.Eventually(t, func() bool { return c.inbox[2].len() == 3 }, waitFor, pollTick)
	require.Empty(t, lost.calls(), "a live connection is not lost")

	require.NoError(t, c.nodes[1].Close())
	require.Eventually(t, func() bool { return len(lost.calls()) == 1 }, waitFor, pollTick)
	require.Equal(t, []uint64{1}, lost.calls())
	lost.mu.Lock()
	require.Equal(t, []int{3}, lost.inbox, "the notice comes after every message read")
	lost.mu.Unlock()
	delete(c.nodes, 1) // closed already
}

// Silence is not loss: a connection that idles out, or one closed by the
// receiver's own Close, is never reported.
func TestPeerLostIsNotSaidOfSilenceOrOwnClose(t *testing.T) {
	lost := &lostLog{}
	c := newCluster(t, 2, func(id uint64, cfg *Config) {
		if id == 2 {
			cfg.IdleTimeout, cfg.KeepAlive = 100*time.Millisecond, 40*time.Millisecond
			cfg.PeerLost = func(from uint64) {
				lost.mu.Lock()
				defer lost.mu.Unlock()
				lost.ids = append(lost.ids, from)
			}
		}
	})
	c.nodes[1].Send(heartbeats(1, 2, 0, 1)) // node 1 keeps quiet for its 1 s keepalive
	require.Eventually(t, func() bool { return c.inbox[2].len() == 1 }, waitFor, pollTick)
	require.Eventually(t, func() bool { return strings.Contains(c.logs[2].String(), "idle") }, waitFor, pollTick)

	next := 1 // the first write into the idled-out connection is lost, as raft expects
	require.Eventually(t, func() bool {
		c.nodes[1].Send(heartbeats(1, 2, next, 1))
		next++
		return c.inbox[2].len() > 1
	}, waitFor, 10*time.Millisecond)
	require.NoError(t, c.nodes[2].Close())
	delete(c.nodes, 2)
	require.Empty(t, lost.calls())
}
