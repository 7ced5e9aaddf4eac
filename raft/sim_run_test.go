package raft

import (
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

var (
	simSeeds = flag.Int("raft.seeds", 1000, "number of random seeds TestSimulation runs")
	simSeed  = flag.Uint64("raft.seed", 0, "run only this seed (replay), printing its trace")
	simFirst = flag.Uint64("raft.first", 1, "first seed of TestSimulation")
	simBug   = flag.String("raft.bug", "", "planted bug to enable in a replay")
)

// replayCommand is the command line that replays one seed exactly.
func replayCommand(test string, seed uint64, bugs Bugs) string {
	cmd := fmt.Sprintf("go test ./raft -run '^%s$' -raft.seed=%d -v", test, seed)
	if names := bugs.Names(); len(names) > 0 {
		cmd += " -raft.bug=" + strings.Join(names, ",")
	}
	return cmd
}

func bugsFromFlag(t testing.TB) Bugs {
	var b Bugs
	if *simBug == "" {
		return b
	}
	for _, name := range strings.Split(*simBug, ",") {
		if !b.Enable(name) {
			t.Fatalf("-raft.bug: unknown bug %q (known: %v)", name, BugNames())
		}
	}
	return b
}

// runSeeds runs seeds [first, first+count) in parallel and returns the
// failures, in seed order, stopping early after stopAfter failures (0: never).
func runSeeds(first uint64, count int, bugs Bugs, stopAfter int) (failures []simFailure, ran int64) {
	var (
		next   atomic.Uint64
		done   atomic.Int64
		mu     sync.Mutex
		wg     sync.WaitGroup
		failed atomic.Int64
	)
	next.Store(first)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seed := next.Add(1) - 1
				if seed >= first+uint64(count) || (stopAfter > 0 && failed.Load() >= int64(stopAfter)) {
					return
				}
				cfg := randomSimConfig(seed, bugs)
				sim := newSimulation(cfg)
				err := sim.run()
				done.Add(1)
				if err != nil {
					failed.Add(1)
					mu.Lock()
					failures = append(failures, simFailure{seed: seed, cfg: cfg, err: err, trace: sim.trace})
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return failures, done.Load()
}

type simFailure struct {
	seed  uint64
	cfg   simConfig
	err   error
	trace []string
}

// TestSimulation runs the randomized cluster simulator over many seeds:
// message loss, duplication, reordering and delay, partitions, and crash
// restarts from persisted state, with Election Safety, Log Matching, Leader
// Completeness, State Machine Safety, read linearizability and liveness after
// the faults stop checked throughout.
func TestSimulation(t *testing.T) {
	if *simSeed != 0 {
		replaySeed(t, "TestSimulation", *simSeed, bugsFromFlag(t))
		return
	}
	count := *simSeeds
	if testing.Short() {
		count = 100
	}
	failures, ran := runSeeds(*simFirst, count, Bugs{}, 0)
	for _, f := range failures {
		t.Errorf("seed %d (%v): %v\n  replay: %s", f.seed, f.cfg, f.err, replayCommand("TestSimulation", f.seed, Bugs{}))
	}
	t.Logf("%d seeds from %d, %d failed", ran, *simFirst, len(failures))
}

// replaySeed runs one seed with its trace printed.
func replaySeed(t *testing.T, test string, seed uint64, bugs Bugs) {
	cfg := randomSimConfig(seed, bugs)
	t.Logf("seed %d: %v", seed, cfg)
	sim := newSimulation(cfg)
	sim.verbose = testing.Verbose()
	if err := sim.run(); err != nil {
		t.Fatalf("seed %d: %v\n%s", seed, err, sim.dumpState())
	}
	t.Logf("seed %d passed at tick %d; %d messages sent, %d dropped", seed, sim.now, sim.net.sent, sim.net.dropped)
}
