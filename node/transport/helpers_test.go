package transport

import (
	"bytes"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/raft"
)

// Bounds for polling real sockets; generous so a loaded CI machine does not flake.
const (
	waitFor  = 10 * time.Second
	pollTick = 2 * time.Millisecond
)

// randomMessage returns a message of type typ with every field filled from
// r, mixing zero, small and full-width values. Empty slices are nil, as
// DecodeMessage returns them.
func randomMessage(r *rand.Rand, typ raft.MessageType) raft.Message {
	m := raft.Message{
		Type: typ, From: randU64(r), To: randU64(r), Term: randU64(r), LogTerm: randU64(r),
		Index: randU64(r), Commit: randU64(r), Reject: r.IntN(2) == 1, RejectHint: randU64(r),
		Context: randU64(r), Transfer: r.IntN(2) == 1,
	}
	if n := r.IntN(6); n > 0 {
		m.Entries = make([]raft.Entry, n)
		for i := range m.Entries {
			m.Entries[i] = raft.Entry{Term: randU64(r), Index: randU64(r), Type: raft.EntryType(r.IntN(3)), Data: randBytes(r, 300)}
		}
	}
	if r.IntN(3) == 0 {
		m.Snapshot = &raft.Snapshot{
			Meta: raft.SnapshotMeta{Index: randU64(r), Term: randU64(r)},
			Data: randBytes(r, 2000),
		}
		for _, ids := range []*[]uint64{&m.Snapshot.Meta.ConfState.Voters, &m.Snapshot.Meta.ConfState.Learners} {
			if n := r.IntN(6); n > 0 {
				*ids = make([]uint64, n)
				for i := range *ids {
					(*ids)[i] = randU64(r)
				}
			}
		}
	}
	return m
}

func randU64(r *rand.Rand) uint64 {
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return r.Uint64N(128)
	case 2:
		return r.Uint64N(1 << 20)
	default:
		return r.Uint64()
	}
}

// randBytes returns up to max random bytes, nil when empty.
func randBytes(r *rand.Rand, max int) []byte {
	n := r.IntN(max + 1)
	if n == 0 || r.IntN(4) == 0 {
		return nil
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// allTypes lists every raft message type.
func allTypes() []raft.MessageType {
	var ts []raft.MessageType
	for t := raft.MessageType(0); t < 255; t++ {
		if t.Valid() {
			ts = append(ts, t)
		}
	}
	return ts
}

// msgApp is a MsgApp from 1 to 2 with n entries of size bytes each.
func msgApp(n, size int) raft.Message {
	m := raft.Message{Type: raft.MsgApp, From: 1, To: 2, Term: 7, LogTerm: 7, Index: 1000, Commit: 990}
	for i := range n {
		m.Entries = append(m.Entries, raft.Entry{Term: 7, Index: uint64(1001 + i), Data: bytes.Repeat([]byte{'x'}, size)})
	}
	return m
}

// logBuffer is a goroutine-safe io.Writer collecting log output.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// inbox records the messages a transport delivers and when they arrived.
type inbox struct {
	mu       sync.Mutex
	msgs     []raft.Message
	arrivals []time.Time
}

func (in *inbox) handle(msgs []raft.Message) {
	now := time.Now()
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, m := range msgs {
		in.msgs = append(in.msgs, m)
		in.arrivals = append(in.arrivals, now)
	}
}

func (in *inbox) len() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.msgs)
}

func (in *inbox) snapshot() ([]raft.Message, []time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]raft.Message(nil), in.msgs...), append([]time.Time(nil), in.arrivals...)
}

// cluster is a set of started transports on 127.0.0.1, ids 1..n.
type cluster struct {
	t      testing.TB
	addrs  map[uint64]string
	nodes  map[uint64]*Transport
	inbox  map[uint64]*inbox
	logs   map[uint64]*logBuffer
	adjust func(id uint64, cfg *Config)
}

// newCluster starts n transports that know each other, each configured by
// adjust (may be nil) after the defaults of the test harness are set.
func newCluster(t testing.TB, n int, adjust func(id uint64, cfg *Config)) *cluster {
	t.Helper()
	c := &cluster{t: t, addrs: map[uint64]string{}, nodes: map[uint64]*Transport{},
		inbox: map[uint64]*inbox{}, logs: map[uint64]*logBuffer{}, adjust: adjust}
	listeners := map[uint64]net.Listener{}
	for id := uint64(1); id <= uint64(n); id++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		listeners[id], c.addrs[id] = ln, ln.Addr().String()
	}
	for id, ln := range listeners {
		c.start(id, ln)
	}
	t.Cleanup(c.closeAll)
	return c
}

// start starts node id on ln (nil: listen on its address again).
func (c *cluster) start(id uint64, ln net.Listener) {
	c.t.Helper()
	c.inbox[id], c.logs[id] = &inbox{}, &logBuffer{}
	cfg := Config{
		ID: id, Listen: c.addrs[id], Listener: ln, Peers: c.addrs, Handler: c.inbox[id].handle,
		Logger: newTestLogger(c.logs[id]),
		Rand:   rand.New(rand.NewPCG(id, 42)),
	}
	if c.adjust != nil {
		c.adjust(id, &cfg)
	}
	tr, err := New(cfg)
	require.NoError(c.t, err)
	require.NoError(c.t, tr.Start())
	c.nodes[id] = tr
}

func (c *cluster) closeAll() {
	for _, tr := range c.nodes {
		require.NoError(c.t, tr.Close())
	}
}

// msgs returns n heartbeats from -> to whose Index runs first, first+1, ...
func heartbeats(from, to uint64, first, n int) []raft.Message {
	out := make([]raft.Message, n)
	for i := range out {
		out[i] = raft.Message{Type: raft.MsgHeartbeat, From: from, To: to, Term: 1, Index: uint64(first + i)}
	}
	return out
}

// indexes returns the Index of each message.
func indexes(msgs []raft.Message) []uint64 {
	out := make([]uint64, len(msgs))
	for i, m := range msgs {
		out[i] = m.Index
	}
	return out
}

// seq returns first, first+1, ..., first+n-1.
func seq(first, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(first + i)
	}
	return out
}

func newTestLogger(w *logBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// countLines counts the lines of s containing sub.
func countLines(s, sub string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			n++
		}
	}
	return n
}
