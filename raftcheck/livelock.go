package raftcheck

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"chaos/eventlog"
)

// Election livelock: terms go by and none elects a leader, as in seed 004
// (election timers of 5-9 ms, three nodes standing together and voting for
// themselves, 71 terms in 0.75 s). A correct Raft with PreVote does not
// raise its term while it cannot win a pre-vote (a node cut off from a
// majority, a majority down), so terms that pass without a leader are
// elections that were held and lost, and randomized election timers make a
// long run of them within a short time unlikely.

// Livelock is a run of consecutive leaderless terms in which the rule
// found at least LivelockRule.Terms terms begun within its Window.
type Livelock struct {
	FirstTerm uint64        `json:"first_term"`
	LastTerm  uint64        `json:"last_term"`
	Terms     int           `json:"terms"` // LastTerm - FirstTerm + 1: the terms that passed, seen or not
	Start     time.Time     `json:"start"` // the first event of FirstTerm (node clock)
	End       time.Time     `json:"end"`   // the first event of LastTerm
	Duration  time.Duration `json:"duration_ns"`
	// Densest is the most terms of the run begun within the rule's window.
	Densest    int      `json:"densest"`
	Candidates []string `json:"candidates"` // nodes that stood in the run's terms
	Text       string   `json:"text"`
}

// termRecord is what the events say about one term: when it was first
// seen, whether some node led it, and who stood as candidate in it.
type termRecord struct {
	term       uint64
	first      time.Time
	led        bool
	candidates []string
}

// termRecords returns one record per term that a role or vote event shows
// (start events carry a persisted term, not a new one), by term. A term
// is "seen" at its earliest such event, on the nodes' clocks.
func termRecords(events []eventlog.Event) []termRecord {
	byTerm := map[uint64]*termRecord{}
	for _, e := range events {
		if e.Event != eventlog.KindRole && e.Event != eventlog.KindVote {
			continue
		}
		r := byTerm[e.Term]
		if r == nil {
			r = &termRecord{term: e.Term, first: e.Time}
			byTerm[e.Term] = r
		}
		if e.Time.Before(r.first) {
			r.first = e.Time
		}
		switch {
		case e.Event == eventlog.KindRole && e.Role == eventlog.Leader:
			r.led = true
		case e.Event == eventlog.KindRole && e.Role == eventlog.Candidate && !slices.Contains(r.candidates, e.Node):
			r.candidates = append(r.candidates, e.Node)
		}
	}
	out := make([]termRecord, 0, len(byTerm))
	for _, r := range byTerm {
		if r.term > 0 {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(a, b termRecord) int { return cmp.Compare(a.term, b.term) })
	return out
}

// leaderlessRuns splits the records into maximal runs of consecutive
// leaderless terms. A led term breaks a run; a term no event shows does
// not (a node passed through it, and no event says anyone led it).
func leaderlessRuns(recs []termRecord) [][]termRecord {
	var runs [][]termRecord
	var cur []termRecord
	for _, r := range recs {
		if r.led {
			if len(cur) > 0 {
				runs = append(runs, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, r)
	}
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	return runs
}

// densest returns the most terms (by number, from the first to the last,
// seen or not) of a run whose first events lie within window of each
// other. Clock faults may put a later term's first event before an
// earlier one's, so each stretch of the run is judged by its earliest and
// latest first event. Quadratic in the run's length, which is bounded by
// the terms of a run.
func densest(run []termRecord, window time.Duration) int {
	best := 0
	for i := range run {
		lo, hi := run[i].first, run[i].first
		for j := i; j < len(run); j++ {
			lo, hi = minTime(lo, run[j].first), maxTime(hi, run[j].first)
			if hi.Sub(lo) > window {
				break
			}
			best = max(best, int(run[j].term-run[i].term)+1)
		}
	}
	return best
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// livelocks applies the election-livelock rule to the terms: every maximal
// run of consecutive leaderless terms holding at least rule.Terms terms
// begun within rule.Window is one Livelock. It also returns the longest
// run's length in terms (0 when every term had a leader), for the details.
// base is what times in the text are counted from (the load's start, or
// the first event when that is unknown), named by baseName.
func livelocks(terms []termRecord, rule LivelockRule, base time.Time, baseName string) ([]Livelock, int) {
	out := []Livelock{}
	longest := 0
	for _, run := range leaderlessRuns(terms) {
		first, last := run[0], run[len(run)-1]
		terms := int(last.term-first.term) + 1
		longest = max(longest, terms)
		d := densest(run, rule.Window)
		if d < rule.Terms {
			continue
		}
		l := Livelock{FirstTerm: first.term, LastTerm: last.term, Terms: terms, Start: first.first,
			End: last.first, Duration: last.first.Sub(first.first), Densest: d, Candidates: []string{}}
		for _, r := range run {
			for _, c := range r.candidates {
				if !slices.Contains(l.Candidates, c) {
					l.Candidates = append(l.Candidates, c)
				}
			}
		}
		slices.Sort(l.Candidates)
		l.Text = fmt.Sprintf("election livelock: %d terms without a leader (terms %d..%d) in %.2f s from %.2f s %s (candidates %s); rule: %s",
			l.Terms, l.FirstTerm, l.LastTerm, l.Duration.Seconds(), l.Start.Sub(base).Seconds(), baseName,
			strings.Join(l.Candidates, ", "), rule)
		out = append(out, l)
	}
	return out, longest
}
