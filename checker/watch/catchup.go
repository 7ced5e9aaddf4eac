package watch

// catchUp checks that every session open at the end had reached
// opts.FinalRevision, by events or a progress notification, by
// opts.CatchUpBy. A session counts as open at the end when Ended is "", or
// "closed" by the client after CatchUpBy; one opened after CatchUpBy is
// not held to it. Off when either option is 0.
func (r *run) catchUp(ss []*session, opts Options) {
	if opts.FinalRevision == 0 || opts.CatchUpBy == 0 {
		return
	}
	for _, s := range ss {
		open := s.Ended == "" || (s.Ended == "closed" && s.EndedAt > opts.CatchUpBy)
		if !open || s.Opened > opts.CatchUpBy {
			continue
		}
		reached := reachedBy(s, opts.CatchUpBy)
		if reached < opts.FinalRevision {
			r.report(NotCaughtUp, s.Watcher, s.ID, reached, "",
				"watcher %d, session %d, was still open at the end but had reached only revision %d by %d ns, not the final revision %d",
				s.Watcher, s.ID, reached, opts.CatchUpBy, opts.FinalRevision)
		}
	}
}

// reachedBy returns the highest revision s reached, by an accepted event
// or a progress notification, in responses received by time t.
func reachedBy(s *session, t int64) int64 {
	var reached int64
	for _, d := range s.accepted {
		if d.time <= t {
			reached = max(reached, d.Revision)
		}
	}
	for _, n := range s.progress {
		if n.time <= t {
			reached = max(reached, n.header)
		}
	}
	return reached
}
