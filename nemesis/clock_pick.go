package nemesis

import "context"

// PickClockStrategy is the clock strategy a run uses when none is asked
// for: chaos-node's clock hook where every node has one, else the vdso
// patch where every node's host lets chaos trace its processes, else a
// fake clock (faketime) where every node's can be faked. The system
// strategy, which moves the hosts' real clocks, is never picked: it must
// be asked for. When none works it returns the strategy whose refusal
// says most, with that refusal: faketime's for a system that can fake
// clocks (it names the program libfaketime cannot reach), else vdso's
// where the cluster has a place for its tool, else the hook's.
func PickClockStrategy(ctx context.Context, c *Cluster) (ClockStrategy, error) {
	hookErr := (&Clock{Strategy: ClockHook}).Available(ctx, c)
	if hookErr == nil {
		return ClockHook, nil
	}
	vdsoErr := (&Clock{Strategy: ClockVDSO}).Available(ctx, c)
	if vdsoErr == nil {
		return ClockVDSO, nil
	}
	fakeErr := (&Clock{Strategy: ClockFaketime}).Available(ctx, c)
	switch {
	case fakeErr == nil:
		return ClockFaketime, nil
	case c.FakeClocks != nil:
		return ClockFaketime, fakeErr
	case c.VDSOClock != nil:
		return ClockVDSO, vdsoErr
	}
	return ClockHook, hookErr
}
