package watch_test

import "chaos/checker/watch"

// open starts a session from the watcher's resume point. The server
// refuses a start below the compacted revision (serving it under
// skipRefusal) and serves any other (refusing one above it under
// refuseEarly).
func (s *sim) open(w *watcher) {
	w.sessions++
	w.sess = &watch.Session{ID: w.sessions, Watcher: w.id, Key: w.key, RangeEnd: w.end, StartRevision: w.resume, Opened: s.now()}
	start, c := w.resume, s.st.compacted
	switch {
	case start > 0 && start < c && s.fault == skipRefusal && !s.plant.ok:
		s.plant = planted{ok: true, watcher: w.id, session: w.sess.ID, rev: start}
	case start > 0 && start < c:
		s.refuse(w, c)
		return
	case start > c && c > 0 && s.fault == refuseEarly && !s.plant.ok:
		s.plant = planted{ok: true, watcher: w.id, session: w.sess.ID, rev: c}
		s.refuse(w, c)
		return
	}
	w.sess.Responses = append(w.sess.Responses, watch.Response{Header: s.st.rev, Time: s.now()})
	w.next = start
	if start == 0 {
		w.next = s.st.rev + 1
	}
	if s.plant.ok && s.plant.session == w.sess.ID && s.plant.watcher == w.id && s.fault == skipRefusal {
		// Serve the planted session at once: a session that received
		// nothing may yet have been refused, as far as anyone can tell.
		s.deliver(w, int(s.st.rev-w.next+1))
		s.progress(w)
	}
}

// refuse cancels the open session for compaction at c; the client will
// restart no lower than c, accepting the loss.
func (s *sim) refuse(w *watcher, c int64) {
	w.sess.Responses = append(w.sess.Responses, watch.Response{Header: s.st.rev, Canceled: true, CompactRevision: c, Time: s.now()})
	w.resume = max(w.resume, c)
	s.end(w, "compacted")
}

// end records the open session as ended for reason.
func (s *sim) end(w *watcher, reason string) {
	w.sess.Ended, w.sess.EndedAt = reason, s.now()
	s.h.Sessions = append(s.h.Sessions, *w.sess)
	w.sess = nil
}

// inRange returns the events of revision rev the watcher watches, with
// previous values only if it asked for them.
func (s *sim) inRange(w *watcher, rev int64) []watch.Event {
	var out []watch.Event
	for _, e := range s.st.log[rev] {
		if !w.sess.Watches(e.Key) {
			continue
		}
		if !w.prevKV {
			e.PrevValue = nil
		}
		out = append(out, e)
	}
	return out
}

// deliver sends up to n pending revisions in one response (revisions with
// nothing in range are passed over silently, as etcd does).
func (s *sim) deliver(w *watcher, n int) {
	var evs []watch.Event
	for ; n > 0 && w.next <= s.st.rev; n-- {
		evs = append(evs, s.inRange(w, w.next)...)
		w.next++
	}
	if len(evs) == 0 {
		return
	}
	w.sess.Responses = append(w.sess.Responses, watch.Response{Header: s.st.rev, Events: evs, Time: s.now()})
	w.resume = evs[len(evs)-1].Revision + 1
}

// progress sends a progress notification at the current revision.
func (s *sim) progress(w *watcher) {
	w.sess.Responses = append(w.sess.Responses, watch.Response{Header: s.st.rev, ProgressNotify: true, Time: s.now()})
	w.resume = s.st.rev + 1
}

// pending returns the first undelivered event in the watcher's range, or
// nil.
func (s *sim) pending(w *watcher) *watch.Event {
	for r := w.next; r <= s.st.rev; r++ {
		if evs := s.inRange(w, r); len(evs) > 0 {
			return &evs[0]
		}
	}
	return nil
}

// finish ends the run: writes stop, every watcher not stuck reconnects if
// needed (twice at most: once refused, once served), receives everything
// and a progress notification at the final revision. Sessions still open
// stay open; the catch-up time is now.
func (s *sim) finish() watch.Options {
	for _, w := range s.ws {
		for try := 0; try < 2 && w.sess == nil; try++ {
			s.open(w)
		}
		if w.stuck || w.sess == nil {
			continue
		}
		s.deliver(w, int(s.st.rev-w.next+1))
		s.progress(w)
	}
	opts := watch.Options{FinalRevision: s.st.rev, CatchUpBy: s.now()}
	for _, w := range s.ws {
		if w.sess != nil {
			s.h.Sessions = append(s.h.Sessions, *w.sess)
		}
	}
	return opts
}
