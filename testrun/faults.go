package testrun

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"chaos/history/faultrec"
	"chaos/nemesis"
)

// nemesisCluster is the nemesis's view of the cluster: the system's
// capabilities (nemesis.NewCluster), and writes through its clients.
func (r *run) nemesisCluster() *nemesis.Cluster {
	c := nemesis.NewCluster(r.cl.DB, r.cl.Nodes, r.cl.Remotes, r.cl.SharedClock)
	c.Write, c.FaultProxy = r.cl.Write, nemesis.NewFaultProxy(r.cl.Layout, !r.cl.Local)
	c.VDSOClock = nemesis.NewVDSOClock(r.cl.Layout, !r.cl.Local)
	return c
}

// pickFaults chooses the fault families: the ones asked for (each must be
// possible here, or the run stops with a usage error before anything
// starts), or by default every family the environment supports. It
// returns why each family left out cannot run, for results.json. A packet
// fault some of whose parts this environment cannot perform still runs the
// parts it can; the rest are listed as unavailable.
func (r *run) pickFaults(ctx context.Context) ([]nemesis.Fault, map[string]string, error) {
	names, explicit := r.o.Nemesis, true
	if len(names) == 0 || slices.Contains(names, "all") {
		// all is the default mix, in the registry's order (seeds replay);
		// an opt-in family named beside it joins at the end.
		mix := nemesis.DefaultFamilyNames()
		if r.o.storageFaults() {
			mix = append(mix, nemesis.StorageFamilies()...)
		}
		for _, n := range names {
			if n != "all" && !slices.Contains(mix, n) {
				mix = append(mix, n)
			}
		}
		names, explicit = mix, false
	}
	if slices.Contains(names, "none") {
		return nil, map[string]string{}, nil
	}
	c := r.nemesisCluster()
	if r.o.storageFaults() {
		// Before any node starts: a host that cannot mount fails the run.
		if err := nemesis.StorageAvailable(ctx, c); err != nil {
			return nil, nil, fmt.Errorf("%w: storage faults: %v", ErrSetup, err)
		}
	}
	var clock nemesis.ClockStrategy
	if slices.ContainsFunc(names, func(n string) bool { return slices.Contains(clockFamilies, n) }) {
		clock = r.clockStrategy(ctx, c)
	}
	unavailable := map[string]string{}
	partly := map[string]bool{} // families that run without some of their parts
	var faults []nemesis.Fault
	for _, name := range names {
		f, err := nemesis.NewFault(name)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: --nemesis: %v", ErrUsage, err)
		}
		setClock(f, clock)
		if k, ok := f.(*nemesis.Corrupt); ok {
			k.Files, k.Hows = r.o.CorruptFiles, r.o.CorruptHows
		}
		if k, ok := f.(*nemesis.Clock); ok {
			k.Election = c.Timing.WithDefaults().ElectionTimeout // offsets scale to the system's
		}
		err = f.Available(ctx, c)
		switch {
		case err == nil:
		case partlyAvailable(name, err):
			unavailable[name], partly[name] = err.Error(), true
		case explicit:
			return nil, nil, fmt.Errorf("%w: --nemesis %s cannot run here: %v", ErrUsage, name, err)
		default:
			unavailable[name] = err.Error()
			continue
		}
		faults = append(faults, &tracked{Fault: f})
	}
	r.faults = faults
	for _, name := range names {
		why, ok := unavailable[name]
		switch {
		case ok && partly[name]:
			fmt.Fprintf(r.env.Out, "nemesis: %s runs without some parts here: %s\n", name, why)
		case ok:
			fmt.Fprintf(r.env.Out, "nemesis: %s unavailable here: %s\n", name, why)
		}
	}
	return faults, unavailable, nil
}

// partlyAvailable reports whether err, family name's unavailability,
// leaves it some parts to run: the packet family's, when this environment
// performs some parts of a packet fault (loss, say) and not others. A
// family that needs a part it cannot have (a targeted family's delay)
// cannot run at all: it would spend its every turn on that error.
func partlyAvailable(name string, err error) bool {
	var partial *nemesis.PacketUnavailableError
	return name == "packet" && errors.As(err, &partial) && len(partial.Parts) < len(nemesis.UnreliableNetwork().Parts())
}

// runNemesis runs the schedule until its deadline (nemesisTime after the
// load began) or ctx's end, then stops every active fault and heals
// everything the families can leave. It returns the history time at which
// the heal completed, and false when there was no schedule to run.
func (r *run) runNemesis(ctx context.Context, faults []nemesis.Fault) (time.Duration, bool) {
	if len(faults) == 0 {
		return 0, false
	}
	weights, turns, acts := make([]int, len(faults)), make([]bool, len(faults)), make([]faultrec.Target, len(faults))
	for i, f := range faults {
		weights[i], turns[i] = nemesis.FamilyWeight(f.Name()), nemesis.FamilyTargeted(f.Name())
		acts[i] = actsOn(f.Name())
	}
	s := &nemesis.Schedule{Faults: faults, Weights: weights, Turns: turns, Acts: acts, Interval: r.o.NemesisInterval,
		Rng: rand.New(rand.NewPCG(r.seed, 0x6e656d)), Recorder: r.rec, Cluster: r.nemesisCluster(), Log: r.log,
		TimeLimit: max(r.nemesisTime()-time.Since(r.start), time.Nanosecond)}
	if err := s.Run(ctx); err != nil {
		r.log.Error("nemesis", "err", err)
		fmt.Fprintf(r.env.Out, "warning: nemesis: %v\n", err)
	}
	return time.Since(r.start), true
}

// actsOn is what the family called name acts on, for the schedule's Acts:
// its fault records' target, the storage families counting as acting on
// the processes (they kill nodes, or make them crash), so that no two
// faults that stop or restart nodes hold at once.
func actsOn(name string) faultrec.Target {
	fam, _ := faultrec.Lookup(name)
	if fam.Target == faultrec.TargetStorage {
		return faultrec.TargetProcesses
	}
	return fam.Target
}

// activeFaults names the families with a fault in effect now.
func (r *run) activeFaults() []string {
	var out []string
	for _, f := range r.faults {
		if t, ok := f.(*tracked); ok && t.isActive() {
			out = append(out, t.Name())
		}
	}
	return out
}

// tracked remembers whether its fault is in effect, for the progress display.
type tracked struct {
	nemesis.Fault
	mu     sync.Mutex
	active bool
}

// Start marks the fault in effect while it starts too: a targeted
// sequence runs for seconds inside its Start.
func (t *tracked) Start(ctx context.Context, c *nemesis.Cluster, rng *rand.Rand) (nemesis.Op, error) {
	t.set(true)
	op, err := t.Fault.Start(ctx, c, rng)
	t.set(err == nil || op.F != "")
	return op, err
}

func (t *tracked) Stop(ctx context.Context, c *nemesis.Cluster) (nemesis.Op, error) {
	op, err := t.Fault.Stop(ctx, c)
	t.set(false)
	return op, err
}

var _ interface{ Unwrap() nemesis.Fault } = (*tracked)(nil)

// Unwrap is the tracked fault, for the schedule to see what it is (a
// nemesis.OneShot, say).
func (t *tracked) Unwrap() nemesis.Fault { return t.Fault }

func (t *tracked) set(v bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.active = v
}

func (t *tracked) isActive() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.active
}
