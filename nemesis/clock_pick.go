package nemesis

import "context"

// PickClockStrategy is the clock strategy a run uses when none is asked
// for: chaos-node's clock hook where every node has one, else a fake
// clock (faketime) where every node's can be faked. The system strategy,
// which moves the hosts' real clocks, is never picked: it must be asked
// for. When neither works it returns the strategy whose refusal says
// most, with that refusal: faketime's for a system that can fake clocks
// (it names the program libfaketime cannot reach), else the hook's.
func PickClockStrategy(ctx context.Context, c *Cluster) (ClockStrategy, error) {
	hookErr := (&Clock{Strategy: ClockHook}).Available(ctx, c)
	if hookErr == nil {
		return ClockHook, nil
	}
	fakeErr := (&Clock{Strategy: ClockFaketime}).Available(ctx, c)
	if fakeErr == nil {
		return ClockFaketime, nil
	}
	if c.FakeClocks != nil {
		return ClockFaketime, fakeErr
	}
	return ClockHook, hookErr
}
