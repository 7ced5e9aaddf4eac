package runreport

import "time"

// maxSampled bounds the operations a sample keeps (of the successful
// operations, and of the others).
const maxSampled = 20_000

// sample keeps every stride-th operation of those it is offered, stride a
// power of two that doubles (and half of what was kept is dropped)
// whenever it would keep more than maxSampled: it ends with every
// operation, or with between maxSampled/2 and maxSampled of them spread
// evenly over the history, never more, however long the history.
type sample struct {
	stride  int // 0 until the first operation
	offered int
	kept    []sampled // in the order offered: kept[i] was offered i·stride-th
}

// sampled is a kept operation of the series id.
type sampled struct {
	id int
	p  opPoint
}

// offer offers an operation of the series id invoked at start with
// latency lat >= 0.
func (s *sample) offer(id int, start, lat time.Duration) {
	if s.stride == 0 {
		s.stride = 1
	}
	n := s.offered
	s.offered++
	if n%s.stride != 0 {
		return
	}
	if len(s.kept) == maxSampled {
		s.halve()
		if n%s.stride != 0 {
			return
		}
	}
	s.kept = append(s.kept, sampled{id: id, p: opPoint{start: start, latPlus1: lat + 1}})
}

// halve doubles the stride, keeping every other operation kept.
func (s *sample) halve() {
	for i := range (len(s.kept) + 1) / 2 {
		s.kept[i] = s.kept[2*i]
	}
	s.kept = s.kept[:(len(s.kept)+1)/2]
	s.stride *= 2
}
