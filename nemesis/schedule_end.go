package nemesis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"chaos/history"
	"chaos/history/faultrec"
)

// How a schedule ends: the final stops and the heal, each step bounded.

// finish stops every active fault, in heal order, then heals every family,
// in Faults order, and records the heal. Each step has HealTimeout of its
// own, on a context that outlives ctx (which may be over), so a step that
// cannot finish costs its bound and no more.
func (s *scheduleRun) finish(ctx context.Context) error {
	base := context.WithoutCancel(ctx)
	for _, i := range healOrder(s.Faults) {
		if s.active[i] {
			f := s.Faults[i]
			stepCtx, cancel := bounded(base, s.HealTimeout)
			op, err := f.Stop(stepCtx, s.Cluster)
			err = cutShort(stepCtx, err)
			cancel()
			s.active[i] = false
			s.record(f, "stop", op, err)
		}
	}
	// Before the heal, which unmounts the file systems of nodes that are
	// down.
	refusedCtx, cancel := bounded(base, s.HealTimeout)
	refused := undoRefusals(refusedCtx, s.Cluster)
	cancel()
	families := make([]string, len(s.Faults))
	errs := make([]error, len(s.Faults))
	for i, f := range s.Faults {
		families[i] = f.Name()
		stepCtx, cancel := bounded(base, s.HealTimeout)
		began := time.Now()
		errs[i] = cutShort(stepCtx, HealAll(stepCtx, s.Cluster, []Fault{f}))
		cancel()
		s.log().Info("nemesis: healed", "family", f.Name(), "took", time.Since(began), "err", errs[i])
	}
	err := errors.Join(errs...)
	value := faultrec.Heal{Faults: families, UndoRefused: refused}
	if err != nil {
		value.Error = err.Error()
		s.log().Error("nemesis: heal failed; nodes may be left faulty", "err", err)
	}
	s.nemesis(history.FHeal, value)
	return err
}

// bounded returns ctx ended after d (DefaultStepTimeout when d <= 0), with
// that as the cause.
func bounded(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		d = DefaultStepTimeout
	}
	return context.WithTimeoutCause(ctx, d, fmt.Errorf("the step took longer than %v", d))
}

// cutShort adds to err why ctx ended, when it has: the step that failed
// with err was cut short, and the history should say why.
func cutShort(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	return &cutShortError{err: err, cause: context.Cause(ctx)}
}

// cutShortError is the error of a step cut short, and why it was.
type cutShortError struct{ err, cause error }

func (e *cutShortError) Error() string { return fmt.Sprintf("%v (cut short: %v)", e.err, e.cause) }
func (e *cutShortError) Unwrap() error { return e.err }
