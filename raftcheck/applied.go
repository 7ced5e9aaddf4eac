package raftcheck

import (
	"slices"

	"chaos/eventlog"
)

// appliedTable is what State Machine Safety keeps of the applies read: for
// each log index, the entry term and command hash of the first apply of
// it read, and the indexes at which a later one differed. An index whose
// applies all agree breaks nothing, whichever of them came first; the
// applies of the few that do not are read again (violations) and judged
// against the first by key, as [Raft] says.
//
// It takes 16 bytes an index, in pages of consecutive indexes (a node
// applies them in order). Pages must stay a quarter full on average: an
// index that would need a page beyond that goes into a map, so that a log
// of scattered indexes costs its lines, not the span between them.
type appliedTable struct {
	pages    map[uint64]*appliedPage // by index / appliedPageSize
	lastPage uint64                  // the page of the last index observed, and
	last     *appliedPage            // that page (nil when not allocated)
	stored   int                     // indexes in pages
	far      map[uint64]appliedSlot  // indexes whose page was not allocated
	// odd holds, by index, the first hashes that are not 16 lowercase hex
	// digits (chaos-node writes no other), whose slots' hash is 0.
	odd       map[uint64]string
	conflicts map[uint64]bool
}

const (
	appliedPageSize = 1 << 12
	// minPages are allocated whatever their fill.
	minPages = 16
)

type appliedSlot struct{ term, hash uint64 }

type appliedPage struct {
	seen  [appliedPageSize / 64]uint64
	slots [appliedPageSize]appliedSlot
}

func newAppliedTable() *appliedTable {
	return &appliedTable{pages: map[uint64]*appliedPage{}, far: map[uint64]appliedSlot{},
		odd: map[uint64]string{}, conflicts: map[uint64]bool{}}
}

// observe takes an apply of index with an entry of term whose command
// hashes to hash. An index is kept where its first apply was: in far when
// its page was not allocated then, even once it is.
func (t *appliedTable) observe(index, term uint64, hash string) {
	h, hex := hexHash(hash)
	slot := appliedSlot{term: term, hash: h}
	if len(t.far) > 0 {
		if first, ok := t.far[index]; ok {
			t.compare(index, first, slot, hash, hex)
			return
		}
	}
	p := t.page(index)
	if p == nil {
		t.far[index] = slot
		t.keepOdd(index, hash, hex)
		return
	}
	i := index % appliedPageSize
	if bit := uint64(1) << (i % 64); p.seen[i/64]&bit == 0 {
		p.seen[i/64] |= bit
		p.slots[i] = slot
		t.stored++
		t.keepOdd(index, hash, hex)
		return
	}
	t.compare(index, p.slots[i], slot, hash, hex)
}

// compare marks index conflicting unless an apply (slot, its hash and
// whether that was hex) agrees with its first (first).
func (t *appliedTable) compare(index uint64, first, slot appliedSlot, hash string, hex bool) {
	if !t.same(index, first, slot, hash, hex) {
		t.conflicts[index] = true
	}
}

// page returns the page of index, allocating it while pages are full
// enough; nil when index goes into far.
func (t *appliedTable) page(index uint64) *appliedPage {
	n := index / appliedPageSize
	if t.last != nil && n == t.lastPage {
		return t.last
	}
	p := t.pages[n]
	if p == nil && len(t.pages) < minPages+t.stored/(appliedPageSize/4) {
		p = &appliedPage{}
		t.pages[n] = p
	}
	t.lastPage, t.last = n, p
	return p
}

func (t *appliedTable) keepOdd(index uint64, hash string, hex bool) {
	if !hex {
		t.odd[index] = hash
	}
}

// same reports whether an apply (slot, its hash and whether that was hex)
// agrees with the first of index (first).
func (t *appliedTable) same(index uint64, first, slot appliedSlot, hash string, hex bool) bool {
	if first.term != slot.term {
		return false
	}
	if len(t.odd) > 0 {
		if odd, ok := t.odd[index]; ok {
			return !hex && odd == hash
		}
	}
	return hex && first.hash == slot.hash
}

// hexHash returns the value of a hash of 16 lowercase hex digits, as
// chaos-node writes them (kv.Hash).
func hexHash(h string) (uint64, bool) {
	if len(h) != 16 {
		return 0, false
	}
	var v uint64
	for i := range 16 {
		c := h[i]
		d := c - '0'
		if d > 9 {
			d = c - 'a' + 10
			if d < 10 || d > 15 {
				return 0, false
			}
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}

// violations reads the applies of the conflicting indexes again from src
// and returns State Machine Safety's violations: every apply of such an
// index whose entry term or command hash differs from those of the
// index's first apply by key, in key order.
func (t *appliedTable) violations(src eventSource) ([]Violation, error) {
	var applies []keyed
	_, err := src(func(k orderKey, e *eventlog.Event) error {
		if e.Event == eventlog.KindApply && t.conflicts[e.Index] {
			applies = append(applies, keyed{k, *e})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(applies, func(a, b keyed) int { return a.k.compare(b.k) })
	var out []Violation
	first := map[uint64]eventlog.Event{}
	for _, a := range applies {
		e := a.ev
		f, ok := first[e.Index]
		if !ok {
			first[e.Index] = e
			continue
		}
		if f.Hash != e.Hash || f.Term != e.Term {
			out = append(out, violation(KindStateMachineSafety, e,
				"%s applied index %d as term %d hash %s; %s applied it as term %d hash %s",
				e.Node, e.Index, e.Term, e.Hash, f.Node, f.Term, f.Hash))
		}
	}
	return out, nil
}
