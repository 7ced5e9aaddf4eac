package watch

import (
	"cmp"
	"slices"
)

// revKey names one event of the store: a key at a revision.
type revKey struct {
	rev int64
	key string
}

// delivery is one well-formed event as a session received it, with the
// index of its response in Session.Responses and the response's time.
type delivery struct {
	Event
	resp int
	time int64
}

// note is a progress notification: its response index, header and time.
type note struct {
	resp   int
	header int64
	time   int64
}

// cancellation is a response that canceled the watch for compaction.
type cancellation struct {
	resp    int
	compact int64
	// reached is what the session had reached before it (see
	// session.reached).
	reached int64
}

// session is one well-formed Session as the checks see it. Malformed
// responses and events are already left out (and reported).
type session struct {
	*Session
	// all holds every well-formed event in delivery order: evidence for
	// the reference, whatever the checks think of it.
	all []delivery
	// accepted holds the events the stream checks let through: in range,
	// not below the start, not a duplicate. Out-of-order and split events
	// are accepted: they were delivered, only not as promised.
	accepted []delivery
	// delivered maps each accepted event to the response that first
	// delivered it.
	delivered map[revKey]int
	progress  []note
	// creation is the header of the creation response (the first response,
	// when it carries nothing else), or -1.
	creation int64
	compact  *cancellation
	// served says whether an event or progress notification came before
	// any cancellation.
	served bool
	// lb is the lowest revision the session is known to have asked for
	// (StartRevision, or for a "from now" session a bound derived in
	// window), and reached the highest revision it is known to have
	// reached: its highest accepted event or progress header. Every event
	// of the reference in range within [lb, reached] must be delivered.
	// lb is 0 when not known; then nothing is required.
	lb, reached int64
	// first is the revision of the first accepted event, 0 if none.
	first int64
}

// sessions validates the sessions, reports the malformed ones (and
// malformed responses and events within the others), and returns the rest
// sorted by watcher and ID. Of two sessions with one watcher and ID, the
// second is left out.
func (r *run) sessions(in []Session) []*session {
	sorted := make([]*Session, 0, len(in))
	for i := range in {
		s := &in[i]
		if p := sessionProblem(s); p != "" {
			r.report(BadInput, s.Watcher, s.ID, s.StartRevision, s.Key, "session %d of watcher %d was left out: %s", s.ID, s.Watcher, p)
			continue
		}
		sorted = append(sorted, s)
	}
	slices.SortStableFunc(sorted, func(a, b *Session) int {
		return cmp.Or(cmp.Compare(a.Watcher, b.Watcher), cmp.Compare(a.ID, b.ID))
	})
	out := make([]*session, 0, len(sorted))
	for i, s := range sorted {
		if i > 0 && sorted[i-1].Watcher == s.Watcher && sorted[i-1].ID == s.ID {
			r.report(BadInput, s.Watcher, s.ID, 0, "", "watcher %d has two sessions with ID %d; the second was left out", s.Watcher, s.ID)
			continue
		}
		out = append(out, r.collect(s))
	}
	return out
}

// collect gathers the well-formed responses and events of s, reporting the
// others.
func (r *run) collect(s *Session) *session {
	ss := &session{Session: s, creation: -1, delivered: map[revKey]int{}}
	canceled := false
	var last int64
	for i := range s.Responses {
		resp := &s.Responses[i]
		if p := responseProblem(resp, canceled); p != "" {
			r.report(BadInput, s.Watcher, s.ID, resp.Header, "", "response %d of session %d was left out: %s", i, s.ID, p)
			continue
		}
		if i > 0 && resp.Time < last {
			r.report(BadInput, s.Watcher, s.ID, resp.Header, "",
				"response %d of session %d was received at %d ns, before the response ahead of it (%d ns); the checks follow the order given", i, s.ID, resp.Time, last)
		}
		last = max(last, resp.Time)
		r.stats.Responses++
		canceled = resp.Canceled
		r.classify(ss, i, resp)
	}
	return ss
}

// classify files response i of ss as a creation confirmation, a progress
// notification, a cancellation or a batch of events.
func (r *run) classify(ss *session, i int, resp *Response) {
	switch {
	case resp.ProgressNotify:
		r.stats.Progress++
		ss.progress = append(ss.progress, note{resp: i, header: resp.Header, time: resp.Time})
		ss.served = true
	case resp.Canceled:
		r.stats.Cancellations++
		if resp.CompactRevision > 0 {
			ss.compact = &cancellation{resp: i, compact: resp.CompactRevision}
		}
	case len(resp.Events) == 0:
		if i == 0 {
			ss.creation = resp.Header
		}
	default:
		ss.served = true
		for j := range resp.Events {
			ev := &resp.Events[j]
			if p := eventProblem(ev); p != "" {
				r.report(BadInput, ss.Watcher, ss.ID, ev.Revision, ev.Key, "event %d of response %d of session %d was left out: %s", j, i, ss.ID, p)
				continue
			}
			r.stats.Events++
			ss.all = append(ss.all, delivery{Event: *ev, resp: i, time: resp.Time})
		}
	}
}
