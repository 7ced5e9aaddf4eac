package transport

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQueueBoundsAndSwapsBuffers(t *testing.T) {
	q := newQueue(3)
	for _, m := range heartbeats(1, 2, 0, 5) {
		q.push(m)
		q.wake()
	}
	require.Len(t, q.ready, 1, "wake-ups coalesce")
	require.False(t, q.push(heartbeats(1, 2, 9, 1)[0]), "full")

	got := q.swap(nil)
	require.Equal(t, seq(0, 3), indexes(got), "the oldest are kept, the newest dropped")
	require.True(t, q.push(heartbeats(1, 2, 7, 1)[0]))
	again := q.swap(got)
	require.Equal(t, []uint64{7}, indexes(again))
	require.Empty(t, q.swap(nil))
}
