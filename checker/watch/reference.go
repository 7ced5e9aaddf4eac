package watch

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// refEvent is what the reference knows of one (revision, key) event.
type refEvent struct {
	value  string
	delete bool
	// acked says an acknowledged write gave the event: its content is
	// then the client's own and outranks any watch event.
	acked bool
	// conflict says two sources the checker cannot rank disagreed on the
	// content: the event exists, but checks that need its content skip it.
	conflict bool
	// create and version are the event's create revision and version as
	// the first event that carried them said; 0 = not known.
	create, version int64
	// from names the first source, for explanations.
	from string
}

// reference is the store's history as far as anyone showed it: every
// (revision, key) event some acknowledged write or some watch event
// names. A revision it does not hold is a gap in knowledge (a write whose
// acknowledgement was lost and that no watcher showed), never an anomaly.
type reference struct {
	events map[revKey]*refEvent
	// order holds the events sorted by revision, then key.
	order []revKey
	// byKey holds each key's known revisions, ascending.
	byKey map[string][]int64
}

// buildReference merges the acknowledged writes and every well-formed
// watch event into one reference. Conflicts are anomalies: two
// acknowledged writes, or two watch events when no write was acknowledged,
// that disagree on one (revision, key) are [InconsistentRevision]; a watch
// event that disagrees with the acknowledged write is [WrongValue]. Which
// key a revision holds is not checked across sources: an acknowledged
// write missing from a revision a watcher showed in part is the watcher's
// lost event (see reliable.go), decided per session.
func (r *run) buildReference(writes []Write, ss []*session) *reference {
	ref := &reference{events: map[revKey]*refEvent{}, byKey: map[string][]int64{}}
	for _, w := range writes {
		r.mergeWrite(ref, w)
	}
	for _, s := range ss {
		for _, d := range s.all {
			r.mergeEvent(ref, s, d)
		}
	}
	for k := range ref.events {
		ref.order = append(ref.order, k)
	}
	slices.SortFunc(ref.order, func(a, b revKey) int {
		return cmp.Or(cmp.Compare(a.rev, b.rev), strings.Compare(a.key, b.key))
	})
	for _, k := range ref.order {
		ref.byKey[k.key] = append(ref.byKey[k.key], k.rev)
	}
	return ref
}

// mergeWrite adds one acknowledged write.
func (r *run) mergeWrite(ref *reference, w Write) {
	k := revKey{w.Revision, w.Key}
	e, ok := ref.events[k]
	if !ok {
		ref.events[k] = &refEvent{value: w.Value, delete: w.Delete, acked: true, from: "an acknowledged write"}
		return
	}
	if e.value != w.Value || e.delete != w.Delete {
		e.conflict = true
		r.report(InconsistentRevision, noSession, noSession, w.Revision, w.Key,
			"two acknowledged writes both changed key %q at revision %d: %s and %s", w.Key, w.Revision, content(e.value, e.delete), content(w.Value, w.Delete))
	}
}

// mergeEvent adds one watch event delivered to s.
func (r *run) mergeEvent(ref *reference, s *session, d delivery) {
	k := revKey{d.Revision, d.Key}
	here := fmt.Sprintf("watcher %d, session %d", s.Watcher, s.ID)
	e, ok := ref.events[k]
	if !ok {
		ref.events[k] = &refEvent{value: d.Value, delete: d.Delete, create: d.CreateRevision, version: d.Version, from: here}
		return
	}
	switch {
	case e.value == d.Value && e.delete == d.Delete:
	case e.acked:
		r.report(WrongValue, s.Watcher, s.ID, d.Revision, d.Key,
			"%s, got %s for key %q at revision %d, but the acknowledged write there was %s", here, content(d.Value, d.Delete), d.Key, d.Revision, content(e.value, e.delete))
	default:
		e.conflict = true
		r.report(InconsistentRevision, s.Watcher, s.ID, d.Revision, d.Key,
			"%s, got %s for key %q at revision %d, but %s showed %s there", here, content(d.Value, d.Delete), d.Key, d.Revision, e.from, content(e.value, e.delete))
	}
	r.mergeMeta(e, s, d, here)
}

// mergeMeta adds the create revision and version d carries, if any.
func (r *run) mergeMeta(e *refEvent, s *session, d delivery, here string) {
	if (d.CreateRevision != 0 && e.create != 0 && d.CreateRevision != e.create) ||
		(d.Version != 0 && e.version != 0 && d.Version != e.version) {
		r.report(InconsistentRevision, s.Watcher, s.ID, d.Revision, d.Key,
			"%s, got key %q at revision %d with create revision %d and version %d, but an earlier event said create revision %d and version %d",
			here, d.Key, d.Revision, d.CreateRevision, d.Version, e.create, e.version)
		return
	}
	if e.create == 0 {
		e.create = d.CreateRevision
	}
	if e.version == 0 {
		e.version = d.Version
	}
}

// content describes an event's content: a put of a value, or a delete.
func content(value string, del bool) string {
	if del {
		return "a delete"
	}
	return fmt.Sprintf("a put of %q", value)
}

// previous returns the highest revision below rev at which the reference
// knows an event of key, or 0.
func (ref *reference) previous(key string, rev int64) int64 {
	revs := ref.byKey[key]
	i, _ := slices.BinarySearch(revs, rev)
	if i == 0 {
		return 0
	}
	return revs[i-1]
}
