package watch_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/checker/watch"
)

// handCase is a minimal history and what it must give: exactly the kinds
// in want (none: Valid), one anomaly naming rev and key when want is set.
type handCase struct {
	name string
	h    watch.History
	opts watch.Options
	want []watch.Kind
	rev  int64
	key  string
}

func runHand(t *testing.T, cases []handCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := watch.Check(c.h, c.opts)
			msg := explainAll(res)
			if len(c.want) == 0 {
				require.Equal(t, watch.Valid, res.Valid, msg)
				require.Empty(t, res.Anomalies)
				return
			}
			require.Equal(t, c.want, res.Kinds, msg)
			found := false
			for _, a := range res.Anomalies {
				require.NotEmpty(t, a.Explain())
				found = found || (a.Revision == c.rev && a.Key == c.key)
			}
			require.True(t, found, "no anomaly at revision %d key %q:\n%s", c.rev, c.key, msg)
			if c.want[0].IsInput() && len(c.want) == 1 {
				require.Equal(t, watch.Unknown, res.Valid, msg)
			} else {
				require.Equal(t, watch.Invalid, res.Valid, msg)
			}
		})
	}
}

func TestOrderedUniqueAtomic(t *testing.T) {
	runHand(t, []handCase{
		{name: "in order", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 1, batch(put(2, "a", "x")), batch(put(3, "a", "y")))}}},
		{name: "backwards", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 1, batch(put(3, "a", "y")), batch(put(2, "a", "x")))}},
			want: []watch.Kind{watch.OutOfOrder}, rev: 2, key: "a"},
		{name: "twice", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 1, batch(put(2, "a", "x")), batch(put(2, "a", "x")))}},
			want: []watch.Kind{watch.DuplicateEvent}, rev: 2, key: "a"},
		{name: "twice across a fresh start", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 1, batch(put(2, "a", "x"))),
			sess(1, 2, "a", 0, batch(put(2, "a", "x")))}},
			want: []watch.Kind{watch.DuplicateEvent}, rev: 2, key: "a"},
		{name: "again after a resume: below the start, not a duplicate", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 1, batch(put(2, "a", "x"))),
			sess(1, 2, "a", 3, batch(put(2, "a", "x")), batch(put(3, "a", "y")))}},
			want: []watch.Kind{watch.EventBeforeStart}, rev: 2, key: "a"},
		{name: "older after a fresh start", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 1, batch(put(2, "a", "x")), progressAt(5)),
			sess(1, 2, "a", 0, batch(put(4, "a", "z")))}},
			want: []watch.Kind{watch.LostEvent, watch.OutOfOrder}, rev: 4, key: "a"},
		{name: "one revision in one response", h: watch.History{Sessions: []watch.Session{
			ranged(sess(1, 1, "a", 1, batch(put(3, "a", "x"), put(3, "b", "y"))), "c")}}},
		{name: "one revision split", h: watch.History{Sessions: []watch.Session{
			ranged(sess(1, 1, "a", 1, batch(put(3, "a", "x")), batch(put(3, "b", "y"))), "c")}},
			want: []watch.Kind{watch.SplitRevision}, rev: 3, key: "b"},
		{name: "out of range", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 1, batch(put(3, "b", "x")))}},
			want: []watch.Kind{watch.OutOfRange}, rev: 3, key: "b"},
	})
}

func TestReliable(t *testing.T) {
	runHand(t, []handCase{
		{name: "gap the reference knows", h: watch.History{
			Writes:   []watch.Write{ack(3, "a", "y")},
			Sessions: []watch.Session{sess(1, 1, "a", 1, batch(put(2, "a", "x")), batch(put(4, "a", "z")))}},
			want: []watch.Kind{watch.LostEvent}, rev: 3, key: "a"},
		{name: "gap nobody knows", h: watch.History{
			Sessions: []watch.Session{sess(1, 1, "a", 1, batch(put(2, "a", "x")), batch(put(4, "a", "z")))}}},
		{name: "gap another watcher shows", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 1, batch(put(2, "a", "x")), batch(put(4, "a", "z"))),
			sess(2, 1, "a", 3, batch(put(3, "a", "y")), batch(put(4, "a", "z")))}},
			want: []watch.Kind{watch.LostEvent}, rev: 3, key: "a"},
		{name: "gap under a progress notification", h: watch.History{
			Writes:   []watch.Write{ack(3, "a", "y")},
			Sessions: []watch.Session{sess(1, 1, "a", 1, batch(put(2, "a", "x")), progressAt(3))}},
			want: []watch.Kind{watch.LostEvent}, rev: 3, key: "a"},
		{name: "beyond what was reached", h: watch.History{
			Writes:   []watch.Write{ack(3, "a", "y")},
			Sessions: []watch.Session{sess(1, 1, "a", 1, batch(put(2, "a", "x")))}}},
		{name: "a revision shown in part", h: watch.History{
			Writes: []watch.Write{ack(3, "a", "x"), ack(3, "b", "y")},
			Sessions: []watch.Session{ranged(sess(1, 1, "a", 1,
				batch(put(3, "a", "x")), batch(put(4, "a", "z"))), "c")}},
			want: []watch.Kind{watch.LostEvent}, rev: 3, key: "b"},
		{name: "key outside the range", h: watch.History{
			Writes:   []watch.Write{ack(3, "b", "y")},
			Sessions: []watch.Session{sess(1, 1, "a", 1, batch(put(2, "a", "x")), batch(put(4, "a", "z")))}}},
	})
}

func TestResumable(t *testing.T) {
	compaction := []watch.Compaction{{Revision: 10, Time: 0}}
	runHand(t, []handCase{
		{name: "event below the start", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 5, batch(put(4, "a", "x")), batch(put(5, "a", "y")))}},
			want: []watch.Kind{watch.EventBeforeStart}, rev: 4, key: "a"},
		{name: "first event late", h: watch.History{
			Writes:   []watch.Write{ack(5, "a", "x")},
			Sessions: []watch.Session{sess(1, 1, "a", 5, batch(put(6, "a", "y")))}},
			want: []watch.Kind{watch.LateStart}, rev: 5, key: "a"},
		{name: "from now, late after the creation", h: watch.History{
			Writes:   []watch.Write{ack(6, "a", "x")},
			Sessions: []watch.Session{sess(1, 1, "a", 0, watch.Response{Header: 5}, batch(put(7, "a", "y")))}},
			want: []watch.Kind{watch.LateStart}, rev: 6, key: "a"},
		{name: "from now, no creation response: nothing before the first event", h: watch.History{
			Writes:   []watch.Write{ack(6, "a", "x")},
			Sessions: []watch.Session{sess(1, 1, "a", 0, batch(put(7, "a", "y")))}}},
		{name: "refused below the compaction", h: watch.History{Compactions: compaction,
			Sessions: []watch.Session{sess(1, 1, "a", 3, compacted(10, 12))}}},
		{name: "served below the compaction", h: watch.History{Compactions: compaction,
			Sessions: []watch.Session{sess(1, 1, "a", 3, batch(put(11, "a", "x")))}},
			want: []watch.Kind{watch.NotRefusedAfterCompaction}, rev: 3},
		{name: "compaction acknowledged after the session opened", h: watch.History{
			Compactions: []watch.Compaction{{Revision: 10, Time: 5}},
			Sessions:    []watch.Session{sess(1, 1, "a", 3, batch(put(11, "a", "x")))}}},
		{name: "served at the compaction", h: watch.History{Compactions: compaction,
			Sessions: []watch.Session{sess(1, 1, "a", 10, batch(put(11, "a", "x")))}}},
		{name: "refused at the compaction", h: watch.History{Compactions: compaction,
			Sessions: []watch.Session{sess(1, 1, "a", 10, compacted(10, 12))}}},
		{name: "refused above the compaction", h: watch.History{Compactions: compaction,
			Sessions: []watch.Session{sess(1, 1, "a", 12, compacted(10, 12))}},
			want: []watch.Kind{watch.RefusedTooEarly}, rev: 10},
		{name: "canceled mid-stream past the compaction", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 5, batch(put(11, "a", "x")), compacted(10, 12))}},
			want: []watch.Kind{watch.RefusedTooEarly}, rev: 10},
		{name: "canceled mid-stream behind the compaction", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 5, batch(put(6, "a", "x")), compacted(10, 12))}}},
		{name: "resumed after the last event", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 1, batch(put(3, "a", "x"))), sess(1, 2, "a", 4, batch(put(5, "a", "y")))}}},
		{name: "resumed after a progress notification", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 1, batch(put(3, "a", "x")), progressAt(6)), sess(1, 2, "a", 7, batch(put(8, "a", "y")))}}},
		{name: "client resumed too far", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 1, batch(put(3, "a", "x"))), sess(1, 2, "a", 7, batch(put(8, "a", "y")))}},
			want: []watch.Kind{watch.BadResume}, rev: 7},
	})
}

func TestBookmarkable(t *testing.T) {
	runHand(t, []handCase{
		{name: "progress after the event", h: watch.History{Writes: []watch.Write{ack(3, "a", "x")},
			Sessions: []watch.Session{sess(1, 1, "a", 1, batch(put(3, "a", "x")), progressAt(5))}}},
		{name: "progress ahead of the event", h: watch.History{Writes: []watch.Write{ack(3, "a", "x")},
			Sessions: []watch.Session{sess(1, 1, "a", 1, progressAt(5), batch(put(3, "a", "x")))}},
			want: []watch.Kind{watch.ProgressAhead}, rev: 3, key: "a"},
		{name: "progress ahead of an event nobody else knows", h: watch.History{
			Sessions: []watch.Session{sess(1, 1, "a", 1, progressAt(5), batch(put(3, "a", "x")))}},
			want: []watch.Kind{watch.ProgressAhead}, rev: 3, key: "a"},
		{name: "progress backwards", h: watch.History{
			Sessions: []watch.Session{sess(1, 1, "a", 1, batch(put(3, "a", "x")), progressAt(5), progressAt(4))}},
			want: []watch.Kind{watch.ProgressBackwards}, rev: 4},
		{name: "progress below a delivered event", h: watch.History{
			Sessions: []watch.Session{sess(1, 1, "a", 1, batch(put(6, "a", "x")), progressAt(5))}},
			want: []watch.Kind{watch.ProgressBackwards}, rev: 5},
	})
}

func TestFields(t *testing.T) {
	one := func(evs ...watch.Event) []watch.Session {
		rs := make([]watch.Response, len(evs))
		for i, e := range evs {
			rs[i] = batch(e)
		}
		return []watch.Session{sess(1, 1, "a", 1, rs...)}
	}
	runHand(t, []handCase{
		{name: "consistent", h: watch.History{Writes: []watch.Write{ack(2, "a", "x")}, Sessions: one(
			withMeta(put(2, "a", "x"), 2, 1), withPrev(withMeta(put(3, "a", "y"), 2, 2), "x"),
			withPrev(del(4, "a"), "y"), withMeta(put(5, "a", "z"), 5, 1))}},
		{name: "value against the acknowledged write", h: watch.History{Writes: []watch.Write{ack(2, "a", "x")}, Sessions: one(put(2, "a", "w"))},
			want: []watch.Kind{watch.WrongValue}, rev: 2, key: "a"},
		{name: "two watchers disagree", h: watch.History{Sessions: []watch.Session{
			sess(1, 1, "a", 1, batch(put(2, "a", "x"))), sess(2, 1, "a", 1, batch(put(2, "a", "w")))}},
			want: []watch.Kind{watch.InconsistentRevision}, rev: 2, key: "a"},
		{name: "two acknowledged writes disagree", h: watch.History{Writes: []watch.Write{ack(2, "a", "x"), ack(2, "a", "w")},
			Sessions: []watch.Session{sess(1, 1, "a", 3, batch(put(3, "a", "y")))}},
			want: []watch.Kind{watch.InconsistentRevision}, rev: 2, key: "a"},
		{name: "previous value", h: watch.History{Sessions: one(put(2, "a", "x"), withPrev(put(3, "a", "y"), "w"))},
			want: []watch.Kind{watch.WrongPrevValue}, rev: 3, key: "a"},
		{name: "previous value after a delete", h: watch.History{Sessions: one(put(2, "a", "x"), del(3, "a"), withPrev(put(4, "a", "y"), "x"))},
			want: []watch.Kind{watch.WrongPrevValue}, rev: 4, key: "a"},
		{name: "previous value across an unknown revision", h: watch.History{Writes: []watch.Write{ack(2, "a", "x")},
			Sessions: []watch.Session{sess(1, 1, "a", 4, batch(withPrev(put(4, "a", "y"), "w")))}}},
		{name: "version after a put", h: watch.History{Sessions: one(withMeta(put(2, "a", "x"), 2, 1), withMeta(put(3, "a", "y"), 2, 1))},
			want: []watch.Kind{watch.WrongVersion}, rev: 3, key: "a"},
		{name: "create revision after a put", h: watch.History{Sessions: one(withMeta(put(2, "a", "x"), 2, 1), withMeta(put(3, "a", "y"), 3, 2))},
			want: []watch.Kind{watch.WrongCreateRevision}, rev: 3, key: "a"},
		{name: "create revision after a delete", h: watch.History{Sessions: one(withMeta(put(2, "a", "x"), 2, 1), del(3, "a"), withMeta(put(4, "a", "y"), 2, 1))},
			want: []watch.Kind{watch.WrongCreateRevision}, rev: 4, key: "a"},
		{name: "create revision after the put itself", h: watch.History{
			Sessions: []watch.Session{sess(1, 1, "a", 5, batch(withMeta(put(5, "a", "y"), 7, 2)))}},
			want: []watch.Kind{watch.WrongCreateRevision}, rev: 5, key: "a"},
		{name: "version 1 without creating", h: watch.History{
			Sessions: []watch.Session{sess(1, 1, "a", 5, batch(withMeta(put(5, "a", "y"), 3, 1)))}},
			want: []watch.Kind{watch.WrongVersion}, rev: 5, key: "a"},
		{name: "unknown predecessor", h: watch.History{
			Sessions: []watch.Session{sess(1, 1, "a", 5, batch(withMeta(put(5, "a", "y"), 3, 4)))}}},
	})
}

func TestCatchUp(t *testing.T) {
	open := func(rs ...watch.Response) []watch.Session {
		s := sess(1, 1, "a", 1, rs...)
		s.Ended, s.EndedAt = "", 0
		return []watch.Session{s}
	}
	opts := watch.Options{FinalRevision: 5, CatchUpBy: 25}
	closedLate := open(batch(put(3, "a", "x")))
	closedLate[0].Ended, closedLate[0].EndedAt = "closed", 100
	runHand(t, []handCase{
		{name: "caught up by progress", h: watch.History{Sessions: open(batch(put(3, "a", "x")), progressAt(5))}, opts: opts},
		{name: "caught up too late", h: watch.History{Sessions: open(batch(put(3, "a", "x")), progressAt(4), progressAt(5))}, opts: opts,
			want: []watch.Kind{watch.NotCaughtUp}, rev: 4},
		{name: "stopped", h: watch.History{Sessions: open(batch(put(3, "a", "x")))}, opts: opts,
			want: []watch.Kind{watch.NotCaughtUp}, rev: 3},
		{name: "closed by the client after the deadline", h: watch.History{Sessions: closedLate}, opts: opts,
			want: []watch.Kind{watch.NotCaughtUp}, rev: 3},
		{name: "closed before the deadline", h: watch.History{Sessions: []watch.Session{sess(1, 1, "a", 1, batch(put(3, "a", "x")))}}, opts: opts},
		{name: "not asked", h: watch.History{Sessions: open(batch(put(3, "a", "x")))}},
	})
}

// Unknown when nothing could be checked: never Valid by default.
func TestNothingChecked(t *testing.T) {
	require.Equal(t, watch.Unknown, watch.Check(watch.History{}, watch.Options{}).Valid)
	onlyCreated := watch.History{Writes: []watch.Write{ack(2, "a", "x")},
		Sessions: []watch.Session{sess(1, 1, "a", 0, watch.Response{Header: 3})}}
	require.Equal(t, watch.Unknown, watch.Check(onlyCreated, watch.Options{}).Valid)
}
