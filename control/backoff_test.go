package control

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBackoffDelayDoublesUpToMax(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Attempts: 9}
	var got []time.Duration
	for n := 1; n <= 6; n++ {
		got = append(got, b.Delay(n))
	}
	ms := time.Millisecond
	require.Equal(t, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}, got)
	require.Equal(t, time.Second, b.Delay(1000), "no overflow on long runs")
}

// fakeSleeper records the waits it is asked for without waiting.
type fakeSleeper struct{ waits []time.Duration }

func (f *fakeSleeper) sleep(ctx context.Context, d time.Duration) error {
	f.waits = append(f.waits, d)
	return ctx.Err()
}

func TestRetryGivesUpAfterAttempts(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: 3 * time.Second, Attempts: 4}
	var f fakeSleeper
	calls := 0
	err := b.retry(context.Background(), f.sleep, func() (bool, error) {
		calls++
		return true, errors.New("connection reset")
	})
	require.EqualError(t, err, "connection reset")
	require.Equal(t, 4, calls)
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, f.waits)
}

func TestRetryStopsOnSuccess(t *testing.T) {
	var f fakeSleeper
	calls := 0
	err := DefaultBackoff().retry(context.Background(), f.sleep, func() (bool, error) {
		calls++
		if calls < 3 {
			return true, errors.New("EOF")
		}
		return false, nil
	})
	require.NoError(t, err)
	require.Equal(t, 3, calls)
	require.Len(t, f.waits, 2)
}

func TestRetryNeverRepeatsANonRetryableFailure(t *testing.T) {
	var f fakeSleeper
	calls := 0
	err := DefaultBackoff().retry(context.Background(), f.sleep, func() (bool, error) {
		calls++
		return false, errors.New("host key mismatch")
	})
	require.EqualError(t, err, "host key mismatch")
	require.Equal(t, 1, calls)
	require.Empty(t, f.waits)
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var f fakeSleeper
	calls := 0
	err := DefaultBackoff().retry(ctx, f.sleep, func() (bool, error) {
		calls++
		cancel()
		return true, errors.New("connection refused")
	})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "last error: connection refused")
	require.Equal(t, 1, calls)
}

func TestRetryTriesOnceWithZeroAttempts(t *testing.T) {
	calls := 0
	err := Backoff{}.retry(context.Background(), (&fakeSleeper{}).sleep, func() (bool, error) {
		calls++
		return true, errors.New("EOF")
	})
	require.Error(t, err)
	require.Equal(t, 1, calls)
}
