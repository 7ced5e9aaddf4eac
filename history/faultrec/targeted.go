package faultrec

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Targeted is the value of the targeted families' ops, "start-<family>"
// and "stop-<family>" (the same value) of lease, vote-restart, figure8,
// election-delay and leader-cycle: each step of the sequence and what it
// found. One type holds the fields of all five, each written by the
// families its comment names; a field is absent when the sequence did not
// reach the step that sets it (so a number that may be 0 is a pointer, and
// a list that may be empty is present as []). Fields are in the order of
// their keys, the order they are written in.
type Targeted struct {
	AppendLimit   string     `json:"append_limit,omitempty"`    // figure8: why appends were not split
	Clock         string     `json:"clock,omitempty"`           // lease: the clock mechanism
	Commit        *uint64    `json:"commit,omitempty"`          // figure8: the re-elected leader's commit
	Cut           *Partition `json:"cut,omitempty"`             // all: the cut in place at the end
	CutWithLeader []string   `json:"cut_with_leader,omitempty"` // figure8
	DelayMS       *float64   `json:"delay_ms,omitempty"`        // election-delay
	Effect        string     `json:"effect,omitempty"`          // lease: "observed" or "not observed"
	FinalLeader   string     `json:"final_leader,omitempty"`    // figure8
	HeldMS        *int64     `json:"held_ms,omitempty"`         // lease
	Index         *uint64    `json:"index,omitempty"`           // figure8: the second leader's first entry
	Isolated      string     `json:"isolated,omitempty"`        // leader-cycle
	JitterMS      *float64   `json:"jitter_ms,omitempty"`       // election-delay
	Killed        string     `json:"killed,omitempty"`          // leader-cycle
	Leader        string     `json:"leader,omitempty"`          // lease, vote-restart, figure8, election-delay
	Links         *Packet    `json:"links,omitempty"`           // vote-restart, figure8, election-delay
	LoneEntries   *uint64    `json:"lone_entries,omitempty"`    // figure8
	LoneWrites    *CountOr   `json:"lone_writes,omitempty"`     // figure8
	Majority      []string   `json:"majority,omitzero"`         // vote-restart
	Minority      []string   `json:"minority,omitzero"`         // vote-restart
	Moved         []string   `json:"moved,omitzero"`            // vote-restart
	NewLeader     string     `json:"new_leader,omitempty"`      // lease, leader-cycle
	NextLeader    string     `json:"next_leader,omitempty"`     // leader-cycle
	Outcome       string     `json:"outcome,omitempty"`         // all: why the sequence stopped short
	ProbeMisses   int        `json:"probe_misses,omitempty"`    // vote-restart, figure8: probes that missed a node before all answered
	Rate          *float64   `json:"rate,omitempty"`            // lease: the leader's clock rate
	// Reapplied (all) names, by node, the network faults in force that a
	// node the sequence restarted in a new network namespace (a container
	// that is the node) got back there: partition, packet, cut.
	Reapplied     map[string][]string `json:"reapplied,omitempty"`
	ReelectedTerm *uint64             `json:"reelected_term,omitempty"` // figure8
	Rounds        []Round             `json:"rounds,omitzero"`          // election-delay
	SecondLeader  string              `json:"second_leader,omitempty"`  // figure8
	SecondTerm    *uint64             `json:"second_term,omitempty"`    // figure8
	SecondVotes   []string            `json:"second_votes,omitzero"`    // vote-restart
	SlowClocks    string              `json:"slow_clocks,omitempty"`    // figure8: why clocks were not slowed
	SplitAppends  []string            `json:"split_appends,omitzero"`   // figure8
	SplitTerms    []uint64            `json:"split_terms,omitzero"`     // vote-restart
	Term          *uint64             `json:"term,omitempty"`           // vote-restart, figure8
	TookMS        *int64              `json:"took_ms,omitempty"`        // all, on start: how long the sequence held the stage (the schedule's)
	VoteTerm      *uint64             `json:"vote_term,omitempty"`      // vote-restart
	VotedFor      string              `json:"voted_for,omitempty"`      // vote-restart
	Voter         string              `json:"voter,omitempty"`          // vote-restart
	VotesFrom     string              `json:"votes_from,omitempty"`     // vote-restart
	WaitedMS      *int64              `json:"waited_ms,omitempty"`      // leader-cycle
}

// Round is one round of election-delay: the leader cut off and what
// followed.
type Round struct {
	Isolated   string  `json:"isolated"`
	NextLeader string  `json:"next_leader,omitempty"`
	Term       uint64  `json:"term"`
	Terms      *uint64 `json:"terms,omitempty"`     // how many terms passed
	WaitedMS   *int64  `json:"waited_ms,omitempty"` // until the next leader, or the give-up
}

// CountOr is a count, or the reason there is none: a number or a string
// in JSON.
type CountOr struct {
	Count  int
	Reason string // when not "", written instead of Count
}

func (c CountOr) MarshalJSON() ([]byte, error) {
	if c.Reason != "" {
		return json.Marshal(c.Reason)
	}
	return json.Marshal(c.Count)
}

func (c *CountOr) UnmarshalJSON(b []byte) error {
	if strings.HasPrefix(string(b), `"`) {
		*c = CountOr{}
		return json.Unmarshal(b, &c.Reason)
	}
	*c = CountOr{}
	if err := json.Unmarshal(b, &c.Count); err != nil {
		return fmt.Errorf("want a count or a reason: %w", err)
	}
	return nil
}

// Member is the value of start-member and stop-member (the same): the
// member removed and re-added, and when each step of the cycle ended, in
// milliseconds after its start.
type Member struct {
	Node       string `json:"node"`
	PromotedMS *int64 `json:"promoted_ms,omitempty"`
	RejoinedMS *int64 `json:"rejoined_ms,omitempty"`
	RemovedMS  *int64 `json:"removed_ms,omitempty"`
	RemovedVia string `json:"removed_via,omitempty"`
	WasLeader  bool   `json:"was_leader"`
}
