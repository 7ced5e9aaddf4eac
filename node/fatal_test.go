package node

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/eventlog"
)

// A node whose write of a new term fails stops as a killed node does: its
// event log ends with the role event of the term it never persisted, which
// the raft check excuses only as a life's last event, and no stop event.
func TestAFailedWriteEndsTheEventLogWithoutAStop(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Config{Name: "n1", DataDir: dir, ClientAddr: "127.0.0.1:0", PeerAddr: "127.0.0.1:0",
		Peers:             map[string]string{"n1": "127.0.0.1:1"},
		HeartbeatInterval: 10 * time.Millisecond, ElectionTimeout: 100 * time.Millisecond,
		RequestTimeout: time.Second, Seed: 1})
	require.NoError(t, err)
	require.NoError(t, s.disk.close()) // every write from here on fails
	require.NoError(t, s.Start())

	select {
	case err := <-s.Failed():
		assert.ErrorContains(t, err, "persist")
	case <-time.After(10 * time.Second):
		t.Fatal("the event loop did not fail on a closed WAL within 10 s")
	}
	_ = s.Stop(context.Background())

	evs := readEvents(t, s, dir)
	last := evs[len(evs)-1]
	assert.Equal(t, eventlog.KindRole, last.Event, "the life ends with the role change whose write failed: %+v", evs)
	assert.Equal(t, uint64(1), last.Term, "a single node campaigns into term 1 from term 0")
	for _, e := range evs {
		assert.NotEqual(t, eventlog.KindStop, e.Event, "no stop event after a fatal error")
	}
}
