package runreport

import (
	"math/bits"
	"time"
)

// subBits sets the resolution of latency buckets: below 2^subBits ns each
// nanosecond is a bucket of its own; above, each doubling of latency is
// cut into 2^subBits buckets, so a bucket is less than 1/2^subBits of its
// values wide and its middle is within 1/2^(subBits+1) (0.4%) of any of
// them.
const subBits = 7

// bucketOf is the bucket of a latency v >= 0. Buckets are numbered from
// 0 in the order of the latencies they hold, without gaps.
func bucketOf(v time.Duration) int {
	if v < 1<<subBits {
		return int(max(v, 0))
	}
	shift := bits.Len64(uint64(v)) - subBits - 1
	return (shift+1)<<subBits | int(v>>shift)&(1<<subBits-1)
}

// bucketRange is the least latency of bucket b and how many nanoseconds
// it holds.
func bucketRange(b int) (low, width time.Duration) {
	if b < 1<<subBits {
		return time.Duration(b), 1
	}
	shift := b>>subBits - 1
	return time.Duration(b&(1<<subBits-1)|1<<subBits) << shift, 1 << shift
}

// bucketMiddle is the middle latency of bucket b.
func bucketMiddle(b int) time.Duration {
	low, width := bucketRange(b)
	return low + (width-1)/2
}

// histogram counts latencies by bucket, and keeps their least and
// greatest exactly.
type histogram struct {
	counts   []uint32 // by bucket
	n        int
	min, max time.Duration
}

// add counts a latency v >= 0.
func (h *histogram) add(v time.Duration) {
	b := bucketOf(v)
	if b >= len(h.counts) {
		h.counts = append(h.counts, make([]uint32, b+1-len(h.counts))...)
	}
	h.counts[b]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	h.max = max(h.max, v)
	h.n++
}

// quantile is the q-quantile of the latencies by the nearest-rank
// method, to within the resolution of its bucket (see subBits): the
// middle of the bucket holding it, kept between the least and greatest
// latency. 0 for no latencies.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := min(max(int(q*float64(h.n)+0.999999)-1, 0), h.n-1) // 0-based
	seen := 0
	for b, c := range h.counts {
		seen += int(c)
		if seen > rank {
			return min(max(bucketMiddle(b), h.min), h.max)
		}
	}
	return h.max
}
