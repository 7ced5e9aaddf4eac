package testrun

import (
	"context"
	"slices"

	"chaos/db"
	"chaos/nemesis"
)

// The clock strategy of a run (--clock-strategy): how the clock and lease
// families bend the nodes' clocks. The faketime strategy needs the nodes
// started under a fake clock, so it is settled in two steps: before the
// system is built, whether to start them so (fakeClockConfig); once it
// runs, which strategy the families use (clockStrategy).

// ClockAuto is --clock-strategy's default: hook where the system has
// hooks, else vdso where the hosts let chaos trace the nodes, else
// faketime where it works.
const ClockAuto = "auto"

// clockFamilies are the families that bend clocks.
var clockFamilies = []string{"clock", nemesis.LeaseFamily}

// bendsClocks reports whether the run's families include one that bends
// clocks (the default mix does).
func (o *Options) bendsClocks() bool {
	if len(o.Nemesis) == 0 || slices.Contains(o.Nemesis, "all") {
		return true
	}
	return slices.ContainsFunc(o.Nemesis, func(f string) bool { return slices.Contains(clockFamilies, f) })
}

// auto reports whether the strategy is left to PickClockStrategy.
func (o *Options) autoClock() bool { return o.ClockStrategy == "" || o.ClockStrategy == ClockAuto }

// fakeClockConfig sets cfg.Faketime when the run may use the faketime
// strategy: asked for, or left to auto for a system built without fault
// hooks, and a family that bends clocks runs. build makes the system for
// a configuration; it is called again when the answer needs the system.
func (o *Options) fakeClockConfig(cfg db.Config, build func(db.Config) (db.DB, error)) (db.DB, error) {
	if !o.bendsClocks() || (!o.autoClock() && o.ClockStrategy != string(nemesis.ClockFaketime)) {
		return build(cfg)
	}
	if o.ClockStrategy == string(nemesis.ClockFaketime) {
		cfg.Faketime = true
		return build(cfg)
	}
	d, err := build(cfg)
	if err != nil || hasHooks(d, cfg.Nodes) {
		return d, err
	}
	cfg.Faketime = true
	return build(cfg)
}

// hasHooks reports whether d's nodes answer chaos-node's fault hooks.
func hasHooks(d db.DB, nodes []db.Node) bool {
	h := db.CapabilitiesOf(d).Hooks
	return h != nil && len(nodes) > 0 && h.Hooked(nodes[0].Name)
}

// clockStrategy is the strategy the clock family uses on c: the one
// asked for, or PickClockStrategy's.
func (r *run) clockStrategy(ctx context.Context, c *nemesis.Cluster) nemesis.ClockStrategy {
	if !r.o.autoClock() {
		return nemesis.ClockStrategy(r.o.ClockStrategy)
	}
	s, _ := nemesis.PickClockStrategy(ctx, c)
	return s
}

// setClock gives f, a fault of a family that bends clocks, the run's
// strategy: the clock family takes any; lease takes faketime and vdso,
// and the hook otherwise (it cannot slow a system clock).
func setClock(f nemesis.Fault, s nemesis.ClockStrategy) {
	switch f := f.(type) {
	case *nemesis.Clock:
		f.Strategy = s
	case *nemesis.Lease:
		f.Clock = nemesis.ClockHook
		if s == nemesis.ClockFaketime || s == nemesis.ClockVDSO {
			f.Clock = s
		}
	}
}
