package watch

// resumes checks each watcher's sessions against the ones before them:
// that the client resumed where it had stopped ([BadResume] otherwise,
// which is the client's doing, not the server's), and that a "from now"
// session delivers nothing the watcher already had or had passed. A
// resumed session (StartRevision > 0) needs no such check: when the resume
// was right, an event the watcher already had is below its start, which
// the stream check reports as [EventBeforeStart].
func (r *run) resumes(ss []*session) {
	for i := 1; i < len(ss); i++ {
		if ss[i].Watcher != ss[i-1].Watcher {
			continue
		}
		prev, next := ss[i-1], ss[i]
		if next.StartRevision == 0 {
			r.fromNow(ss[:i], next)
			continue
		}
		if want := resumePoint(prev); want > 0 && next.StartRevision != want {
			r.report(BadResume, next.Watcher, next.ID, next.StartRevision, "",
				"watcher %d resumed at revision %d in session %d, but session %d had reached revision %d, so it should have resumed at %d; checks across the two sessions were skipped",
				next.Watcher, next.StartRevision, next.ID, prev.ID, prev.reached, want)
		}
	}
}

// resumePoint returns the revision a client resumes from after s: the one
// after the highest it reached, or s's own start if it reached nothing. It
// returns 0 when there is no single right answer: s was canceled for
// compaction (the client restarts wherever it accepts the loss from), or s
// started "from now" and reached nothing.
func resumePoint(s *session) int64 {
	switch {
	case s.compact != nil:
		return 0
	case s.reached > 0:
		return s.reached + 1
	default:
		return s.StartRevision
	}
}

// fromNow checks a "from now" session against the watcher's earlier
// sessions, which all ended before it began: every event it delivers was
// written after it began, so after everything they received.
func (r *run) fromNow(earlier []*session, s *session) {
	var mark int64
	seen := map[revKey]int{}
	for _, e := range earlier {
		if e.Watcher != s.Watcher {
			continue
		}
		mark = max(mark, e.reached)
		for k := range e.delivered {
			seen[k] = e.ID
		}
	}
	for _, d := range s.accepted {
		k := revKey{d.Revision, d.Key}
		if id, dup := seen[k]; dup {
			r.report(DuplicateEvent, s.Watcher, s.ID, d.Revision, d.Key,
				"watcher %d got key %q's event at revision %d in session %d and again in session %d, which started from now", s.Watcher, d.Key, d.Revision, id, s.ID)
		} else if d.Revision <= mark {
			r.report(OutOfOrder, s.Watcher, s.ID, d.Revision, d.Key,
				"watcher %d had reached revision %d in earlier sessions, yet session %d, started from now, got key %q's event at revision %d", s.Watcher, mark, s.ID, d.Key, d.Revision)
		}
	}
}

// compaction checks how each session met compactions: one asked to start
// below a compaction acknowledged before it was opened must be refused
// ([NotRefusedAfterCompaction] if served instead), and one canceled for
// compaction at C must have needed a revision at or below C
// ([RefusedTooEarly] otherwise). A start exactly at C is accepted either
// way: compacting at C keeps revision C, and etcd serves a watch from C.
func (r *run) compaction(ss []*session, cs []Compaction) {
	for _, s := range ss {
		var c int64
		for _, x := range cs {
			if x.Time < s.Opened {
				c = max(c, x.Revision)
			}
		}
		if s.StartRevision > 0 && s.StartRevision < c && s.served {
			r.report(NotRefusedAfterCompaction, s.Watcher, s.ID, s.StartRevision, "",
				"watcher %d, session %d, asked to start at revision %d after the compaction at revision %d was acknowledged, and was served instead of refused",
				s.Watcher, s.ID, s.StartRevision, c)
		}
		if s.compact == nil {
			continue
		}
		if need := needed(s); need > s.compact.compact {
			r.report(RefusedTooEarly, s.Watcher, s.ID, s.compact.compact, "",
				"watcher %d, session %d, was canceled for compaction at revision %d, but the next revision it needed was %d, which was not compacted",
				s.Watcher, s.ID, s.compact.compact, need)
		}
	}
}

// needed returns the next revision s needed when it was canceled: the one
// after the highest it had reached, and at least its start. It returns 0
// when not known: a "from now" session that had reached nothing.
func needed(s *session) int64 {
	if s.compact.reached > 0 {
		return max(s.StartRevision, s.compact.reached+1)
	}
	return s.StartRevision
}
