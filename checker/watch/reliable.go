package watch

import "sort"

// reliable checks that ss delivered every event the reference knows in its
// range within [lb, reached], and delivered each before any progress
// notification whose header covers it.
//
// A missed event below the session's first delivered event is a
// [LateStart] (the stream began late: resumable); any other miss is a
// [LostEvent] (a gap: reliable). An event delivered after a progress
// notification that covered it is [ProgressAhead]. Revisions the reference
// does not know demand nothing: the checker cannot tell whether they hold
// an event in range.
func (r *run) reliable(ss *session, ref *reference) {
	if ss.lb == 0 || ss.reached < ss.lb {
		return
	}
	from := sort.Search(len(ref.order), func(i int) bool { return ref.order[i].rev >= ss.lb })
	for _, k := range ref.order[from:] {
		if k.rev > ss.reached {
			break
		}
		if !ss.Watches(k.key) {
			continue
		}
		r.stats.Obligations++
		resp, ok := ss.delivered[k]
		switch {
		case ok:
			r.promised(ss, k, resp)
		case ss.first > 0 && k.rev < ss.first:
			r.report(LateStart, ss.Watcher, ss.ID, k.rev, k.key,
				"watcher %d, session %d, started at revision %d, but its first event was at revision %d: it never got key %q's event at revision %d",
				ss.Watcher, ss.ID, ss.lb, ss.first, k.key, k.rev)
		default:
			r.report(LostEvent, ss.Watcher, ss.ID, k.rev, k.key,
				"watcher %d, session %d, reached revision %d (from revision %d) but never got key %q's event at revision %d, which %s shows",
				ss.Watcher, ss.ID, ss.reached, ss.lb, k.key, k.rev, ref.events[k].from)
		}
	}
}

// promised reports [ProgressAhead] when event k, delivered in response
// resp, came after a progress notification whose header covers it.
func (r *run) promised(ss *session, k revKey, resp int) {
	for _, n := range ss.progress {
		if n.resp > resp {
			return
		}
		if n.header >= k.rev {
			r.report(ProgressAhead, ss.Watcher, ss.ID, k.rev, k.key,
				"watcher %d, session %d, got a progress notification at revision %d in response %d, but key %q's event at revision %d came only later, in response %d",
				ss.Watcher, ss.ID, n.header, n.resp, k.key, k.rev, resp)
			return
		}
	}
}
