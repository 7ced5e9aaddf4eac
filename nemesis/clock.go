package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/history"
	"chaos/history/faultrec"
	"chaos/internal/sleep"
	"chaos/nemesis/hostcmd"
)

// ClockStrategy is how the clock family bends a node's time.
type ClockStrategy string

const (
	// ClockHook asks chaos-node to skew its own clock through its fault
	// hook (POST /faults/clock): offsets and the rate of its raft ticker.
	// Only that process is affected, so it is safe on hosts that share a
	// clock, and it is the default.
	ClockHook ClockStrategy = "hook"
	// ClockSystem disables NTP on the host and sets its system clock with
	// `date -s`: for real VMs, and any system under test. It is refused on
	// hosts that share the controller's clock (Cluster.SharedClock).
	ClockSystem ClockStrategy = "system"
	// ClockFaketime rewrites the control file of each node's fake clock
	// (nemesis/clock_faketime.go): the nodes run under libfaketime, or read
	// the file themselves (chaos-node). Only the node's processes are
	// affected, so it is safe on hosts that share a clock.
	ClockFaketime ClockStrategy = "faketime"
	// ClockVDSO patches the vDSO of each node's processes so that their
	// clock readings move (nemesis/clock_vdso.go, `chaos vdso-clock`):
	// any x86-64 program that reads time through the vDSO (Go, the JVM,
	// C), only that node's processes, no file to start under.
	ClockVDSO ClockStrategy = "vdso"
)

// Kinds of clock faults, recorded in the op's "kind".
const (
	clockBump   = "bump"   // one jump per node, of ±100ms..±2 election timeouts
	clockStrobe = "strobe" // several jumps back and forth, a short period apart
	clockRate   = "rate"   // the clock runs 0.5x..2x as fast (hook and faketime)
)

// errNoHooks is why the hook strategy is unavailable.
var errNoHooks = errors.New("the hook strategy needs every node's fault hooks, and a node has none: " +
	"use --clock-strategy vdso (the nodes' processes' own clocks, on any host) or faketime")

// errSharedClock is why the system strategy is refused.
var errSharedClock = errors.New("the system clock strategy sets the hosts' real clock, and these hosts share this machine's clock " +
	"(local mode or the testbed): refused; use --clock-strategy hook")

// Clock is the clock family: bumps, strobes and rate skew of the chosen
// nodes' clocks (op "clock-bump"); Stop resets them (op "clock-reset").
// The op's value records the targets, the offsets or rates and the
// mechanism ("hook" or "system").
//
// Clock is safe for concurrent use; calls are serialized.
type Clock struct {
	// Strategy is how clocks are changed (default ClockHook).
	Strategy ClockStrategy
	// Targets are the target kinds Start picks among; empty means all.
	Targets []Target
	// Election is the cluster's election timeout (default: the system's,
	// Cluster.Timing): offsets go up to twice it, enough to expire a
	// leader lease or start an election.
	Election time.Duration
	// Now is the controller's clock, which the system strategy sets hosts
	// from (default time.Now).
	Now func() time.Time
	// Wait pauses between the jumps of a strobe (default: a timer that
	// ends early with ctx).
	Wait func(ctx context.Context, d time.Duration) error
	// StateDir is where the system strategy keeps, on each host, the list
	// of NTP services it stopped, so that a reset or `chaos heal` restarts
	// exactly those (default /var/lib/chaos).
	StateDir string

	mu     sync.Mutex
	active []db.Node
}

func (k *Clock) Name() string { return "clock" }

func (k *Clock) strategy() ClockStrategy {
	if k.Strategy == "" {
		return ClockHook
	}
	return k.Strategy
}

// Available reports why the strategy cannot run here: the hook strategy
// needs a hook address for every node, the system strategy hosts with a
// clock of their own and a Remote for each, the faketime strategy every
// node under a fake clock.
func (k *Clock) Available(ctx context.Context, c *Cluster) error {
	switch k.strategy() {
	case ClockHook:
		if c.DB != nil && c.Hooks == nil {
			return fmt.Errorf("clock: %s has no fault hooks (no Hooks capability): use --clock-strategy vdso (its processes' own clocks, "+
				"on any host), faketime (under libfaketime), or system (the hosts' real clocks: real VMs only)", c.DB.Name())
		}
		for _, n := range c.Nodes {
			if !hooked(c, n.Name) {
				return fmt.Errorf("clock: %w", errNoHooks)
			}
		}
		if len(c.Nodes) == 0 {
			return errors.New("clock: the cluster has no nodes")
		}
		return nil
	case ClockSystem:
		if c.SharedClock {
			return fmt.Errorf("clock: %w", errSharedClock)
		}
		return requireRemotes("clock", c)
	case ClockFaketime:
		return wrapFamily("clock", fakeAvailable(ctx, c))
	case ClockVDSO:
		return wrapFamily("clock", vdsoAvailable(ctx, c))
	}
	return fmt.Errorf("clock: unknown strategy %q (want hook, vdso, faketime or system)", k.Strategy)
}

// Start picks targets and a kind of fault with rng and applies it. When
// applying fails on some node, the targets stay recorded as skewed, so
// that Stop resets them.
func (k *Clock) Start(ctx context.Context, c *Cluster, rng *rand.Rand) (Op, error) {
	if err := k.Available(ctx, c); err != nil {
		return Op{}, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.active) > 0 {
		return Op{}, fmt.Errorf("clock: a fault is active already on %v", names(k.active))
	}
	sel, err := selectTargets(ctx, c, pickTarget(k.Targets, rng), rng)
	if err != nil {
		return Op{}, fmt.Errorf("clock: %w", err)
	}
	nodes := sel.nodes
	if k.Election <= 0 {
		k.Election = c.timing().ElectionTimeout
	}
	v := k.plan(nodes, sel.mode, rng)
	v.Fallback = sel.fallback
	k.active = nodes
	if err := k.apply(ctx, c, nodes, &v); err != nil {
		return Op{F: history.FClockBump, Value: v}, fmt.Errorf("clock: %w", err)
	}
	return Op{F: history.FClockBump, Value: v}, nil
}

// Stop resets the skewed nodes' clocks: DELETE /faults/clock (a node that
// does not run lost its skew with its process), or the system clock set
// from the controller's and NTP enabled again. With no active fault it
// does nothing and returns the zero Op.
func (k *Clock) Stop(ctx context.Context, c *Cluster) (Op, error) {
	if k.strategy() == ClockSystem && c.SharedClock {
		return Op{}, fmt.Errorf("clock: %w", errSharedClock)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	nodes := k.active
	k.active = nil
	if len(nodes) == 0 {
		return Op{}, nil
	}
	op := Op{F: history.FClockReset, Value: faultrec.Clock{Nodes: names(nodes), Mechanism: string(k.strategy())}}
	return op, wrapFamily("clock", eachNode(nodes, func(n db.Node) error { return k.reset(ctx, c, n) }))
}

// Heal resets the clock of every node: with hooks, DELETE /faults/clock on
// every node that has a hook address (a node that does not run, or runs
// without hooks, has no skew to remove); with the system strategy, on every
// host where chaos stopped NTP, the clock set from the controller's and
// NTP enabled again. The system strategy refuses hosts with a shared clock.
func (k *Clock) Heal(ctx context.Context, c *Cluster) error {
	if k.strategy() == ClockSystem && c.SharedClock {
		return fmt.Errorf("clock: %w", errSharedClock)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.active = nil
	return wrapFamily("clock", eachNode(c.Nodes, func(n db.Node) error { return k.reset(ctx, c, n) }))
}

// leftovers names the system clock chaos left off true time on n's host
// (its NTP marker is there), with the NTP services it stopped (see
// leftoverFinder). Only the system strategy, on hosts with clocks of their
// own, has any: the hook strategy's skews live in the node processes.
func (k *Clock) leftovers(ctx context.Context, c *Cluster, n db.Node) ([]string, error) {
	if k.strategy() == ClockFaketime {
		return fakeLeftover(ctx, c, n)
	}
	if k.strategy() == ClockVDSO {
		return vdsoLeftover(ctx, c, n)
	}
	if k.strategy() != ClockSystem || c.SharedClock {
		return nil, nil
	}
	r, err := nodeRemote(c, n)
	if err != nil {
		return nil, err
	}
	out, err := control.Output(ctx, r, hostcmd.MarkerCmd(k.ntpMarker()))
	if err != nil {
		return nil, fmt.Errorf("system clock: %w", err)
	}
	words := strings.Fields(string(out))
	if len(words) == 0 || words[0] != "marker" {
		return nil, nil
	}
	var stopped []string
	for _, s := range words[1:] {
		// The marker lists what DisableNTPCmd found; anything else in it
		// is not chaos's and is not repeated.
		if slices.Contains(hostcmd.NTPServices, s) {
			stopped = append(stopped, s)
		}
	}
	what := "system clock set by chaos, NTP off"
	if len(stopped) > 0 {
		what += " (stopped: " + strings.Join(stopped, ", ") + ")"
	}
	return []string{what}, nil
}

// plan draws the fault: its kind, then the offsets, strobe or rates.
func (k *Clock) plan(nodes []db.Node, mode Target, rng *rand.Rand) faultrec.Clock {
	v := faultrec.Clock{Nodes: names(nodes), Mode: string(mode), Mechanism: string(k.strategy())}
	kinds := []string{clockBump, clockStrobe, clockRate}
	if ClockStrategy(v.Mechanism) == ClockSystem {
		kinds = kinds[:2] // a system clock has no rate to set
	}
	switch v.Kind = kinds[rng.IntN(len(kinds))]; v.Kind {
	case clockBump:
		v.OffsetsMS = map[string]int64{}
		for _, n := range nodes {
			v.OffsetsMS[n.Name] = k.offsetMS(rng)
		}
	case clockStrobe:
		v.DeltaMS = k.offsetMS(rng)
		v.PeriodMS = 10 + rng.Int64N(91)
		v.Count = 3 + rng.IntN(6)
	case clockRate:
		v.Rates = map[string]float64{}
		for _, n := range nodes {
			// Uniform on a log scale, so halving and doubling are as likely.
			v.Rates[n.Name] = math.Round(math.Exp2(2*rng.Float64()-1)*100) / 100
		}
	}
	return v
}

// offsetMS is a jump of 100ms to twice the election timeout, either way.
func (k *Clock) offsetMS(rng *rand.Rand) int64 {
	election := k.Election
	if election <= 0 {
		election = db.DefaultTiming().ElectionTimeout
	}
	hi := max(2*election.Milliseconds(), 100)
	ms := 100 + rng.Int64N(hi-100+1)
	if rng.IntN(2) == 0 {
		return -ms
	}
	return ms
}

// clockJumps are the successive clock changes of v on node n, in ms.
func clockJumps(v *faultrec.Clock, n string) []int64 {
	switch v.Kind {
	case clockBump:
		return []int64{v.OffsetsMS[n]}
	case clockStrobe:
		out := make([]int64, v.Count)
		for i := range out {
			out[i] = v.DeltaMS
			if i%2 == 1 {
				out[i] = -v.DeltaMS
			}
		}
		return out
	}
	return nil
}

// apply carries v out on every node and, with hooks, fills in its effect.
func (k *Clock) apply(ctx context.Context, c *Cluster, nodes []db.Node, v *faultrec.Clock) error {
	if ClockStrategy(v.Mechanism) == ClockFaketime {
		v.Readers = fakeReaders(ctx, c, nodes)
	}
	if ClockStrategy(v.Mechanism) == ClockVDSO {
		return k.vdsoApplyAll(ctx, c, nodes, v)
	}
	changed, err := mapNodes(nodes, func(n db.Node) (bool, error) { return k.applyNode(ctx, c, n, v) })
	if err != nil || ClockStrategy(v.Mechanism) != ClockHook {
		return err
	}
	v.Effect = EffectObserved
	for i, n := range nodes {
		if !changed[i] {
			v.Unchanged = append(v.Unchanged, n.Name)
			v.Effect = EffectNotObserved
		}
	}
	return nil
}

// applyNode carries v out on n; with hooks, changed says whether the
// node's last answer shows the clock v asked for.
func (k *Clock) applyNode(ctx context.Context, c *Cluster, n db.Node, v *faultrec.Clock) (changed bool, err error) {
	if ClockStrategy(v.Mechanism) == ClockFaketime {
		return false, k.fakeApply(ctx, c, n, v)
	}
	if v.Kind == clockRate {
		st, err := k.hook(ctx, c, n, &db.ClockSkew{Rate: v.Rates[n.Name]})
		return err == nil && st.Rate == v.Rates[n.Name], err
	}
	if ClockStrategy(v.Mechanism) == ClockSystem {
		if err := k.system(ctx, c, n, hostcmd.DisableNTPCmd(k.ntpMarker())); err != nil {
			return false, err
		}
	}
	var total int64
	for i, ms := range clockJumps(v, n.Name) {
		if i > 0 {
			if err := k.wait(ctx, time.Duration(v.PeriodMS)*time.Millisecond); err != nil {
				return false, fmt.Errorf("%s: strobe: %w", n.Name, err)
			}
		}
		total += ms
		if changed, err = k.jump(ctx, c, n, ms, total); err != nil {
			return false, err
		}
	}
	return changed, nil
}

// jump moves n's clock by ms, total ms away from true time in all. The
// system strategy sets the clock from the controller's: NTP must be off.
func (k *Clock) jump(ctx context.Context, c *Cluster, n db.Node, ms, total int64) (changed bool, err error) {
	if k.strategy() == ClockHook {
		st, err := k.hook(ctx, c, n, &db.ClockSkew{OffsetMS: ms})
		return err == nil && st.OffsetMS == total, err
	}
	at := k.now().Add(time.Duration(total) * time.Millisecond)
	return false, k.system(ctx, c, n, hostcmd.SetDateCmd(at))
}

// reset removes n's skew. A node without hooks, or that does not run, or
// runs without hooks (403), has none: the skew lives in the process.
func (k *Clock) reset(ctx context.Context, c *Cluster, n db.Node) error {
	if k.strategy() == ClockFaketime {
		return fakeReset(ctx, c, n)
	}
	if k.strategy() == ClockVDSO {
		return vdsoReset(ctx, c, n)
	}
	if k.strategy() == ClockSystem {
		return k.system(ctx, c, n, hostcmd.ResetClockCmd(k.ntpMarker(), k.now()))
	}
	if !hooked(c, n.Name) {
		return nil
	}
	_, err := k.hook(ctx, c, n, nil)
	if nothingToHeal(err) {
		return nil
	}
	return err
}

func (k *Clock) now() time.Time {
	if k.Now == nil {
		return time.Now()
	}
	return k.Now()
}

func (k *Clock) wait(ctx context.Context, d time.Duration) error {
	if k.Wait == nil {
		return sleep.For(ctx, d)
	}
	return k.Wait(ctx, d)
}

// hook sets n's clock fault to f through its hooks (nil: resets it) and
// returns the clock the node answers with.
func (k *Clock) hook(ctx context.Context, c *Cluster, n db.Node, f *db.ClockSkew) (db.ClockSkew, error) {
	if !hooked(c, n.Name) {
		return db.ClockSkew{}, fmt.Errorf("%s: %w", n.Name, errNoHooks)
	}
	if f == nil {
		return db.ClockSkew{}, c.Hooks.ResetClock(ctx, n.Name)
	}
	return c.Hooks.SetClock(ctx, n.Name, *f)
}

// system runs cmd on n's host, refusing hosts that share a clock.
func (k *Clock) system(ctx context.Context, c *Cluster, n db.Node, cmd string) error {
	if c.SharedClock {
		return fmt.Errorf("%s: %w", n.Name, errSharedClock)
	}
	r, err := nodeRemote(c, n)
	if err != nil {
		return err
	}
	if _, err := control.Output(ctx, r, cmd); err != nil {
		return fmt.Errorf("%s: system clock: %w", n.Name, err)
	}
	return nil
}

// ntpMarker is the host file listing the NTP services chaos stopped; it
// exists exactly while chaos has the host's clock off true time.
func (k *Clock) ntpMarker() string {
	dir := k.StateDir
	if dir == "" {
		dir = db.DefaultLayout().DataDir
	}
	return path.Join(dir, "clock-ntp-stopped")
}
