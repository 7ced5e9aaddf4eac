package raftcheck

import (
	"slices"
	"strings"
	"time"

	"chaos/foreignlog"
	"chaos/history"
)

// The stuck-leaderless rule sweeps the run on the history's clock, with
// the events placed on it by loadStart, and finds the stretches in which
// a majority was up and connected (clusterState.majorityConnected) but no
// node served as leader. A node serves as leader while it leads the
// newest term (as [Leaderless] says, from the events) and the history
// does not have it killed or paused: a killed or paused node writes no
// event, so the events alone would let a dead leader lead until a higher
// term appears, and a cluster that never replaces it would show no
// leaderless window at all. A leader cut off by a partition steps down
// by itself (CheckQuorum) and its event says so.

// span is a stretch of history time, [Start, End] in ns since the load
// began, in which no node served as leader although a majority was up and
// connected.
type span struct {
	Start int64
	End   int64
	// Faults names the faults active during it, in turn ("no fault" when
	// none).
	Faults string
}

// sweep is the input of stuckSpans, all on the history's clock.
type sweep struct {
	terms   []termRecord // by term; first is on the nodes' clocks
	tenures []foreignlog.Tenure
	facts   time.Time // foreignlog's Facts.Start, which tenures count from
	start   time.Time // the load's start on the nodes' clocks
	nodes   []string
	confs   []placedConf // the run's configurations, by index (none without conf events)
}

// voterSets returns the sets of nodes, a majority of each of which must be
// up and connected at history time t for a leader to be owed: the nodes
// seen, without conf events; with them, the voters of the latest
// configuration (by index) any node had applied by t, of the one before
// it and of the one after it, since Raft uses a configuration from its
// entry's append, before any node applies it, and nodes' clocks differ.
// A change that never commits is not among them: the member nemesis's
// ops, which the rule counts as faults of every node while they last
// (clusterState.apply), cover the changes it makes.
func (s *sweep) voterSets(t int64) [][]string {
	if len(s.confs) == 0 {
		return [][]string{s.nodes}
	}
	cur := 0
	for i, c := range s.confs {
		if s.at(c.at) <= t && i > cur {
			cur = i
		}
	}
	var sets [][]string
	for i := max(cur-1, 0); i <= min(cur+1, len(s.confs)-1); i++ {
		sets = append(sets, s.confs[i].voters)
	}
	return sets
}

// owed reports whether at history time t cs leaves a majority of every
// voter set up and pairwise connected.
func (s *sweep) owed(t int64, cs *clusterState) bool {
	for _, v := range s.voterSets(t) {
		if !cs.majorityConnected(v) {
			return false
		}
	}
	return true
}

// at places a node-clock time on the history's clock.
func (s *sweep) at(t time.Time) int64 { return t.Sub(s.start).Nanoseconds() }

// tenure returns when a tenure began and ended on the history's clock; an
// open one never ends.
func (s *sweep) tenure(t foreignlog.Tenure) (from, to int64) {
	from, to = s.at(s.facts.Add(t.Start)), s.at(s.facts.Add(t.End))
	if t.Open {
		to = 1<<63 - 1
	}
	return from, to
}

// served reports whether at history time t some node that cs leaves up
// and running leads the newest term seen by then.
func (s *sweep) served(t int64, cs *clusterState) bool {
	newest, seen := uint64(0), false
	for _, r := range s.terms {
		if s.at(r.first) <= t {
			newest, seen = max(newest, r.term), true
		}
	}
	if !seen {
		return false
	}
	for _, ten := range s.tenures {
		from, to := s.tenure(ten)
		if uint64(ten.Term) == newest && from <= t && t < to && !cs.killed[ten.Node] && !cs.paused[ten.Node] {
			return true
		}
	}
	return false
}

// changes returns the times at which what served or owed say may change, within [lo, hi], sorted and without repeats, lo first.
func (s *sweep) changes(ops []timedOp, lo, hi int64) []int64 {
	ts := []int64{lo}
	add := func(t int64) {
		if t > lo && t < hi {
			ts = append(ts, t)
		}
	}
	for _, r := range s.terms {
		add(s.at(r.first))
	}
	for _, ten := range s.tenures {
		from, to := s.tenure(ten)
		add(from)
		add(to)
	}
	for _, op := range ops {
		add(op.at)
	}
	for _, c := range s.confs {
		add(s.at(c.at))
	}
	slices.Sort(ts)
	return slices.Compact(ts)
}

// timedOp is a nemesis op and the time from which it counts.
type timedOp struct {
	at int64
	op history.Op
}

// nemesisOps returns h's nemesis ops, in order, each counting from when it
// was recorded (its transition had completed), except an op that begins a
// fault of a family clusterState does not know: that counts from the
// nemesis op before it (or the history's start), since such a family (a
// targeted sequence that cuts off the leader, waits for a new one, kills
// a voter...) may act for many seconds before its op is recorded. The
// schedule performs one transition at a time, so it began after the op
// before it. A stop counts from when it was recorded: the fault lasts
// until then.
func nemesisOps(h history.History) []timedOp {
	var ops []timedOp
	prev := int64(0)
	if len(h) > 0 {
		prev = h[0].Time
	}
	for _, op := range h {
		if !op.Process.IsNemesis() || op.Type == history.Invoke {
			continue
		}
		at := op.Time
		if !knownFamily(op.F) && !strings.HasPrefix(op.F, "stop-") {
			at = prev
		}
		ops = append(ops, timedOp{at: at, op: op})
		prev = op.Time
	}
	return ops
}

// stuckSpans returns the stretches of the history, from its first op to
// its last, in which a majority was up and connected and no node served
// as leader, each as long as it lasted (contiguous stretches are joined).
// Nemesis ops count from the times nemesisOps gives them.
func stuckSpans(s *sweep, h history.History) []span {
	if len(h) == 0 {
		return nil
	}
	lo, hi := h[0].Time, h[len(h)-1].Time
	ops := nemesisOps(h)
	ts := append(s.changes(ops, lo, hi), hi)
	cs := newClusterState()
	var out []span
	next := 0 // the next nemesis op to apply
	for i := 0; i+1 < len(ts); i++ {
		for ; next < len(ops) && ops[next].at <= ts[i]; next++ {
			cs.apply(ops[next].op.F, ops[next].op.Value)
		}
		if !s.owed(ts[i], cs) || s.served(ts[i], cs) {
			continue
		}
		out = extend(out, ts[i], ts[i+1], cs.describe())
	}
	return out
}

// extend adds [from, to] to spans, joining it to the last one when they
// touch.
func extend(spans []span, from, to int64, faults string) []span {
	if n := len(spans); n > 0 && spans[n-1].End == from {
		if !strings.HasSuffix(spans[n-1].Faults, faults) {
			spans[n-1].Faults += ", then " + faults
		}
		spans[n-1].End = to
		return spans
	}
	return append(spans, span{Start: from, End: to, Faults: faults})
}
