package faultfs

import (
	"slices"
	"sort"
)

// extent is a run of saved bytes of a file: the content its range
// [off, off+n) had when the file was last made durable. data holds it,
// or is nil for a run of zeros (a range the file was known to hold zeros
// in, saved without reading it).
type extent struct {
	off, n int64
	data   []byte
}

func (e extent) end() int64 { return e.off + e.n }

// zero says whether e is a run of zeros.
func (e extent) zero() bool { return e.data == nil }

// join is e followed by f, which starts at e's end and is of its kind.
// It may reuse e.data.
func (e extent) join(f extent) extent {
	if e.zero() {
		return extent{off: e.off, n: e.n + f.n}
	}
	return extent{off: e.off, n: e.n + f.n, data: append(e.data, f.data...)}
}

// extents are the saved old bytes of one file, sorted by offset, never
// overlapping, and never touching a run of their own kind (touching runs
// of data, or of zeros, are merged, so an append-only workload keeps one
// run however many writes it makes).
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

// add inserts e, a run that overlaps no extent (within one of gaps'
// answers) and is not empty, merging it with the runs of its kind it
// touches. es owns e.data from then on.
func (es *extents) add(e extent) {
	s := *es
	i := sort.Search(len(s), func(i int) bool { return s[i].off >= e.off })
	if i > 0 && s[i-1].end() == e.off && s[i-1].zero() == e.zero() {
		i--
		s[i] = s[i].join(e)
	} else {
		s = slices.Insert(s, i, e)
	}
	if i+1 < len(s) && s[i].end() == s[i+1].off && s[i].zero() == s[i+1].zero() {
		s[i] = s[i].join(s[i+1])
		s = slices.Delete(s, i+1, i+2)
	}
	*es = s
}

// bytes is how many saved bytes es holds (zeros included).
func (es extents) bytes() int64 {
	var n int64
	for _, e := range es {
		n += e.n
	}
	return n
}
