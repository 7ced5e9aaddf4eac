package transport

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/raft"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newTestShaper(seed uint64, limit int) *shaper {
	return newShaper(rand.New(rand.NewPCG(seed, seed)), limit)
}

func TestShaperWithoutFaultsPassesEverythingInOrder(t *testing.T) {
	s := newTestShaper(1, 100)
	require.Zero(t, s.admit(heartbeats(1, 2, 0, 10), Faults{}, t0))
	require.Equal(t, seq(0, 10), indexes(s.take(Faults{}, t0)))
	require.Zero(t, s.pending())
	require.Empty(t, s.take(Faults{}, t0))
}

func TestShaperLoss(t *testing.T) {
	s := newTestShaper(2, 10000)
	require.Equal(t, 100, s.admit(heartbeats(1, 2, 0, 100), Faults{Loss: 1}, t0))
	require.Empty(t, s.take(Faults{}, t0))

	dropped := s.admit(heartbeats(1, 2, 0, 2000), Faults{Loss: 0.5}, t0)
	require.InDelta(t, 1000, dropped, 100)
	require.Len(t, s.take(Faults{}, t0), 2000-dropped)
}

func TestShaperDuplicate(t *testing.T) {
	s := newTestShaper(3, 100)
	require.Zero(t, s.admit(heartbeats(1, 2, 0, 3), Faults{Duplicate: 1}, t0))
	require.Equal(t, []uint64{0, 0, 1, 1, 2, 2}, indexes(s.take(Faults{}, t0)))
}

func TestShaperDelayHoldsUntilDue(t *testing.T) {
	s := newTestShaper(4, 100)
	f := Faults{Delay: 100 * time.Millisecond}
	s.admit(heartbeats(1, 2, 0, 5), f, t0)
	s.admit(heartbeats(1, 2, 5, 5), f, t0.Add(time.Millisecond))
	due, ok := s.next()
	require.True(t, ok)
	require.Equal(t, t0.Add(100*time.Millisecond), due)

	require.Empty(t, s.take(f, t0.Add(99*time.Millisecond)))
	require.Equal(t, seq(0, 5), indexes(s.take(f, t0.Add(100*time.Millisecond))))
	require.Equal(t, seq(5, 5), indexes(s.take(f, t0.Add(time.Second))))
	_, ok = s.next()
	require.False(t, ok)
}

func TestShaperJitterStaysWithinBounds(t *testing.T) {
	s := newTestShaper(5, 1000)
	f := Faults{Delay: 10 * time.Millisecond, Jitter: 20 * time.Millisecond}
	s.admit(heartbeats(1, 2, 0, 500), f, t0)
	var released []uint64
	for now := t0; s.pending() > 0; now = now.Add(time.Millisecond) {
		out := s.take(f, now)
		if len(out) > 0 {
			require.False(t, now.Before(t0.Add(f.Delay)), "released before Delay")
			// due < Delay+Jitter, and takes happen each millisecond
			require.False(t, now.After(t0.Add(f.Delay+f.Jitter)), "released after Delay+Jitter")
		}
		released = append(released, indexes(out)...)
	}
	require.ElementsMatch(t, seq(0, 500), released)
	require.NotEqual(t, seq(0, 500), released, "jitter of 20ms over 500 messages reorders some")
}

func TestShaperReorderHoldsBackUntilAfterTheNextBatch(t *testing.T) {
	s := newTestShaper(6, 100)
	all := Faults{Reorder: 1}
	s.admit(heartbeats(1, 2, 0, 3), all, t0)
	require.Empty(t, s.take(all, t0), "every message held back")
	s.admit(heartbeats(1, 2, 3, 2), Faults{}, t0)
	require.Equal(t, []uint64{3, 4, 0, 1, 2}, indexes(s.take(Faults{}, t0)), "held after the next batch")
	require.Zero(t, s.pending())

	s.admit(heartbeats(1, 2, 10, 2), all, t0)
	require.Empty(t, s.take(all, t0))
	require.Equal(t, []uint64{10, 11}, indexes(s.take(Faults{}, t0)), "released by an empty take (the keepalive tick)")
}

func TestShaperReorderLosesAndDuplicatesNothing(t *testing.T) {
	s := newTestShaper(7, 1000)
	f := Faults{Reorder: 0.3}
	var out []uint64
	for i := range 100 {
		s.admit(heartbeats(1, 2, 5*i, 5), f, t0)
		out = append(out, indexes(s.take(f, t0))...)
	}
	out = append(out, indexes(s.take(Faults{}, t0))...)
	require.ElementsMatch(t, seq(0, 500), out)
	require.NotEqual(t, seq(0, 500), out)
}

func TestShaperBoundsWhatItHolds(t *testing.T) {
	s := newTestShaper(8, 10)
	f := Faults{Delay: time.Second}
	require.Equal(t, 5, s.admit(heartbeats(1, 2, 0, 15), f, t0))
	require.Equal(t, 10, s.pending())
	require.Equal(t, 2, s.admit(heartbeats(1, 2, 15, 1), Faults{Delay: time.Second, Duplicate: 1}, t0),
		"both copies of a duplicated message count against the bound")
	require.Equal(t, seq(0, 10), indexes(s.take(f, t0.Add(time.Second))))
}

func TestShaperIsReproducibleFromItsSeed(t *testing.T) {
	f := Faults{Loss: 0.2, Duplicate: 0.2, Delay: 5 * time.Millisecond, Jitter: 10 * time.Millisecond, Reorder: 0.2}
	run := func() []uint64 {
		s := newTestShaper(9, 1000)
		var out []uint64
		now := t0
		for i := range 50 {
			s.admit(heartbeats(1, 2, 4*i, 4), f, now)
			now = now.Add(time.Millisecond)
			out = append(out, indexes(s.take(f, now))...)
		}
		return append(out, indexes(s.take(Faults{}, now.Add(time.Minute)))...)
	}
	require.Equal(t, run(), run())
}

func TestShaperReleasesMessageReferences(t *testing.T) {
	s := newTestShaper(10, 100)
	big := raft.Message{Type: raft.MsgApp, To: 2, Entries: []raft.Entry{{Data: make([]byte, 10)}}}
	s.admit([]raft.Message{big, big}, Faults{}, t0)
	s.take(Faults{Reorder: 0.5}, t0)
	s.take(Faults{}, t0)
	s.take(Faults{}, t0)
	for _, buf := range [][]raft.Message{s.out[:cap(s.out)], s.ready[:cap(s.ready)], s.held[:cap(s.held)], s.spare[:cap(s.spare)]} {
		for _, m := range buf {
			require.Nil(t, m.Entries, "a buffer keeps a sent message alive")
		}
	}
}
