package raft

import (
	"strings"
	"testing"
)

// TestSimulationFindsPlantedBugs proves the simulator has teeth: with each
// planted bug switched on, some seed must expose it, as a safety violation
// for the safety bugs and as a liveness failure for narrow-election.
func TestSimulationFindsPlantedBugs(t *testing.T) {
	cases := []struct {
		bug      string
		liveness bool
	}{
		{"forget-vote", false},
		{"commit-old-term", false},
		{"narrow-election", true},
	}
	for _, c := range cases {
		t.Run(c.bug, func(t *testing.T) {
			var bugs Bugs
			bugs.Enable(c.bug)
			const budget = 1000
			failures, ran := runSeeds(*simFirst, budget, bugs, 1)
			if len(failures) == 0 {
				t.Fatalf("no seed among %d exposed the planted bug %s", ran, c.bug)
			}
			f := failures[0]
			isLiveness := strings.Contains(f.err.Error(), "liveness")
			if isLiveness != c.liveness {
				t.Fatalf("seed %d: %s was exposed by the wrong kind of failure: %v", f.seed, c.bug, f.err)
			}
			t.Logf("%s found after %d seeds: seed %d: %v\n  replay: %s", c.bug, ran, f.seed, f.err,
				replayCommand("TestSimulation", f.seed, bugs))
		})
	}
}
