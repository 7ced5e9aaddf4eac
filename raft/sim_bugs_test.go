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
		{"conf-change-early", false},
	}
	for _, c := range cases {
		t.Run(c.bug, func(t *testing.T) {
			var bugs Bugs
			bugs.Enable(c.bug)
			// A safety bug may also show as a liveness failure first (two
			// membership changes in flight can lose a quorum): look on, a
			// hundred seeds at a time, for the kind of failure it is for.
			const budget, chunk = 1000, 100
			var f *simFailure
			ran, others := int64(0), 0
			for first := *simFirst; f == nil && ran < budget; first += chunk {
				failures, n := runSeeds(first, chunk, bugs, 0)
				ran += n
				for i := range failures {
					if strings.Contains(failures[i].err.Error(), "liveness") == c.liveness {
						f = &failures[i]
						break
					}
					others++
				}
			}
			if f == nil {
				t.Fatalf("no seed among %d exposed the planted bug %s as a %s failure (%d other failures)",
					ran, c.bug, map[bool]string{true: "liveness", false: "safety"}[c.liveness], others)
			}
			t.Logf("%s found after %d seeds: seed %d: %v\n  replay: %s", c.bug, ran, f.seed, f.err,
				replayCommand("TestSimulation", f.seed, bugs))
		})
	}
}
