package watch_test

import "chaos/checker/watch"

// A plant rewrites one place of a correct history into a violation and
// says where; ok is false when the history offers no place for it. Each
// picks the first suitable place, in session order, so it is
// deterministic.
type plant func(h *watch.History) planted

// pos is one event of a session: response r, event e.
type pos struct{ r, e int }

// eventsOf lists the positions of s's events in delivery order.
func eventsOf(s *watch.Session) []pos {
	var out []pos
	for r, resp := range s.Responses {
		for e := range resp.Events {
			out = append(out, pos{r, e})
		}
	}
	return out
}

// ackedSet returns the (revision, key) pairs of the acknowledged writes.
func ackedSet(h *watch.History) map[watch.Write]bool {
	out := map[watch.Write]bool{}
	for _, w := range h.Writes {
		out[watch.Write{Revision: w.Revision, Key: w.Key}] = true
	}
	return out
}

func at(s *watch.Session, p pos) *watch.Event { return &s.Responses[p.r].Events[p.e] }

func mark(s *watch.Session, e *watch.Event) planted {
	return planted{ok: true, watcher: s.Watcher, session: s.ID, rev: e.Revision, key: e.Key}
}

// dropEvent removes one acknowledged event that is neither the first nor
// the last of its session: a gap.
func dropEvent(h *watch.History) planted {
	acked := ackedSet(h)
	for i := range h.Sessions {
		s := &h.Sessions[i]
		ps := eventsOf(s)
		if len(ps) < 3 {
			continue
		}
		for _, p := range ps[1 : len(ps)-1] {
			e := at(s, p)
			if !acked[watch.Write{Revision: e.Revision, Key: e.Key}] {
				continue
			}
			out := mark(s, e)
			resp := &s.Responses[p.r]
			resp.Events = append(resp.Events[:p.e:p.e], resp.Events[p.e+1:]...)
			if len(resp.Events) == 0 {
				s.Responses = append(s.Responses[:p.r:p.r], s.Responses[p.r+1:]...)
			}
			return out
		}
	}
	return planted{}
}

// duplicate sends a session's first batch of events twice.
func duplicate(h *watch.History) planted {
	for i := range h.Sessions {
		s := &h.Sessions[i]
		for r, resp := range s.Responses {
			if len(resp.Events) == 0 {
				continue
			}
			dup := resp
			dup.Events = append([]watch.Event(nil), resp.Events...)
			s.Responses = append(s.Responses[:r+1:r+1], append([]watch.Response{dup}, s.Responses[r+1:]...)...)
			return mark(s, &resp.Events[0])
		}
	}
	return planted{}
}

// reorder swaps the events of two adjacent responses, keeping their times.
func reorder(h *watch.History) planted {
	for i := range h.Sessions {
		s := &h.Sessions[i]
		for r := 1; r < len(s.Responses); r++ {
			a, b := &s.Responses[r-1], &s.Responses[r]
			if len(a.Events) == 0 || len(b.Events) == 0 {
				continue
			}
			out := mark(s, &a.Events[0])
			a.Events, b.Events = b.Events, a.Events
			return out
		}
	}
	return planted{}
}

// split moves the second event of a multi-event revision, and those after
// it, into a response of their own right after.
func split(h *watch.History) planted {
	for i := range h.Sessions {
		s := &h.Sessions[i]
		for r, resp := range s.Responses {
			for e := 1; e < len(resp.Events); e++ {
				if resp.Events[e].Revision != resp.Events[e-1].Revision {
					continue
				}
				out := mark(s, &resp.Events[e])
				tail := resp
				tail.Events = append([]watch.Event(nil), resp.Events[e:]...)
				s.Responses[r].Events = resp.Events[:e:e]
				s.Responses = append(s.Responses[:r+1:r+1], append([]watch.Response{tail}, s.Responses[r+1:]...)...)
				return out
			}
		}
	}
	return planted{}
}
