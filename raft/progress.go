package raft

// progressState is how the leader replicates to one follower.
type progressState uint8

const (
	// stateProbe: the leader does not know where the follower's log matches
	// its own; it sends one append at a time and waits for the answer.
	stateProbe progressState = iota
	// stateReplicate: the logs match up to Match; the leader streams appends
	// optimistically, bounded by the inflight window.
	stateReplicate
	// stateSnapshot: the follower needs a snapshot; the leader sent one and
	// sends nothing else until it is acknowledged or times out.
	stateSnapshot
)

func (s progressState) String() string {
	return [...]string{"probe", "replicate", "snapshot"}[s]
}

// progress is the leader's view of one follower (and of itself).
//
// Invariant: Match < Next.
type progress struct {
	Match uint64
	Next  uint64
	State progressState
	// probeSent: in stateProbe, an append is outstanding. Cleared by any
	// answer from the follower, including heartbeat responses.
	probeSent bool
	// pendingSnapshot is the index of the snapshot sent in stateSnapshot.
	pendingSnapshot uint64
	// snapshotTicks counts ticks spent in stateSnapshot; a snapshot not
	// acknowledged within an election timeout is considered lost.
	snapshotTicks int
	// recentActive: the follower answered since the last quorum check.
	recentActive bool
	inflights    inflights
}

func newProgress(next uint64, maxMsgs int, maxBytes uint64) *progress {
	return &progress{Next: next, inflights: inflights{maxMsgs: maxMsgs, maxBytes: maxBytes}}
}

func (p *progress) becomeProbe() {
	if p.State == stateSnapshot {
		p.Next = max(p.Match+1, p.pendingSnapshot+1)
	} else {
		p.Next = p.Match + 1
	}
	p.State, p.probeSent, p.pendingSnapshot, p.snapshotTicks = stateProbe, false, 0, 0
	p.inflights.reset()
}

// forgot takes in that the follower's log now ends at last, before Match:
// it lost entries it had acknowledged (damaged storage). Match drops to
// last and the follower is probed from there. It reports whether that
// changed anything; a snapshot in flight is left to finish.
func (p *progress) forgot(last uint64) bool {
	if last >= p.Match || p.State == stateSnapshot {
		return false
	}
	p.Match = last
	p.becomeProbe()
	return true
}

func (p *progress) becomeReplicate() {
	p.State, p.probeSent, p.pendingSnapshot = stateReplicate, false, 0
	p.Next = p.Match + 1
	p.inflights.reset()
}

func (p *progress) becomeSnapshot(index uint64) {
	p.State, p.probeSent, p.pendingSnapshot, p.snapshotTicks = stateSnapshot, false, index, 0
	p.inflights.reset()
}

// maybeUpdate records that the follower's log matches up to n. It reports
// whether Match advanced.
func (p *progress) maybeUpdate(n uint64) bool {
	updated := n > p.Match
	if updated {
		p.Match = n
		p.probeSent = false
	}
	p.Next = max(p.Next, n+1)
	return updated
}

// maybeDecrTo handles a rejection of the append after index rejected; next
// is where the leader's hint computation says to resume. It reports false
// for a stale rejection.
func (p *progress) maybeDecrTo(rejected, next uint64) bool {
	if p.State == stateReplicate {
		if rejected <= p.Match {
			return false
		}
		p.Next = max(p.Match+1, min(next, rejected))
		return true
	}
	if p.Next-1 != rejected {
		return false
	}
	p.Next = max(p.Match+1, min(next, rejected))
	p.probeSent = false
	return true
}

// sentEntries records an append of n entries of size bytes ending at last.
func (p *progress) sentEntries(n int, bytes uint64, last uint64) {
	switch p.State {
	case stateReplicate:
		if n > 0 {
			p.Next = last + 1
			p.inflights.add(last, bytes)
		}
	case stateProbe:
		p.probeSent = true
	}
}

// isPaused reports whether the leader must not send appends now.
func (p *progress) isPaused() bool {
	switch p.State {
	case stateProbe:
		return p.probeSent
	case stateReplicate:
		return p.inflights.full()
	}
	return true
}

// inflights is the window of appends sent to a follower and not yet
// acknowledged: a FIFO of (last index, bytes), bounded in count and bytes.
type inflights struct {
	maxMsgs  int
	maxBytes uint64 // 0: unbounded
	buf      []inflight
	bytes    uint64
}

type inflight struct {
	last  uint64
	bytes uint64
}

func (in *inflights) add(last, bytes uint64) {
	in.buf = append(in.buf, inflight{last, bytes})
	in.bytes += bytes
}

// freeLE releases every inflight append ending at or before index.
func (in *inflights) freeLE(index uint64) {
	n := 0
	for n < len(in.buf) && in.buf[n].last <= index {
		in.bytes -= in.buf[n].bytes
		n++
	}
	if n == len(in.buf) {
		in.buf = in.buf[:0]
		return
	}
	in.buf = append(in.buf[:0], in.buf[n:]...)
}

// freeFirst releases the oldest inflight append, so a follower that answers
// heartbeats but lost an append gets the window moving again.
func (in *inflights) freeFirst() {
	if len(in.buf) > 0 {
		in.freeLE(in.buf[0].last)
	}
}

func (in *inflights) full() bool {
	return len(in.buf) >= in.maxMsgs || (in.maxBytes > 0 && in.bytes >= in.maxBytes)
}

func (in *inflights) reset() {
	in.buf = in.buf[:0]
	in.bytes = 0
}
