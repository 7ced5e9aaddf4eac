package transport

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/raft"
)

// requireClosedByServer waits for the server to close conn: a read must
// fail with EOF or a reset, not time out.
func requireClosedByServer(t *testing.T, conn net.Conn) {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(waitFor)))
	_, err := conn.Read(make([]byte, 1))
	require.Error(t, err)
	require.False(t, errors.Is(err, os.ErrDeadlineExceeded), "connection left open: %v", err)
}

func TestGarbageClosesThatConnectionAndServingContinues(t *testing.T) {
	c := newCluster(t, 2, func(_ uint64, cfg *Config) {
		cfg.MaxFrameBytes = 1 << 20
		cfg.FrameTimeout = 100 * time.Millisecond
	})
	badCRC := frame(batchPayload(AppendMessage(nil, heartbeats(1, 2, 0, 1)[0])))
	badCRC[5] ^= 0xff
	random := make([]byte, 4096)
	r := rand.New(rand.NewPCG(11, 12))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	cases := map[string][]byte{
		"huge length prefix":    binary.LittleEndian.AppendUint32(nil, 0xffffffff),
		"length above bound":    binary.LittleEndian.AppendUint32(nil, 1<<20+1),
		"bad checksum":          badCRC,
		"undecodable payload":   frame([]byte{1, 5, 1, 2, 3, 4, 5}),
		"addressed elsewhere":   frame(batchPayload(AppendMessage(nil, heartbeats(1, 3, 0, 1)[0]))),
		"from a non-member":     frame(batchPayload(AppendMessage(nil, heartbeats(9, 2, 0, 1)[0]))),
		"random bytes":          random,
		"stalled partial frame": frame(make([]byte, 100))[:20],
	}
	next := 0
	for name, garbage := range cases {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", c.addrs[2])
			require.NoError(t, err)
			defer conn.Close()
			_, err = conn.Write(garbage)
			require.NoError(t, err)
			requireClosedByServer(t, conn)
			require.Contains(t, c.logs[2].String(), "remote="+conn.LocalAddr().String(), "the log names the remote")

			c.nodes[1].Send(heartbeats(1, 2, next, 1))
			next++
			require.Eventually(t, func() bool { return c.inbox[2].len() == next }, waitFor, pollTick,
				"the transport keeps serving its peers")
		})
	}
	require.Equal(t, uint64(len(cases)), c.nodes[2].Stats().RejectedConns)
	require.Equal(t, len(cases), countLines(c.logs[2].String(), "bad input"))
}

func TestSilentConnectionIsClosedAfterIdleTimeout(t *testing.T) {
	c := newCluster(t, 1, func(_ uint64, cfg *Config) {
		cfg.KeepAlive, cfg.IdleTimeout = 10*time.Millisecond, 50*time.Millisecond
	})
	conn, err := net.Dial("tcp", c.addrs[1])
	require.NoError(t, err)
	defer conn.Close()
	requireClosedByServer(t, conn)
	require.Contains(t, c.logs[1].String(), "idle")
}

func TestInboundConnectionsAreBounded(t *testing.T) {
	c := newCluster(t, 1, func(_ uint64, cfg *Config) { cfg.MaxInbound = 2 })
	for range 2 {
		conn, err := net.Dial("tcp", c.addrs[1])
		require.NoError(t, err)
		defer conn.Close()
	}
	conn, err := net.Dial("tcp", c.addrs[1])
	require.NoError(t, err)
	defer conn.Close()
	requireClosedByServer(t, conn)
	require.Contains(t, c.logs[1].String(), "too many connections")
	require.Equal(t, uint64(1), c.nodes[1].Stats().RejectedConns)
}

func TestHandlerNeverSeesAnEmptyBatch(t *testing.T) {
	c := newCluster(t, 2, func(id uint64, cfg *Config) {
		handle := cfg.Handler
		cfg.Handler = func(msgs []raft.Message) {
			if len(msgs) == 0 {
				panic("empty batch delivered")
			}
			handle(msgs)
		}
		cfg.KeepAlive, cfg.IdleTimeout = 5*time.Millisecond, time.Second
	})
	c.nodes[1].Send(heartbeats(1, 2, 0, 1))
	require.Eventually(t, func() bool { return c.inbox[2].len() == 1 }, waitFor, pollTick)
	// Let several keepalive frames flow, then prove the link still works.
	deadline := time.Now().Add(50 * time.Millisecond)
	require.Eventually(t, func() bool { return time.Now().After(deadline) }, waitFor, pollTick)
	c.nodes[1].Send(heartbeats(1, 2, 1, 1))
	require.Eventually(t, func() bool { return c.inbox[2].len() == 2 }, waitFor, pollTick)
}
