package raft

import "slices"

// readRequest is a linearizable read waiting for the leader to confirm that
// it still leads.
type readRequest struct {
	index uint64 // the leader's commit index when the read arrived
	seq   uint64 // the heartbeat round that confirms it
	from  uint64 // the node that asked (the leader itself for local reads)
	ctx   uint64 // the asker's request id
}

// heartbeatRound remembers when a heartbeat round was sent (lease reads).
type heartbeatRound struct {
	seq  uint64
	tick uint64
}

// readOnly implements ReadIndex (Raft thesis, section 6.4) and the leader
// lease. Every heartbeat broadcast is a round with a new sequence number,
// carried in the heartbeats' Context and echoed by the answers. A read
// queued while round s is the newest is confirmed by round s+1: once a quorum
// acknowledged a round >= s+1, no other leader can have been elected before
// the read arrived. Reads arriving in one round share one heartbeat.
//
// Invariants: pending is ordered by seq; every ack is <= seq; rounds is
// ordered by seq.
type readOnly struct {
	seq     uint64
	acks    map[uint64]uint64 // follower -> highest round acknowledged
	pending []readRequest
	// waiting holds reads that arrived before the leader committed an entry
	// of its own term: until then its commit index may be behind.
	waiting []readRequest
	// needBcast: reads were queued since the last heartbeat.
	needBcast bool
	// rounds are the send ticks of recent rounds (lease mode only).
	rounds []heartbeatRound
}

// maxRounds bounds the remembered rounds; older ones only shorten a lease.
const maxRounds = 1024

func (ro *readOnly) reset() {
	ro.acks = map[uint64]uint64{}
	ro.pending, ro.waiting, ro.rounds = nil, nil, nil
	ro.needBcast = false
}

// add queues a read confirmed by the next heartbeat round.
func (ro *readOnly) add(index, from, ctx uint64) {
	ro.pending = append(ro.pending, readRequest{index: index, seq: ro.seq + 1, from: from, ctx: ctx})
	ro.needBcast = true
}

// newRound starts a heartbeat round at tick and returns its sequence.
func (ro *readOnly) newRound(tick uint64, remember bool) uint64 {
	ro.seq++
	ro.needBcast = false
	if remember {
		if len(ro.rounds) >= maxRounds {
			ro.rounds = slices.Delete(ro.rounds, 0, 1)
		}
		ro.rounds = append(ro.rounds, heartbeatRound{seq: ro.seq, tick: tick})
	}
	return ro.seq
}

// ack records a heartbeat acknowledgement and returns the reads a quorum now
// confirms.
func (ro *readOnly) ack(from, seq uint64, voters []uint64, self uint64) []readRequest {
	if seq <= ro.acks[from] || seq > ro.seq {
		return nil
	}
	ro.acks[from] = seq
	if len(ro.pending) == 0 {
		return nil
	}
	confirmed := ro.quorumSeq(voters, self)
	n := 0
	for n < len(ro.pending) && ro.pending[n].seq <= confirmed {
		n++
	}
	done := slices.Clone(ro.pending[:n])
	ro.pending = ro.pending[n:]
	return done
}

// quorumSeq is the highest round acknowledged by a quorum of voters, the
// leader counting as having acknowledged every round.
func (ro *readOnly) quorumSeq(voters []uint64, self uint64) uint64 {
	seqs := make([]uint64, 0, len(voters))
	for _, id := range voters {
		if id == self {
			seqs = append(seqs, ro.seq)
		} else {
			seqs = append(seqs, ro.acks[id])
		}
	}
	slices.Sort(seqs)
	// With n voters, the value at n - (n/2+1) is held by a quorum.
	return seqs[len(seqs)-(len(seqs)/2+1)]
}

// leaseStart returns the send tick of the newest round a quorum
// acknowledged: every member of that quorum reset its election timer after
// that tick, so none votes for another leader for an election timeout after it.
func (ro *readOnly) leaseStart(voters []uint64, self uint64) (uint64, bool) {
	q := ro.quorumSeq(voters, self)
	for len(ro.rounds) > 0 && ro.rounds[0].seq < q {
		ro.rounds = ro.rounds[1:]
	}
	if q == 0 || len(ro.rounds) == 0 || ro.rounds[0].seq != q {
		return 0, false
	}
	return ro.rounds[0].tick, true
}
