package eventlog

// Spread keeps an even sample of a stream of events in bounded memory:
// at most its limit, spread over every event offered. While it has room
// it keeps each one; when full, it drops every other event kept and from
// then on keeps one offered event in twice as many. So it always holds
// the events offered at multiples of its stride (the first among them),
// and the stride is the smallest power of two for which they fit. It
// draws no random numbers: the same stream gives the same sample.
type Spread struct {
	limit   int
	stride  int
	offered int
	kept    []Event
}

// NewSpread returns a Spread keeping at most limit events (at least 2).
func NewSpread(limit int) *Spread { return &Spread{limit: max(limit, 2), stride: 1} }

// Offer takes the next event of the stream.
func (s *Spread) Offer(e *Event) {
	n := s.offered
	s.offered++
	if n%s.stride != 0 {
		return
	}
	if len(s.kept) == s.limit {
		s.halve()
		if n%s.stride != 0 {
			return
		}
	}
	s.kept = append(s.kept, *e)
}

// halve drops every other event kept and doubles the stride.
func (s *Spread) halve() {
	j := 0
	for i := 0; i < len(s.kept); i += 2 {
		s.kept[j] = s.kept[i]
		j++
	}
	clear(s.kept[j:])
	s.kept = s.kept[:j]
	s.stride *= 2
}

// Events returns the events kept, in the order offered.
func (s *Spread) Events() []Event { return s.kept }

// Offered returns how many events were offered.
func (s *Spread) Offered() int { return s.offered }
