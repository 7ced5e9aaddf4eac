package raftcheck

import (
	"fmt"
	"time"

	"chaos/foreignlog"
	"chaos/history"
)

// LivelockRule is the election-livelock rule: a finding when at least
// Terms consecutive terms (among those the events show) pass without a
// leader, Terms of them begun within Window.
type LivelockRule struct {
	Terms  int
	Window time.Duration
}

func (r LivelockRule) String() string {
	return fmt.Sprintf(">= %d consecutive leaderless terms within %v", r.Terms, r.Window)
}

// StuckRule is the rule for a cluster that stays leaderless under faults
// a correct one rides through: a finding when no node leads for more
// than Bound while a majority of the nodes is up, not paused, on a true
// clock and pairwise connected (no partition or packet fault between
// them), as the history's nemesis ops say. With conf events, "the
// nodes" are the voters of the configurations that may be in force at
// the time (see sweep.voterSets), a majority of each.
type StuckRule struct {
	Bound time.Duration
}

func (r StuckRule) String() string {
	return fmt.Sprintf("no leader for more than %v while a majority of nodes is up, not paused, on true clocks and pairwise connected (per the nemesis ops)", r.Bound)
}

// Default liveness thresholds, calibrated on chaos-node (election timeout
// 1-2 s, PreVote) under the default fault mix; see docs/FORMATS.md.
const (
	DefaultLivelockTerms  = 5
	DefaultLivelockWindow = 10 * time.Second
	DefaultStuckBound     = 10 * time.Second
)

// Stuck is a stretch of history time in which no node led although a
// majority was up and connected, longer than the rule's bound.
type Stuck struct {
	Start    int64         `json:"start"` // ns since the load began
	End      int64         `json:"end"`
	Duration time.Duration `json:"duration_ns"`
	Faults   string        `json:"faults"` // the faults active meanwhile ("no fault" when none)
	Text     string        `json:"text"`
}

// LivenessDetails is the liveness part of [AvailabilityDetails]: the two
// rules, what they found, and the largest figures they looked at.
type LivenessDetails struct {
	Rules          []string      `json:"rules"`
	LivelockTerms  int           `json:"livelock_terms"`
	LivelockWindow time.Duration `json:"livelock_window_ns"`
	StuckBound     time.Duration `json:"stuck_bound_ns"`
	// LoadStart is the nodes' clock time of the history's time 0 as
	// estimated by loadStart; absent when it cannot be.
	LoadStart *time.Time `json:"load_start,omitempty"`
	Livelocks []Livelock `json:"livelocks"`
	Stuck     []Stuck    `json:"stuck"`
	// LongestLeaderlessRun is the most consecutive terms without a leader.
	LongestLeaderlessRun int `json:"longest_leaderless_run_terms"`
	// LongestStuck is the longest leaderless stretch while a majority was
	// up and connected, whether or not over the bound.
	LongestStuck time.Duration `json:"longest_stuck_ns"`
	// Reason says why the stuck rule was not applied, when it was not.
	Reason string `json:"reason,omitempty"`
}

// found reports whether either rule found something.
func (l *LivenessDetails) found() bool { return len(l.Livelocks) > 0 || len(l.Stuck) > 0 }

// judgeLiveness applies both rules to a run's events and history; f is
// the events' analysis.
func judgeLiveness(r *runEvents, f foreignlog.Facts, h history.History, lr LivelockRule, sr StuckRule) *LivenessDetails {
	l := &LivenessDetails{Rules: []string{"election livelock: " + lr.String(), "stuck leaderless: " + sr.String()},
		LivelockTerms: lr.Terms, LivelockWindow: lr.Window, StuckBound: sr.Bound, Stuck: []Stuck{}}
	start, ok := loadStart(r.clientApply, h)
	base, baseName := start, "of the load"
	if !ok {
		base, baseName = f.Start, "after the first event"
		l.Reason = "the load's start cannot be placed on the nodes' clocks (no ok write in the history, or no applied write in the event logs)"
	} else {
		l.LoadStart = &start
	}
	terms := termRecords(r.events)
	l.Livelocks, l.LongestLeaderlessRun = livelocks(terms, lr, base, baseName)
	if !ok {
		return l
	}
	spans := stuckSpans(&sweep{terms: terms, tenures: f.Leaders, facts: f.Start, start: start, nodes: f.Nodes,
		confs: placedConfigurations(r.events)}, h)
	for _, sp := range spans {
		d := time.Duration(sp.End - sp.Start)
		l.LongestStuck = max(l.LongestStuck, d)
		if d <= sr.Bound {
			continue
		}
		l.Stuck = append(l.Stuck, Stuck{Start: sp.Start, End: sp.End, Duration: d, Faults: sp.Faults,
			Text: fmt.Sprintf("stuck leaderless: no leader for %.1f s, from %.1f s to %.1f s of the load, while a majority of nodes was up and connected (%s); rule: %s",
				d.Seconds(), time.Duration(sp.Start).Seconds(), time.Duration(sp.End).Seconds(), sp.Faults, sr)})
	}
	return l
}
