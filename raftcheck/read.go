package raftcheck

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"chaos/eventlog"
	"chaos/node/kv"
)

// The checks read a run's event logs once, each node's events in file
// order, and keep only what their rules need, so that a long run's logs
// (a few million lines a node) are checked in the memory of their rare
// events. Most lines are applies and commits, one of each per log entry
// and node; of those the rules need little:
//
//   - commit indexes going down within a life: found as they are read
//     (nodeReader.commit);
//   - State Machine Safety: the term and hash of each index's applies
//     (appliedTable, 16 bytes an index);
//   - the leaders' majorities: the lowest index applied with an entry of
//     each term (runEvents.firstApplied);
//   - the load's start: the earliest apply of a client command;
//   - the per-node rules read of them only the highest index applied
//     between two other events (durableState, knownStretches) and whether
//     a life ends with a role change (checkNode): each stretch of applies
//     and commits between two other events is kept as one of its events,
//     its apply of the highest index, or its last commit when it has no
//     apply;
//   - foreignlog's analysis (analyze) reads of them only when the run's
//     first and last events were, each node's first, and whether anything
//     followed the last stop: each node's earliest, and the latest of all,
//     are kept.
//
// Every other event is kept whole. The kept events are real events of
// the logs, in the order the whole slice would have them, and every rule
// that reads them alone sees what it would see in all the events.

// orderKey orders events as [Raft]'s slice has them: for a run directory
// by time, then in eventlog.LoadRun's order (node directories in order,
// each in file order: seq counts the events read); for a slice, by its
// position (t zero).
type orderKey struct {
	t   time.Time
	seq int64
}

func (k orderKey) compare(o orderKey) int { return cmp.Or(k.t.Compare(o.t), cmp.Compare(k.seq, o.seq)) }

// An eventSource gives every event of a run to fn with its key, each
// node's events in file order, and returns the readers' warnings. It can
// be called again and gives the same events; fn must not keep the
// pointer.
type eventSource func(fn func(k orderKey, e *eventlog.Event) error) ([]string, error)

// runFiles is the source of the event logs of the run directory runDir
// (eventlog.ScanRun).
func runFiles(runDir string) eventSource {
	return func(fn func(orderKey, *eventlog.Event) error) ([]string, error) {
		seq := int64(0)
		return eventlog.ScanRun(runDir, func(_ string, e *eventlog.Event) error {
			seq++
			return fn(orderKey{t: e.Time, seq: seq}, e)
		})
	}
}

// sliceSource is the source of events as Raft takes them: each node's
// events in the order of their lines (ties in slice order), nodes by name.
func sliceSource(events []eventlog.Event) eventSource {
	return func(fn func(orderKey, *eventlog.Event) error) ([]string, error) {
		order := make([]int, len(events))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			return cmp.Or(strings.Compare(events[a].Node, events[b].Node), cmp.Compare(events[a].Line, events[b].Line))
		})
		for _, i := range order {
			if err := fn(orderKey{seq: int64(i)}, &events[i]); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
}

// runEvents is what the checks keep of a run's event logs (see the top of
// this file).
type runEvents struct {
	events  []eventlog.Event // kept, in key order
	count   int              // every event read
	skipped []string         // the readers' warnings
	// commits are the commit indexes found going down as the events
	// were read, and stateMachine State Machine Safety's violations.
	commits, stateMachine []Violation
	// firstApplied maps each term to the lowest index applied with an
	// entry of it.
	firstApplied map[uint64]uint64
	clientApply  time.Time // the earliest apply of a client command; zero for none
}

// readEvents reads the events of src once (and the applies of the indexes
// that break State Machine Safety a second time, see appliedTable).
func readEvents(src eventSource) (*runEvents, error) {
	r := &runEvents{firstApplied: map[uint64]uint64{}}
	rd := &reader{out: r, nodes: map[string]*nodeReader{}, applied: newAppliedTable(), noop: kv.Hash(nil)}
	skipped, err := src(rd.add)
	if err != nil {
		return nil, err
	}
	r.skipped = skipped
	rd.finish()
	if len(rd.applied.conflicts) > 0 {
		if r.stateMachine, err = rd.applied.violations(src); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// keyed is a kept event and its key.
type keyed struct {
	k  orderKey
	ev eventlog.Event
}

// reader is the state of one reading of a source.
type reader struct {
	out      *runEvents
	nodes    map[string]*nodeReader
	lastName string      // the node of the last event read, and
	last     *nodeReader // its reader
	kept     []keyed
	applied  *appliedTable
	noop     string // the hash of the empty entry a new leader appends
	// term and termFirst are the last term applied and its entry in
	// out.firstApplied, which most applies leave as it is.
	term, termFirst uint64
	// latest is the last apply or commit of all by time (then key), when
	// latestSeen.
	latest     keyed
	latestSeen bool
}

// nodeReader is what a reader follows of one node.
type nodeReader struct {
	commit uint64 // the highest commit index in this life
	// stretch stands for the applies and commits read since the node's
	// last kept event, when inStretch.
	stretch   keyed
	inStretch bool
	// earliest is the node's first apply or commit by time (then key),
	// when earliestSeen.
	earliest     keyed
	earliestSeen bool
}

// bulk reports whether e is one of the events a log holds one of per
// entry: an apply or a commit.
func bulk(e *eventlog.Event) bool {
	return e.Event == eventlog.KindApply || e.Event == eventlog.KindCommit
}

// add reads the next event.
func (rd *reader) add(k orderKey, e *eventlog.Event) error {
	rd.out.count++
	n := rd.node(e.Node)
	if !bulk(e) {
		rd.endStretch(n)
		if e.Event == eventlog.KindStart {
			n.commit = 0
		}
		rd.kept = append(rd.kept, keyed{k, *e})
		return nil
	}
	if e.Event == eventlog.KindCommit {
		if e.Index < n.commit {
			rd.out.commits = append(rd.out.commits, violation(KindCommitDecreased, *e,
				"%s commit index went from %d down to %d", e.Node, n.commit, e.Index))
		}
		n.commit = max(n.commit, e.Index)
	} else {
		rd.apply(e)
	}
	n.take(k, e)
	if analyzable(e) && (!rd.latestSeen || analysisOrder(k, e, &rd.latest) > 0) {
		rd.latest, rd.latestSeen = keyed{k, *e}, true
	}
	return nil
}

// node returns the reader of the node named name.
func (rd *reader) node(name string) *nodeReader {
	if rd.last != nil && name == rd.lastName {
		return rd.last
	}
	n := rd.nodes[name]
	if n == nil {
		n = &nodeReader{}
		rd.nodes[name] = n
	}
	rd.lastName, rd.last = name, n
	return n
}

// apply takes what the cross-node rules need of an apply.
func (rd *reader) apply(e *eventlog.Event) {
	rd.applied.observe(e.Index, e.Term, e.Hash)
	if e.Term != rd.term || e.Index < rd.termFirst || len(rd.out.firstApplied) == 0 {
		i, ok := rd.out.firstApplied[e.Term]
		if !ok || e.Index < i {
			i = e.Index
			rd.out.firstApplied[e.Term] = i
		}
		rd.term, rd.termFirst = e.Term, i
	}
	if e.Hash != rd.noop && (rd.out.clientApply.IsZero() || e.Time.Before(rd.out.clientApply)) {
		rd.out.clientApply = e.Time
	}
}

// take updates the node's stretch and its earliest (of those the
// analysis takes) by an apply or commit.
func (n *nodeReader) take(k orderKey, e *eventlog.Event) {
	s := &n.stretch
	switch {
	case !n.inStretch:
		*s, n.inStretch = keyed{k, *e}, true
	case e.Event == eventlog.KindApply && (s.ev.Event != eventlog.KindApply || e.Index > s.ev.Index):
		*s = keyed{k, *e}
	case e.Event == eventlog.KindCommit && s.ev.Event == eventlog.KindCommit:
		*s = keyed{k, *e}
	}
	if analyzable(e) && (!n.earliestSeen || analysisOrder(k, e, &n.earliest) < 0) {
		n.earliest, n.earliestSeen = keyed{k, *e}, true
	}
}

// analyzable reports whether foreignlog's analysis takes an apply or
// commit: foreignlog.FromEventLog leaves out a term or index beyond int.
func analyzable(e *eventlog.Event) bool { return e.Term <= math.MaxInt && e.Index <= math.MaxInt }

// analysisOrder compares e (key k) with o in the order foreignlog's
// analysis takes events: by time, then key.
func analysisOrder(k orderKey, e *eventlog.Event, o *keyed) int {
	return cmp.Or(e.Time.Compare(o.ev.Time), cmp.Compare(k.seq, o.k.seq))
}

// endStretch keeps the event that stands for the node's open stretch of
// applies and commits, if any.
func (rd *reader) endStretch(n *nodeReader) {
	if n.inStretch {
		rd.kept = append(rd.kept, n.stretch)
		n.inStretch = false
	}
}

// finish keeps what stands for the nodes' applies and commits and puts
// the kept events in key order, each once.
func (rd *reader) finish() {
	for _, n := range rd.nodes {
		rd.endStretch(n)
		if n.earliestSeen {
			rd.kept = append(rd.kept, n.earliest)
		}
	}
	if rd.latestSeen {
		rd.kept = append(rd.kept, rd.latest)
	}
	slices.SortFunc(rd.kept, func(a, b keyed) int { return a.k.compare(b.k) })
	rd.kept = slices.CompactFunc(rd.kept, func(a, b keyed) bool { return a.k.seq == b.k.seq })
	rd.out.events = make([]eventlog.Event, len(rd.kept))
	for i := range rd.kept {
		rd.out.events[i] = rd.kept[i].ev
	}
	rd.kept = nil
}
