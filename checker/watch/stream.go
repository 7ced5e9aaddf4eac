package watch

// streamState is what the stream checks remember while walking one
// session's responses in order.
type streamState struct {
	last     int64 // highest revision accepted so far
	lastResp int   // the response that delivered it, -1 before any
	header   int64 // highest progress header so far
	split    map[int64]bool
}

// stream checks one session's stream on its own: ordered (revisions never
// go back), unique (no event twice), atomic (a revision in one response),
// events in range and not below the start, and progress headers that never
// go back. It fills ss.accepted, delivered, first, reached and lb.
func (r *run) stream(ss *session) {
	st := streamState{lastResp: -1, split: map[int64]bool{}}
	p := 0
	for _, d := range ss.all {
		for ; p < len(ss.progress) && ss.progress[p].resp < d.resp; p++ {
			r.progressNote(ss, ss.progress[p], &st)
		}
		r.accept(ss, d, &st)
	}
	for ; p < len(ss.progress); p++ {
		r.progressNote(ss, ss.progress[p], &st)
	}
	if ss.compact != nil {
		ss.compact.reached = ss.reached
	}
	ss.lb = window(ss)
}

// accept judges one delivered event against the stream so far.
func (r *run) accept(ss *session, d delivery, st *streamState) {
	k := revKey{d.Revision, d.Key}
	switch {
	case !ss.Watches(d.Key):
		r.report(OutOfRange, ss.Watcher, ss.ID, d.Revision, d.Key,
			"watcher %d, session %d, watches %s but got an event for key %q at revision %d", ss.Watcher, ss.ID, rangeText(ss.Session), d.Key, d.Revision)
		return
	case ss.StartRevision > 0 && d.Revision < ss.StartRevision:
		r.report(EventBeforeStart, ss.Watcher, ss.ID, d.Revision, d.Key,
			"watcher %d, session %d, asked to start at revision %d but got key %q's event at revision %d", ss.Watcher, ss.ID, ss.StartRevision, d.Key, d.Revision)
		return
	}
	if first, dup := ss.delivered[k]; dup {
		r.report(DuplicateEvent, ss.Watcher, ss.ID, d.Revision, d.Key,
			"watcher %d, session %d, got key %q's event at revision %d twice: in response %d and again in response %d", ss.Watcher, ss.ID, d.Key, d.Revision, first, d.resp)
		return
	}
	ss.delivered[k] = d.resp
	ss.accepted = append(ss.accepted, d)
	if ss.first == 0 {
		ss.first = d.Revision
	}
	ss.reached = max(ss.reached, d.Revision)
	switch {
	case d.Revision < st.last:
		r.report(OutOfOrder, ss.Watcher, ss.ID, d.Revision, d.Key,
			"watcher %d, session %d, got key %q's event at revision %d after an event at revision %d", ss.Watcher, ss.ID, d.Key, d.Revision, st.last)
	case d.Revision == st.last && d.resp != st.lastResp:
		if !st.split[d.Revision] {
			r.report(SplitRevision, ss.Watcher, ss.ID, d.Revision, d.Key,
				"watcher %d, session %d, got the events of revision %d in more than one response: key %q came in response %d, after others of that revision in response %d", ss.Watcher, ss.ID, d.Revision, d.Key, d.resp, st.lastResp)
		}
		st.split[d.Revision] = true
		st.lastResp = d.resp
	default:
		st.last, st.lastResp = d.Revision, d.resp
	}
}

// progressNote judges one progress notification against the stream so
// far: its header must not be below an earlier header or an event already
// delivered.
func (r *run) progressNote(ss *session, n note, st *streamState) {
	switch {
	case n.header < st.header:
		r.report(ProgressBackwards, ss.Watcher, ss.ID, n.header, "",
			"watcher %d, session %d, got a progress notification at revision %d after one at revision %d", ss.Watcher, ss.ID, n.header, st.header)
	case n.header < st.last:
		r.report(ProgressBackwards, ss.Watcher, ss.ID, n.header, "",
			"watcher %d, session %d, got a progress notification at revision %d after an event at revision %d", ss.Watcher, ss.ID, n.header, st.last)
	}
	st.header = max(st.header, n.header)
	ss.reached = max(ss.reached, n.header)
}

// window returns the lowest revision ss is known to have asked for. For a
// "from now" session the true start is the store's revision at creation
// plus one, which the checker does not see; both the creation response's
// header plus one and the first event's revision are at or above it, so
// the lower of the two is a safe bound (it never demands an event from
// before the watch began). 0 means not known.
func window(ss *session) int64 {
	if ss.StartRevision > 0 {
		return ss.StartRevision
	}
	lb := int64(0)
	if ss.creation >= 0 {
		lb = ss.creation + 1
	}
	if ss.first > 0 && (lb == 0 || ss.first < lb) {
		lb = ss.first
	}
	return lb
}
