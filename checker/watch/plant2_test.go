package watch_test

import "chaos/checker/watch"

// earlyStart puts, ahead of a resumed session's first events, the highest
// acknowledged event in its range below its start.
func earlyStart(h *watch.History) planted {
	for i := range h.Sessions {
		s := &h.Sessions[i]
		ps := eventsOf(s)
		if s.StartRevision <= 1 || len(ps) == 0 {
			continue
		}
		var best *watch.Write
		for j := range h.Writes {
			w := &h.Writes[j]
			if w.Revision < s.StartRevision && s.Watches(w.Key) && (best == nil || w.Revision > best.Revision) {
				best = w
			}
		}
		if best == nil {
			continue
		}
		e := watch.Event{Revision: best.Revision, Key: best.Key, Value: best.Value, Delete: best.Delete}
		resp := &s.Responses[ps[0].r]
		resp.Events = append([]watch.Event{e}, resp.Events...)
		return mark(s, &e)
	}
	return planted{}
}

// lateStart removes a resumed session's first batch of events, when every
// event in it was acknowledged and more batches follow.
func lateStart(h *watch.History) planted {
	acked := ackedSet(h)
	for i := range h.Sessions {
		s := &h.Sessions[i]
		ps := eventsOf(s)
		if s.StartRevision == 0 || len(ps) == 0 || ps[len(ps)-1].r == ps[0].r {
			continue
		}
		r := ps[0].r
		all := true
		for _, e := range s.Responses[r].Events {
			all = all && acked[watch.Write{Revision: e.Revision, Key: e.Key}]
		}
		if !all {
			continue
		}
		out := mark(s, &s.Responses[r].Events[0])
		s.Responses = append(s.Responses[:r:r], s.Responses[r+1:]...)
		return out
	}
	return planted{}
}

// wrongValue changes the value of one acknowledged put a watcher got.
func wrongValue(h *watch.History) planted {
	acked := ackedSet(h)
	for i := range h.Sessions {
		s := &h.Sessions[i]
		for _, p := range eventsOf(s) {
			e := at(s, p)
			if e.Delete || !acked[watch.Write{Revision: e.Revision, Key: e.Key}] {
				continue
			}
			e.Value = "corrupt"
			return mark(s, e)
		}
	}
	return planted{}
}

// wrongPrev changes the previous value of an event whose key's previous
// event was a put the same session delivered.
func wrongPrev(h *watch.History) planted {
	for i := range h.Sessions {
		s := &h.Sessions[i]
		last := map[string]*watch.Event{}
		for _, p := range eventsOf(s) {
			e := at(s, p)
			if prev := last[e.Key]; prev != nil && !prev.Delete && e.PrevValue != nil {
				bad := "corrupt"
				e.PrevValue = &bad
				return mark(s, e)
			}
			last[e.Key] = e
		}
	}
	return planted{}
}
