package watch

import "fmt"

// noSession is the Watcher and Session of an anomaly about no session.
const noSession = -1

// validWrites returns the writes that are well formed (a revision above
// 0, a key) and reports the others as [BadInput]; they are left out.
func (r *run) validWrites(ws []Write) []Write {
	out := make([]Write, 0, len(ws))
	for i, w := range ws {
		if w.Revision <= 0 || w.Key == "" {
			r.report(BadInput, noSession, noSession, w.Revision, w.Key,
				"acknowledged write %d has revision %d and key %q; a write needs a revision above 0 and a key, so it was left out", i, w.Revision, w.Key)
			continue
		}
		out = append(out, w)
	}
	return out
}

// validCompactions returns the compactions with a revision above 0 and a
// time not below 0, reporting the others as [BadInput].
func (r *run) validCompactions(cs []Compaction) []Compaction {
	out := make([]Compaction, 0, len(cs))
	for i, c := range cs {
		if c.Revision <= 0 || c.Time < 0 {
			r.report(BadInput, noSession, noSession, c.Revision, "",
				"compaction %d has revision %d and time %d; it needs a revision above 0 and a time not below 0, so it was left out", i, c.Revision, c.Time)
			continue
		}
		out = append(out, c)
	}
	return out
}

// validOptions returns opts with each malformed field reported as
// [BadInput] and set to 0, which turns its check off.
func (r *run) validOptions(opts Options) Options {
	if opts.FinalRevision < 0 {
		r.report(BadInput, noSession, noSession, opts.FinalRevision, "",
			"the final revision %d is negative; the catch-up check is off", opts.FinalRevision)
		opts.FinalRevision = 0
	}
	if opts.CatchUpBy < 0 {
		r.report(BadInput, noSession, noSession, 0, "",
			"the catch-up time %d is negative; the catch-up check is off", opts.CatchUpBy)
		opts.CatchUpBy = 0
	}
	return opts
}

// sessionProblem says why s cannot be checked at all, or returns "".
func sessionProblem(s *Session) string {
	switch {
	case s.StartRevision < 0:
		return fmt.Sprintf("its start revision %d is negative", s.StartRevision)
	case s.Key == "":
		return "it watches the empty key"
	case s.RangeEnd != "" && s.RangeEnd != "\x00" && s.RangeEnd <= s.Key:
		return fmt.Sprintf("its range [%q, %q) is empty", s.Key, s.RangeEnd)
	}
	return ""
}

// responseProblem says why response i of s is left out, or returns "".
// canceled says whether an earlier response of s canceled the watch.
func responseProblem(resp *Response, canceled bool) string {
	switch {
	case canceled:
		return "it came after the watch was canceled"
	case resp.Header < 0:
		return fmt.Sprintf("its header revision %d is negative", resp.Header)
	case resp.CompactRevision < 0:
		return fmt.Sprintf("its compact revision %d is negative", resp.CompactRevision)
	case resp.ProgressNotify && len(resp.Events) > 0:
		return "it is a progress notification that carries events"
	case resp.Canceled && len(resp.Events) > 0:
		return "it cancels the watch and carries events"
	case resp.CompactRevision > 0 && !resp.Canceled:
		return "it has a compact revision but does not cancel the watch"
	}
	return ""
}

// eventProblem says why ev is left out, or returns "".
func eventProblem(ev *Event) string {
	switch {
	case ev.Revision <= 0:
		return fmt.Sprintf("its revision %d is not above 0", ev.Revision)
	case ev.Key == "":
		return "its key is empty"
	case ev.CreateRevision < 0 || ev.Version < 0:
		return fmt.Sprintf("its create revision %d or version %d is negative", ev.CreateRevision, ev.Version)
	case ev.Delete && ev.Value != "":
		return "it is a delete that carries a value"
	}
	return ""
}
