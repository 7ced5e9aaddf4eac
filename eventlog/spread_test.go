package eventlog

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// offerLines offers the events of lines from to to.
func offerLines(s *Spread, from, to int) {
	for i := from; i <= to; i++ {
		s.Offer(&Event{Line: i})
	}
}

func lines(evs []Event) []int {
	out := []int{}
	for _, e := range evs {
		out = append(out, e.Line)
	}
	return out
}

// Under its limit a Spread keeps every event.
func TestSpreadKeepsAllUnderItsLimit(t *testing.T) {
	s := NewSpread(8)
	offerLines(s, 1, 8)
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8}, lines(s.Events()))
	assert.Equal(t, 8, s.Offered())
}

// Over its limit it keeps the events at multiples of a power-of-two
// stride, evenly spread from the first to near the last, never more than
// the limit.
func TestSpreadKeepsAnEvenSample(t *testing.T) {
	s := NewSpread(8)
	offerLines(s, 1, 9)
	assert.Equal(t, []int{1, 3, 5, 7, 9}, lines(s.Events()))
	offerLines(s, 10, 100)
	assert.Equal(t, []int{1, 17, 33, 49, 65, 81, 97}, lines(s.Events()))
	assert.Equal(t, 100, s.Offered())
	big := NewSpread(1000)
	offerLines(big, 1, 1_000_000)
	assert.LessOrEqual(t, len(big.Events()), 1000)
	assert.GreaterOrEqual(t, len(big.Events()), 500)
	last := big.Events()[len(big.Events())-1].Line
	assert.Greater(t, last, 1_000_000-2*1_000_000/500)
}
