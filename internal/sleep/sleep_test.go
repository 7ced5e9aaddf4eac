package sleep

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestForReturnsTheContextsErrorWhenItEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, For(ctx, time.Hour), context.Canceled, "an ended context cuts an hour short")
	assert.ErrorIs(t, For(ctx, 0), context.Canceled)
	assert.ErrorIs(t, Until(ctx, time.Now().Add(time.Hour)), context.Canceled)
}

func TestForWaitsOutAShortWhile(t *testing.T) {
	assert.NoError(t, For(context.Background(), time.Millisecond))
	assert.NoError(t, For(context.Background(), -time.Second), "a past deadline returns at once")
	assert.NoError(t, Until(context.Background(), time.Now().Add(-time.Second)))
}
