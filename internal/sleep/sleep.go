// Package sleep waits for a while unless a context ends first: the one
// place chaos waits on wall time with a way out.
package sleep

import (
	"context"
	"time"
)

// For waits d, or until ctx ends, whichever comes first; it returns
// ctx.Err() in the second case and nil in the first. A d of zero or less
// returns at once (nil unless ctx has ended).
func For(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Until waits until t as For does.
func Until(ctx context.Context, t time.Time) error { return For(ctx, time.Until(t)) }
