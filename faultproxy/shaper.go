package faultproxy

import (
	"math/rand/v2"
	"time"

	"golang.org/x/time/rate"
)

// Piece is a part of a chunk and when to write it.
type Piece struct {
	// N is the piece's length in bytes.
	N int
	// At is when the piece may be written.
	At time.Time
}

// minBurst is the token bucket's least depth, in bytes: one Ethernet
// frame's payload, so that a slow link still moves a packet at a time.
const minBurst = 1500

// burstPerSecond divides a rate to get the bucket's depth: a fiftieth of
// a second's worth of bytes (20 ms), so that the cap holds over short
// windows and a chunk never waits behind a second's burst.
const burstPerSecond = 50

// Shaper times the bytes of one direction of one connection. Its
// invariants, for every call of Schedule:
//
//   - order: no piece is released before one scheduled earlier, so the
//     stream's bytes leave in the order they came;
//   - delay: a piece is released no earlier than its chunk's arrival
//     plus the delay and a jitter drawn uniformly in [0, jitter);
//   - rate: with a rate of R kbit/s, the pieces released over any window
//     of time T hold at most R*T/8 bytes plus the bucket's depth
//     (max(1500, R/8/50 bytes per second)).
//
// It reads no clock: the caller says when each chunk arrived. Not safe
// for concurrent use.
type Shaper struct {
	rng  *rand.Rand
	last time.Time // when the last piece scheduled is released
	lim  *rate.Limiter
	kbit int // the rate lim enforces; 0 when lim is nil
}

// NewShaper returns a Shaper that draws its jitter from rng.
func NewShaper(rng *rand.Rand) *Shaper { return &Shaper{rng: rng} }

// Schedule times n bytes that arrived at arrival under b: one piece when
// b has no rate, else pieces no longer than the bucket's depth, each
// released once the bucket holds its bytes. Each piece's At is at least
// arrival plus b's delay and one jitter draw, and at least the At of
// every piece scheduled before.
func (s *Shaper) Schedule(arrival time.Time, n int, b Behavior) []Piece {
	at := arrival.Add(b.delay())
	if j := b.jitter(); j > 0 {
		at = at.Add(time.Duration(s.rng.Float64() * float64(j)))
	}
	if at.Before(s.last) {
		at = s.last
	}
	if n <= 0 {
		return nil
	}
	s.setRate(at, b.RateKbit)
	if s.lim == nil {
		s.last = at
		return []Piece{{N: n, At: at}}
	}
	burst := s.lim.Burst()
	pieces := make([]Piece, 0, (n+burst-1)/burst)
	for left := n; left > 0; {
		k := min(left, burst)
		r := s.lim.ReserveN(at, k) // k <= burst: always OK
		pieces = append(pieces, Piece{N: k, At: at.Add(r.DelayFrom(at))})
		left -= k
	}
	s.last = pieces[len(pieces)-1].At
	return pieces
}

// setRate makes the bucket enforce kbit from t on: a new bucket starts
// full; a changed rate keeps what the bucket holds.
func (s *Shaper) setRate(t time.Time, kbit int) {
	if kbit == s.kbit {
		return
	}
	s.kbit = kbit
	if kbit <= 0 {
		s.lim = nil
		return
	}
	perSecond := float64(kbit) * 1000 / 8
	burst := max(minBurst, int(perSecond)/burstPerSecond)
	if s.lim == nil {
		s.lim = rate.NewLimiter(rate.Limit(perSecond), burst)
		return
	}
	s.lim.SetLimitAt(t, rate.Limit(perSecond))
	s.lim.SetBurstAt(t, burst)
}
