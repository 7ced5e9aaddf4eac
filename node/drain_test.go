package node

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// drain takes what is queued behind the first request, maxBatch at most,
// and leaves the rest queued; it never waits on an empty channel.
func TestDrainTakesWhatIsQueuedUpToMaxBatch(t *testing.T) {
	ch := make(chan int, maxBatch+5)
	assert.Equal(t, []int{-1}, drain(-1, ch), "nothing queued")
	for i := range maxBatch + 5 {
		ch <- i
	}
	batch := drain(-1, ch)
	assert.Len(t, batch, maxBatch)
	assert.Equal(t, []int{-1, 0, 1}, batch[:3])
	assert.Equal(t, maxBatch-2, batch[maxBatch-1])
	assert.Len(t, ch, 6, "the rest stays queued")
}
