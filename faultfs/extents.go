package faultfs

import "sort"

// extent is a run of saved bytes of a file: the content its range
// [off, off+len(data)) had when the file was last made durable.
type extent struct {
	off  int64
	data []byte
}

func (e extent) end() int64 { return e.off + int64(len(e.data)) }

// extents are the saved old bytes of one file, sorted by offset, never
// overlapping, and never touching (touching runs are merged, so an
// append-only workload keeps one run however many writes it makes).
type extents []extent

// gaps returns the parts of [a, b) that no extent covers, in order.
func (es extents) gaps(a, b int64) [][2]int64 {
	var out [][2]int64
	i := sort.Search(len(es), func(i int) bool { return es[i].end() > a })
	for ; a < b && i < len(es) && es[i].off < b; i++ {
		if es[i].off > a {
			out = append(out, [2]int64{a, es[i].off})
		}
		a = max(a, es[i].end())
	}
	if a < b {
		out = append(out, [2]int64{a, b})
	}
	return out
}

// add inserts a run that overlaps no extent (one of gaps' answers),
// merging it with the runs it touches.
func (es *extents) add(off int64, data []byte) {
	s := *es
	i := sort.Search(len(s), func(i int) bool { return s[i].off >= off })
	if i > 0 && s[i-1].end() == off {
		s[i-1].data = append(s[i-1].data, data...)
		if i < len(s) && s[i].off == s[i-1].end() {
			s[i-1].data = append(s[i-1].data, s[i].data...)
			s = append(s[:i], s[i+1:]...)
		}
		*es = s
		return
	}
	if i < len(s) && s[i].off == off+int64(len(data)) {
		s[i] = extent{off: off, data: append(append([]byte(nil), data...), s[i].data...)}
		*es = s
		return
	}
	s = append(s, extent{})
	copy(s[i+1:], s[i:])
	s[i] = extent{off: off, data: append([]byte(nil), data...)}
	*es = s
}

// bytes is how many saved bytes es holds.
func (es extents) bytes() int64 {
	var n int64
	for _, e := range es {
		n += int64(len(e.data))
	}
	return n
}
