package watch_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/checker/watch"
)

// Malformed input is reported as bad-input, left out, and makes the
// verdict Unknown, never a panic.
func TestBadInput(t *testing.T) {
	good := func() watch.Session { return sess(1, 1, "a", 1, batch(put(2, "a", "x"))) }
	with := func(f func(s *watch.Session)) []watch.Session {
		s := good()
		f(&s)
		return []watch.Session{s}
	}
	cases := map[string]struct {
		h    watch.History
		opts watch.Options
	}{
		"responses out of time order": {h: watch.History{Sessions: with(func(s *watch.Session) {
			s.Responses = append(s.Responses, batch(put(3, "a", "y")))
			s.Responses[1].Time = 5
		})}},
		"event at revision 0":          {h: watch.History{Sessions: with(func(s *watch.Session) { s.Responses[0].Events[0].Revision = 0 })}},
		"event at a negative revision": {h: watch.History{Sessions: with(func(s *watch.Session) { s.Responses[0].Events[0].Revision = -3 })}},
		"event with an empty key":      {h: watch.History{Sessions: with(func(s *watch.Session) { s.Responses[0].Events[0].Key = "" })}},
		"negative version":             {h: watch.History{Sessions: with(func(s *watch.Session) { s.Responses[0].Events[0].Version = -1 })}},
		"delete with a value":          {h: watch.History{Sessions: with(func(s *watch.Session) { s.Responses[0].Events[0].Delete = true })}},
		"negative start":               {h: watch.History{Sessions: with(func(s *watch.Session) { s.StartRevision = -1 })}},
		"empty key":                    {h: watch.History{Sessions: with(func(s *watch.Session) { s.Key = "" })}},
		"empty range":                  {h: watch.History{Sessions: with(func(s *watch.Session) { s.RangeEnd = "a" })}},
		"negative header":              {h: watch.History{Sessions: with(func(s *watch.Session) { s.Responses[0].Header = -1 })}},
		"progress with events":         {h: watch.History{Sessions: with(func(s *watch.Session) { s.Responses[0].ProgressNotify = true })}},
		"cancel with events":           {h: watch.History{Sessions: with(func(s *watch.Session) { s.Responses[0].Canceled = true })}},
		"compact revision without cancel": {h: watch.History{Sessions: with(func(s *watch.Session) {
			s.Responses = append(s.Responses, watch.Response{CompactRevision: 2, Time: 90})
		})}},
		"response after a cancel": {h: watch.History{Sessions: with(func(s *watch.Session) {
			s.Responses = append(s.Responses, watch.Response{Canceled: true, Time: 90}, batch(put(3, "a", "y")))
			s.Responses[2].Time = 95
		})}},
		"two sessions with one ID":     {h: watch.History{Sessions: append(with(func(*watch.Session) {}), good())}},
		"write at revision 0":          {h: watch.History{Writes: []watch.Write{ack(0, "a", "x")}, Sessions: with(func(*watch.Session) {})}},
		"write at a negative revision": {h: watch.History{Writes: []watch.Write{ack(-2, "a", "x")}, Sessions: with(func(*watch.Session) {})}},
		"write with an empty key":      {h: watch.History{Writes: []watch.Write{ack(2, "", "x")}, Sessions: with(func(*watch.Session) {})}},
		"negative compaction":          {h: watch.History{Compactions: []watch.Compaction{{Revision: -1}}, Sessions: with(func(*watch.Session) {})}},
		"negative options":             {h: watch.History{Sessions: with(func(*watch.Session) {})}, opts: watch.Options{FinalRevision: -1, CatchUpBy: -1}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			res := watch.Check(c.h, c.opts)
			require.Equal(t, []watch.Kind{watch.BadInput}, res.Kinds, explainAll(res))
			require.Equal(t, watch.Unknown, res.Valid)
		})
	}
}

// The rest of a history with bad input is still checked.
func TestBadInputRestChecked(t *testing.T) {
	s := sess(1, 1, "a", 1, batch(put(3, "a", "y")), batch(put(2, "a", "x"), watch.Event{Key: "a"}))
	res := watch.Check(watch.History{Sessions: []watch.Session{s}}, watch.Options{})
	require.Equal(t, []watch.Kind{watch.BadInput, watch.OutOfOrder}, res.Kinds, explainAll(res))
	require.Equal(t, watch.Invalid, res.Valid)
}

// Randomly mangled histories never make the checker panic, and every
// anomaly explains itself.
func TestMangledNoPanic(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 0))
	for seed := uint64(1); seed <= 8; seed++ {
		h, opts, _ := simulate(seed, 120, noFault)
		for range 40 {
			mangle(rng, &h)
		}
		res := watch.Check(h, opts)
		for _, a := range res.Anomalies {
			require.NotEmpty(t, a.Explain())
		}
	}
}

// mangle changes one field of h to an odd value, or swaps two responses.
func mangle(rng *rand.Rand, h *watch.History) {
	odd := []int64{-5, -1, 0, 1, 3, 1 << 40}
	v := odd[rng.IntN(len(odd))]
	if len(h.Sessions) == 0 {
		return
	}
	s := &h.Sessions[rng.IntN(len(h.Sessions))]
	switch rng.IntN(6) {
	case 0:
		s.StartRevision = v
	case 1:
		s.RangeEnd = []string{"", "\x00", "a", "k3"}[rng.IntN(4)]
	}
	if len(s.Responses) == 0 {
		return
	}
	i, j := rng.IntN(len(s.Responses)), rng.IntN(len(s.Responses))
	r := &s.Responses[i]
	switch rng.IntN(5) {
	case 0:
		s.Responses[i], s.Responses[j] = s.Responses[j], s.Responses[i]
	case 1:
		r.Header, r.Time = v, v
	case 2:
		r.ProgressNotify, r.Canceled, r.CompactRevision = rng.IntN(2) == 0, rng.IntN(2) == 0, v
	default:
		if len(r.Events) > 0 {
			e := &r.Events[rng.IntN(len(r.Events))]
			e.Revision, e.CreateRevision, e.Version = v, odd[rng.IntN(len(odd))], odd[rng.IntN(len(odd))]
		}
	}
	h.Writes = append(h.Writes, watch.Write{Revision: v, Key: "k1"})
}
