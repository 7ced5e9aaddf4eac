package transport

import (
	"bufio"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/raft"
)

func TestTwoTransportsExchangeBatchesInOrder(t *testing.T) {
	c := newCluster(t, 2, nil)
	for i := range 50 {
		c.nodes[1].Send(heartbeats(1, 2, 10*i, 10))
		c.nodes[2].Send(heartbeats(2, 1, 10*i, 10))
	}
	require.Eventually(t, func() bool { return c.inbox[1].len() == 500 && c.inbox[2].len() == 500 }, waitFor, pollTick)
	for _, id := range []uint64{1, 2} {
		msgs, _ := c.inbox[id].snapshot()
		require.Equal(t, seq(0, 500), indexes(msgs), "one connection keeps per-peer FIFO order")
		// The sender counts a frame after its Write returns, which may be
		// after the receiver has delivered it.
		require.Eventually(t, c.processed(3-id, id, 500), waitFor, pollTick)
		st := c.nodes[3-id].Stats().Peers[id]
		require.Zero(t, st.Dropped)
		require.Equal(t, uint64(1), st.Connects)
		require.True(t, st.Connected)
		require.Equal(t, uint64(500), c.nodes[id].Stats().Peers[3-id].Received)
	}
}

func TestTransportCarriesEntriesAndSnapshots(t *testing.T) {
	c := newCluster(t, 2, nil)
	app := msgApp(64, 100)
	snap := raft.Message{Type: raft.MsgSnap, From: 1, To: 2, Term: 3, Snapshot: &raft.Snapshot{
		Meta: raft.SnapshotMeta{Index: 9, Term: 3, ConfState: raft.ConfState{Voters: []uint64{1, 2}}},
		Data: make([]byte, 1<<20)}}
	c.nodes[1].Send([]raft.Message{app, snap})
	require.Eventually(t, func() bool { return c.inbox[2].len() == 2 }, waitFor, pollTick)
	msgs, _ := c.inbox[2].snapshot()
	require.Equal(t, []raft.Message{app, snap}, msgs)
}

func TestThreeTransportsExchangeAllToAll(t *testing.T) {
	c := newCluster(t, 3, nil)
	for from := uint64(1); from <= 3; from++ {
		var batch []raft.Message
		for to := uint64(1); to <= 3; to++ {
			if to != from {
				batch = append(batch, heartbeats(from, to, 0, 100)...)
			}
		}
		c.nodes[from].Send(batch)
	}
	require.Eventually(t, func() bool {
		return c.inbox[1].len() == 200 && c.inbox[2].len() == 200 && c.inbox[3].len() == 200
	}, waitFor, pollTick)
	for id := uint64(1); id <= 3; id++ {
		msgs, _ := c.inbox[id].snapshot()
		from := map[uint64][]uint64{}
		for _, m := range msgs {
			require.Equal(t, id, m.To)
			from[m.From] = append(from[m.From], m.Index)
		}
		require.Len(t, from, 2)
		for _, got := range from {
			require.Equal(t, seq(0, 100), got)
		}
	}
}

func TestSendingResumesAfterPeerRestarts(t *testing.T) {
	c := newCluster(t, 2, func(_ uint64, cfg *Config) { cfg.BackoffMax = 50 * time.Millisecond })
	c.nodes[1].Send(heartbeats(1, 2, 0, 1))
	require.Eventually(t, func() bool { return c.inbox[2].len() == 1 }, waitFor, pollTick)

	require.NoError(t, c.nodes[2].Close())
	c.start(2, nil) // same address, new listener, empty inbox
	next := 1
	require.Eventually(t, func() bool {
		c.nodes[1].Send(heartbeats(1, 2, next, 1))
		next++
		return c.inbox[2].len() > 0
	}, waitFor, 10*time.Millisecond)
	require.GreaterOrEqual(t, c.nodes[1].Stats().Peers[2].Connects, uint64(2), "redialed")
	require.Contains(t, c.logs[1].String(), "connected")
}

func TestSendingToAnAbsentPeerBacksOffWithoutBlocking(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens: dials are refused
	logs := &logBuffer{}
	cfg := validConfig()
	cfg.Peers = map[uint64]string{2: dead}
	cfg.Logger = newTestLogger(logs)
	tr, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, tr.Start())
	defer tr.Close()

	start := time.Now()
	for i := range 100 {
		tr.Send(heartbeats(1, 2, 100*i, 100))
	}
	require.Less(t, time.Since(start), time.Second, "Send does not wait for the network")
	require.Eventually(t, func() bool { return tr.Stats().Peers[2].Dropped == 10000 }, waitFor, pollTick)
	require.Equal(t, 1, countLines(logs.String(), "level=WARN msg=\"dial failed\""), "one warning per run of failures")
}

// TestDialsFromLocalIP checks that outgoing connections carry Config.LocalIP
// as their source address (Linux routes all of 127/8 to the loopback).
func TestDialsFromLocalIP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	cfg := validConfig()
	cfg.Peers = map[uint64]string{2: ln.Addr().String()}
	cfg.LocalIP = net.ParseIP("127.0.0.2")
	cfg.KeepAlive, cfg.IdleTimeout = time.Hour, 3*time.Hour // no tick wakes the sender early
	tr, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, tr.Start())
	defer tr.Close()

	tr.Send(heartbeats(1, 2, 0, 3))
	conn, err := ln.Accept()
	require.NoError(t, err)
	defer conn.Close()
	require.Equal(t, "127.0.0.2", conn.RemoteAddr().(*net.TCPAddr).IP.String())
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(waitFor)))
	msgs, err := ReadFrame(bufio.NewReader(conn), 0)
	require.NoError(t, err)
	require.Equal(t, seq(0, 3), indexes(msgs), "the three messages went out as one frame")
}

func TestKeepalivesHoldAnIdleConnectionOpen(t *testing.T) {
	c := newCluster(t, 2, func(_ uint64, cfg *Config) {
		cfg.KeepAlive, cfg.IdleTimeout = 10*time.Millisecond, 200*time.Millisecond
	})
	c.nodes[1].Send(heartbeats(1, 2, 0, 1))
	require.Eventually(t, func() bool { return c.inbox[2].len() == 1 }, waitFor, pollTick)
	// Poll until well past several idle timeouts; the connection must survive.
	deadline := time.Now().Add(700 * time.Millisecond)
	require.Eventually(t, func() bool { return time.Now().After(deadline) }, waitFor, pollTick)
	c.nodes[1].Send(heartbeats(1, 2, 1, 1))
	require.Eventually(t, func() bool { return c.inbox[2].len() == 2 }, waitFor, pollTick)
	require.Equal(t, uint64(1), c.nodes[1].Stats().Peers[2].Connects)
	require.NotContains(t, c.logs[2].String(), "idle")
}

func TestCloseStopsEveryGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	c := newCluster(t, 3, nil)
	for from := uint64(1); from <= 3; from++ {
		c.nodes[from].Send(append(heartbeats(from, from%3+1, 0, 10), heartbeats(from, (from+1)%3+1, 0, 10)...))
	}
	require.Eventually(t, func() bool {
		return c.inbox[1].len() == 20 && c.inbox[2].len() == 20 && c.inbox[3].len() == 20
	}, waitFor, pollTick)
	require.Equal(t, 3*(1+2+2), transportGoroutines(), "per node: one accept loop, two senders, two readers")

	done := make(chan struct{})
	go func() {
		for _, tr := range c.nodes {
			require.NoError(t, tr.Close())
		}
		close(done)
	}()
	require.Eventually(t, func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}, waitFor, pollTick, "Close returns")
	// Eventually runs the condition on a goroutine of its own: hence before+1.
	require.Eventually(t, func() bool { return runtime.NumGoroutine() <= before+1 }, waitFor, pollTick)
	require.Zero(t, transportGoroutines(), "goroutines still in the transport")
	c.nodes[1].Send(heartbeats(1, 2, 0, 1)) // after Close: dropped, no panic
}

// transportGoroutines counts the goroutines running one of the
// transport's loops.
func transportGoroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, loop := range []string{"(*peer).run(", "(*Transport).acceptLoop(", "(*Transport).readConn("} {
		n += strings.Count(string(buf), "\nchaos/node/transport."+loop) // "created by" lines do not match
	}
	return n
}
