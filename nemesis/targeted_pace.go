package nemesis

import (
	"context"
	"time"

	"chaos/internal/sleep"
)

// Pace is the clock a targeted fault's sequence runs on: Now tells the
// time, Wait pauses. The zero value is real time; tests inject both, so a
// sequence steps through its waits without sleeping.
type Pace struct {
	Now  func() time.Time
	Wait func(ctx context.Context, d time.Duration) error
}

func (p Pace) now() time.Time {
	if p.Now == nil {
		return time.Now()
	}
	return p.Now()
}

func (p Pace) wait(ctx context.Context, d time.Duration) error {
	if p.Wait == nil {
		return sleep.For(ctx, d)
	}
	return p.Wait(ctx, d)
}

// until checks cond, then again every `every`, until it holds (true), it
// fails (its error), ctx ends (ctx's error), or `within` has passed since
// the call, or the sequence's end has come (see withSequenceEnd): then
// (false, nil), so that the sequence records what it did not see and
// undoes what it did in time. Every wait is bounded: the loop ends.
func (p Pace) until(ctx context.Context, within, every time.Duration, cond func() (bool, error)) (bool, error) {
	deadline := p.now().Add(within)
	if end, ok := ctx.Value(sequenceEndKey{}).(time.Time); ok && end.Before(deadline) {
		deadline = end
	}
	for {
		ok, err := cond()
		if ok || err != nil {
			return ok, err
		}
		if !p.now().Before(deadline) {
			return false, nil
		}
		if err := p.wait(ctx, every); err != nil {
			return false, err
		}
	}
}

// sequenceEndKey is the context key of a sequence's end.
type sequenceEndKey struct{}

// withSequenceEnd is ctx carrying the time, on the sequence's Pace, by
// which a targeted sequence stops waiting for what it provokes: the
// schedule gives each sequence its budget so, less the time its undo needs
// (restartBudget), so that it ends, undone, before the fault window does.
func withSequenceEnd(ctx context.Context, end time.Time) context.Context {
	return context.WithValue(ctx, sequenceEndKey{}, end)
}
