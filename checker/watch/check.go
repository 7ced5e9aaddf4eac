package watch

import (
	"fmt"
	"slices"
)

// run holds one Check's findings.
type run struct {
	out   []Anomaly
	stats Stats
}

// report records one anomaly; its detail is format applied to args.
func (r *run) report(k Kind, watcher, session int, rev int64, key, format string, args ...any) {
	r.out = append(r.out, Anomaly{Kind: k, Watcher: watcher, Session: session, Revision: rev, Key: key,
		Detail: fmt.Sprintf(format, args...) + "."})
}

// Check checks the watch sessions of h against the store's history that h's
// acknowledged writes and watch events reveal (see the package doc for the
// properties and what is decidable). It never panics on malformed input:
// what is malformed is reported as [BadInput] and left out.
func Check(h History, opts Options) Result {
	r := &run{}
	opts = r.validOptions(opts)
	writes := r.validWrites(h.Writes)
	compactions := r.validCompactions(h.Compactions)
	ss := r.sessions(h.Sessions)
	for _, s := range ss {
		r.stream(s)
	}
	r.resumes(ss)
	ref := r.buildReference(writes, ss)
	for _, s := range ss {
		r.reliable(s, ref)
	}
	r.compaction(ss, compactions)
	r.fields(ss, ref)
	r.catchUp(ss, opts)
	r.count(ss, ref)
	return r.result()
}

// count fills the statistics not counted along the way.
func (r *run) count(ss []*session, ref *reference) {
	r.stats.Sessions = len(ss)
	watchers := map[int]bool{}
	for _, s := range ss {
		watchers[s.Watcher] = true
	}
	r.stats.Watchers = len(watchers)
	r.stats.ReferenceEvents = len(ref.order)
	for i, k := range ref.order {
		if i == 0 || ref.order[i-1].rev != k.rev {
			r.stats.ReferenceRevisions++
		}
	}
}

// result sorts the anomalies, drops exact repeats, and decides the
// verdict: Invalid when an anomaly is against the server; else Unknown
// when some input was malformed or nothing was checked (no event,
// progress notification or cancellation was received); else Valid.
func (r *run) result() Result {
	slices.SortFunc(r.out, compareAnomalies)
	r.out = slices.Compact(r.out)
	res := Result{Anomalies: r.out, Stats: r.stats, Valid: Valid}
	if r.stats.Events+r.stats.Progress+r.stats.Cancellations == 0 {
		res.Valid = Unknown
	}
	for _, a := range r.out {
		if len(res.Kinds) == 0 || res.Kinds[len(res.Kinds)-1] != a.Kind {
			res.Kinds = append(res.Kinds, a.Kind)
		}
		switch {
		case !a.Kind.IsInput():
			res.Valid = Invalid
		case res.Valid == Valid:
			res.Valid = Unknown
		}
	}
	return res
}
