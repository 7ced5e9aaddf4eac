package vdsoclock

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"time"
)

// The data page, the page right after the code page in a patched process:
// what the code reads (see code) and the writer rewrites.
//
//	offset  size  field
//	0       8     counter: even while the page holds, odd while it is rewritten
//	8       8     k: the rate less one, as a fixed point with 32 fraction bits
//	16      16    for each clock id below 16, the offset of its block; 0 for a
//	              clock left alone (CPU-time clocks, the alarm clocks)
//	32      16    the realtime block: off, anchor (nanoseconds, int64)
//	48      16    the monotonic block (MONOTONIC, MONOTONIC_RAW, MONOTONIC_COARSE)
//	64      16    the boottime block
//	80      16    the TAI block
//	96      8     lead: the most any clock may read ahead of the kernel's
//	128     8     magic: "chaosvd1", which tells a page of ours
//
// A clock of block b reads t + min(off + ((t - anchor) * k >> 32), lead)
// where t is what the kernel said. Every clock has a block of its own, so
// that the rate is applied to time that passed on that same clock. The
// lead bounds how far ahead a clock gets: a program that computes an
// absolute deadline from its clock and waits for it on the kernel's (the
// JVM's timed waits, pthread_cond_timedwait) waits that much longer, so a
// clock running fast must not get ahead without bound.
const (
	pageSize     = 4096
	offCounter   = 0
	offK         = 8
	offClasses   = 16
	offRealtime  = 32
	offMonotonic = 48
	offBoottime  = 64
	offTAI       = 80
	offLead      = 96
	offMagic     = 128
	pageUsed     = 136
)

// magic marks a data page of ours: a patch found in a process is ours
// only when the page after its code page starts its magic field so.
var magic = [8]byte{'c', 'h', 'a', 'o', 's', 'v', 'd', '1'}

// Linux clock ids.
const (
	clockRealtime        = 0
	clockMonotonic       = 1
	clockMonotonicRaw    = 4
	clockRealtimeCoarse  = 5
	clockMonotonicCoarse = 6
	clockBoottime        = 7
	clockTAI             = 11
)

// classes maps each clock id below 16 to its block.
var classes = map[int]int{
	clockRealtime: offRealtime, clockRealtimeCoarse: offRealtime,
	clockMonotonic: offMonotonic, clockMonotonicRaw: offMonotonic, clockMonotonicCoarse: offMonotonic,
	clockBoottime: offBoottime, clockTAI: offTAI,
}

// blocks are the blocks, each with the clock id the writer reads for it.
var blocks = []struct{ off, clock int }{
	{offRealtime, clockRealtime}, {offMonotonic, clockMonotonic},
	{offBoottime, clockBoottime}, {offTAI, clockTAI},
}

// Block is one clock's transformation: it reads t + Off + (t - Anchor) *
// (rate - 1), all in nanoseconds of that clock.
type Block struct{ Off, Anchor int64 }

// Page is the data page's content.
type Page struct {
	// K is the rate less one, times 2^32.
	K int64
	// Lead is the most a clock reads ahead of the kernel's, in
	// nanoseconds.
	Lead int64
	// Realtime, Monotonic, Boottime and TAI are the blocks.
	Realtime, Monotonic, Boottime, TAI Block
}

// Rate is the rate p's clocks run at.
func (p Page) Rate() float64 { return 1 + float64(p.K)/(1<<32) }

// rateK is rate as the page's fixed-point k.
func rateK(rate float64) int64 { return int64(math.Round((rate - 1) * (1 << 32))) }

// block returns p's block at offset off.
func (p *Page) block(off int) *Block {
	switch off {
	case offRealtime:
		return &p.Realtime
	case offMonotonic:
		return &p.Monotonic
	case offBoottime:
		return &p.Boottime
	default:
		return &p.TAI
	}
}

// Read is what a clock of block off shows when the kernel says t.
func (p Page) Read(off int, t int64) int64 {
	b := p.block(off)
	return t + min(b.Off+mulShift(t-b.Anchor, p.K), p.Lead)
}

// mulShift is a*k >> 32 as the code computes it: the signed 128-bit
// product (imul), shifted right by 32 (shrd), its low 64 bits.
func mulShift(a, k int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(k))
	h := int64(hi) // the unsigned product's high word, made signed:
	if a < 0 {
		h -= k
	}
	if k < 0 {
		h -= a
	}
	return int64(lo>>32 | uint64(h)<<32)
}

// Encode is p as the data page's bytes (pageUsed of them; the rest of the
// page stays zero), with the counter given.
func (p Page) Encode(counter uint64) []byte {
	b := make([]byte, pageUsed)
	le := binary.LittleEndian
	le.PutUint64(b[offCounter:], counter)
	le.PutUint64(b[offK:], uint64(p.K))
	le.PutUint64(b[offLead:], uint64(p.Lead))
	for id, off := range classes {
		b[offClasses+id] = byte(off)
	}
	for _, bl := range blocks {
		x := p.block(bl.off)
		le.PutUint64(b[bl.off:], uint64(x.Off))
		le.PutUint64(b[bl.off+8:], uint64(x.Anchor))
	}
	copy(b[offMagic:], magic[:])
	return b
}

// Decode reads a data page's bytes: the page and its counter; an error
// when they are not a page of ours.
func Decode(b []byte) (Page, uint64, error) {
	if len(b) < pageUsed || [8]byte(b[offMagic:offMagic+8]) != magic {
		return Page{}, 0, fmt.Errorf("not a chaos clock page (no %q magic)", magic[:])
	}
	le := binary.LittleEndian
	p := Page{K: int64(le.Uint64(b[offK:])), Lead: int64(le.Uint64(b[offLead:]))}
	for _, bl := range blocks {
		x := p.block(bl.off)
		x.Off = int64(le.Uint64(b[bl.off:]))
		x.Anchor = int64(le.Uint64(b[bl.off+8:]))
	}
	return p, le.Uint64(b[offCounter:]), nil
}

// Skew is what a patched process's clocks show from the moment it is set:
// the realtime clocks (REALTIME, its coarse variant, TAI) Realtime away
// from true time, the monotonic ones (MONOTONIC, its raw and coarse
// variants, BOOTTIME) Monotonic away, and from then on all of them
// running at Rate times true time (1 when zero), none more than MaxLead
// ahead of true time (no bound when zero): a fast clock stops gaining
// there.
type Skew struct {
	Realtime, Monotonic time.Duration
	Rate                float64
	MaxLead             time.Duration
}

// Readings are the writer's own readings of each block's clock, in
// nanoseconds, by block offset: the kernel's, which the patched process
// shares.
type Readings map[int]int64

// Validate reports what is wrong with s: a rate that is not positive and
// finite, or one that would overflow the page.
func (s Skew) Validate() error {
	r := s.rate()
	switch {
	case !(r > 0) || math.IsInf(r, 0) || r > 1000:
		return fmt.Errorf("clock rate %v: want a rate above 0 and at most 1000 (1 is true time)", s.Rate)
	case s.MaxLead < 0:
		return fmt.Errorf("clock lead %v: want a bound of 0 (none) or more", s.MaxLead)
	case s.MaxLead > 0 && (s.Realtime > s.MaxLead || s.Monotonic > s.MaxLead):
		return fmt.Errorf("clock offsets %v and %v: want at most the lead %v", s.Realtime, s.Monotonic, s.MaxLead)
	}
	return nil
}

func (s Skew) rate() float64 {
	if s.Rate == 0 {
		return 1
	}
	return s.Rate
}

// PageFor is the page that makes the clocks show s from the moment of the
// readings now on.
func PageFor(s Skew, now Readings) Page {
	p := Page{K: rateK(s.rate()), Lead: math.MaxInt64}
	if s.MaxLead > 0 {
		p.Lead = int64(s.MaxLead)
	}
	for _, bl := range blocks {
		off := int64(s.Monotonic)
		if bl.off == offRealtime || bl.off == offTAI {
			off = int64(s.Realtime)
		}
		*p.block(bl.off) = Block{Off: off, Anchor: now[bl.off]}
	}
	return p
}

// Shown is how far each clock of p is from true time at the readings now:
// for the realtime and the monotonic clocks.
func (p Page) Shown(now Readings) (realtime, monotonic time.Duration) {
	rt := p.Read(offRealtime, now[offRealtime]) - now[offRealtime]
	mono := p.Read(offMonotonic, now[offMonotonic]) - now[offMonotonic]
	return time.Duration(rt), time.Duration(mono)
}
