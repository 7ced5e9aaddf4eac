package faultfs

import (
	"slices"
	"sort"
)

// extent is a run of saved bytes of a file: the content its range
// [off, off+n) had when the file was last made durable. It is of one of
// three kinds: in memory (data holds the bytes), spilled (the bytes are
// at offset at of the file's spill file; data is nil), or a run of zeros
// (neither: a range the file was known to hold zeros in, saved without
// reading it).
type extent struct {
	off, n  int64
	data    []byte
	spilled bool
	at      int64
}

func (e extent) end() int64 { return e.off + e.n }

// zero says whether e is a run of zeros.
func (e extent) zero() bool { return e.data == nil && !e.spilled }

// inMemory says whether e's bytes are in memory.
func (e extent) inMemory() bool { return e.data != nil }

// maxMemoryRun is the longest run in memory that joining makes: joining
// appends, and a longer run would be copied whole, its old copy live
// meanwhile, at each append.
const maxMemoryRun = 1 << 20

// joins says whether f, which starts at e's end, may join e: it is of
// e's kind and, if spilled, follows e in the spill file too, or, if in
// memory, makes a run no longer than maxMemoryRun with it.
func (e extent) joins(f extent) bool {
	switch {
	case e.end() != f.off || e.zero() != f.zero() || e.spilled != f.spilled:
		return false
	case e.spilled:
		return e.at+e.n == f.at
	case e.inMemory():
		return e.n+f.n <= maxMemoryRun
	}
	return true
}

// join is e followed by f, which e.joins. It may reuse e.data.
func (e extent) join(f extent) extent {
	switch {
	case e.zero():
		return extent{off: e.off, n: e.n + f.n}
	case e.spilled:
		return extent{off: e.off, n: e.n + f.n, spilled: true, at: e.at}
	}
	return extent{off: e.off, n: e.n + f.n, data: append(e.data, f.data...)}
}

// extents are the saved old bytes of one file, sorted by offset, never
// overlapping, and never touching a run it joins (touching runs of zeros,
// of spilled data that follow each other in the spill file, or of data in
// memory up to maxMemoryRun are merged, so that a workload overwriting a
// file in order keeps few runs however many writes it makes).
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
	if i > 0 && s[i-1].joins(e) {
		i--
		s[i] = s[i].join(e)
	} else {
		s = slices.Insert(s, i, e)
	}
	if i+1 < len(s) && s[i].joins(s[i+1]) {
		s[i] = s[i].join(s[i+1])
		s = slices.Delete(s, i+1, i+2)
	}
	*es = s
}

// bytes is how many saved bytes es holds (zeros and spilled included),
// how many of them are in memory, and how many spilled.
func (es extents) bytes() (all, inMemory, spilled int64) {
	for _, e := range es {
		all += e.n
		switch {
		case e.inMemory():
			inMemory += e.n
		case e.spilled:
			spilled += e.n
		}
	}
	return all, inMemory, spilled
}
