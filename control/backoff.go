package control

import (
	"context"
	"fmt"
	"time"
)

// Backoff is the retry policy for transport failures: an operation is tried
// up to Attempts times, waiting Initial before the first retry and twice as
// long before each next one, never more than Max.
type Backoff struct {
	Initial  time.Duration
	Max      time.Duration
	Attempts int
}

// DefaultBackoff tries 5 times over about 4s of waiting (0.25s, 0.5s, 1s,
// 2s): long enough for sshd to restart, short enough to report a dead host
// quickly.
func DefaultBackoff() Backoff {
	return Backoff{Initial: 250 * time.Millisecond, Max: 4 * time.Second, Attempts: 5}
}

// Delay is the wait before retry n (n = 1 is the first retry).
func (b Backoff) Delay(n int) time.Duration {
	d := b.Initial
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// sleeper waits d or until ctx is done, returning ctx.Err() in that case.
type sleeper func(ctx context.Context, d time.Duration) error

// retry calls op until it succeeds, fails with retryable false, or has been
// tried b.Attempts times (at least once), sleeping b.Delay(n) before retry
// n. It returns op's last error, or the sleeper's (wrapped, naming op's last
// error) when ctx ends during a wait.
func (b Backoff) retry(ctx context.Context, sleep sleeper, op func() (retryable bool, err error)) error {
	var err error
	for n := 0; n < max(b.Attempts, 1); n++ {
		if n > 0 {
			if serr := sleep(ctx, b.Delay(n)); serr != nil {
				return fmt.Errorf("%w (last error: %v)", serr, err)
			}
		}
		var retryable bool
		if retryable, err = op(); err == nil || !retryable {
			return err
		}
	}
	return err
}
