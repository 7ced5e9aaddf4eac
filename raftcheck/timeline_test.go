package raftcheck

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"chaos/history"
)

// A timeline keeps the first op, the nemesis ops, the first ok write and
// the last op, in order, and every ok time; the availability check gives
// the same details from it as from the whole history's client ops.
func TestTimelineKeepsWhatAvailabilityReads(t *testing.T) {
	h := readHistory(t, "recovered.jsonl")
	tl := TimelineOf(h)
	var kept []int64
	for _, op := range tl.history() {
		kept = append(kept, op.Index)
	}
	assert.Equal(t, []int64{0, 1, 2, 5, 8, 10}, kept)
	assert.Equal(t, []int64{100000000, 4500000000, 5200000000}, tl.okTimes())

	// Client ops that neither succeeded nor end the history change nothing.
	var thinned history.History
	for _, op := range h {
		if op.Process.IsNemesis() || op.Type == history.OK || op.Index == 0 || op.Index == int64(len(h)-1) {
			thinned = append(thinned, op)
		}
	}
	assert.Equal(t, availDetails(t, Availability(nil, h, AvailabilityOptions{})),
		availDetails(t, Availability(nil, thinned, AvailabilityOptions{})))

	var empty Timeline
	assert.Empty(t, empty.history())
	one := TimelineOf(h[:1])
	assert.Len(t, one.history(), 1, "the first op is also the last")
}
