package raft

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
)

// scenario drives a simulated cluster by hand with verbs that say what they
// do (crash, restart, disconnect, ...), on top of the simulator's network,
// disks and invariant checks. Random faults are off unless a test sets them.
type scenario struct {
	*simulation
	t testing.TB
}

func newScenario(t testing.TB, nodes int, seed uint64, tweak func(*simConfig)) *scenario {
	cfg := simConfig{seed: seed, nodes: nodes, electionTick: 10, heartbeatTick: 1,
		preVote: true, checkQuorum: true, maxMsgBytes: 1 << 20, maxDelay: 1}
	if tweak != nil {
		tweak(&cfg)
	}
	sc := &scenario{simulation: newSimulation(cfg), t: t}
	sc.verbose = testing.Verbose() && *simSeed != 0
	return sc
}

func (sc *scenario) fatalf(format string, args ...any) {
	sc.t.Helper()
	sc.t.Fatalf("seed %d, tick %d: %s", sc.cfg.seed, sc.now, fmt.Sprintf(format, args...))
}

// run advances n ticks, failing on any invariant violation.
func (sc *scenario) run(n int) {
	sc.t.Helper()
	for range n {
		sc.now++
		sc.step()
		if sc.err != nil {
			sc.fatalf("%v", sc.err)
		}
	}
}

// waitLeader runs until some live node leads and every live node connected
// to it follows it, and returns it. It fails after max ticks.
func (sc *scenario) waitLeader(max int) *simNode {
	sc.t.Helper()
	for range max {
		if l := sc.leader(); l != nil && sc.allFollow(l) {
			return l
		}
		sc.run(1)
	}
	sc.fatalf("no leader after %d ticks (%s)", max, sc.leaderSummary())
	return nil
}

// allFollow reports whether l can reach a quorum and every live member
// (of l's configuration) it can reach follows it in its term.
func (sc *scenario) allFollow(l *simNode) bool {
	term := l.rn.Status().Term
	members := l.rn.Status().Conf.members()
	reached := 0
	for _, id := range members {
		n := sc.node(id)
		if n.rn == nil || sc.net.cut[[2]uint64{l.id, n.id}] {
			continue
		}
		reached++
		if st := n.rn.Status(); st.Term != term || st.Lead != l.id {
			return false
		}
	}
	return reached > len(members)/2
}

func (sc *scenario) node(id uint64) *simNode { return sc.nodes[id-1] }

func (sc *scenario) crash(id uint64) { sc.crashed(sc.node(id)); sc.logf("crash n%d", id) }

func (sc *scenario) restart(id uint64) {
	n := sc.node(id)
	n.restarts++
	sc.start(n)
	sc.logf("restart n%d", id)
}

// disconnect cuts every link of node id.
func (sc *scenario) disconnect(id uint64) {
	var others []uint64
	for _, n := range sc.nodes {
		if n.id != id {
			others = append(others, n.id)
		}
	}
	sc.net.isolate([]uint64{id}, others)
	sc.logf("disconnect n%d", id)
}

// reconnect restores every link of node id.
func (sc *scenario) reconnect(id uint64) {
	for k := range sc.net.cut {
		if k[0] == id || k[1] == id {
			delete(sc.net.cut, k)
		}
	}
	sc.logf("reconnect n%d", id)
}

// commit proposes a new command at the current leader until it is applied
// on every live node connected to the leader, and returns its index. It
// retries through leader changes, like a client would, for at most max ticks.
func (sc *scenario) commit(max int) uint64 {
	sc.t.Helper()
	sc.nextCmd++
	cmd := binary.LittleEndian.AppendUint64([]byte("cmd"), sc.nextCmd)
	var index uint64
	for range max {
		if index == 0 {
			if l := sc.leader(); l != nil {
				if i, err := l.rn.Propose(cmd); err == nil {
					index = i
				}
			}
		}
		if index != 0 && sc.appliedEverywhere(index) {
			if e := sc.entryAt(index); e == nil || bytes.Equal(e, cmd) {
				return index // (nil: compacted everywhere, so it was applied)
			}
			index = 0 // overwritten by another leader: propose again
		}
		sc.run(1)
	}
	sc.fatalf("command %d not committed everywhere within %d ticks (%s)", sc.nextCmd, max, sc.leaderSummary())
	return 0
}

// appliedEverywhere reports whether every live member connected to the
// leader applied index.
func (sc *scenario) appliedEverywhere(index uint64) bool {
	l := sc.leader()
	for _, id := range sc.members() {
		n := sc.node(id)
		if n.rn == nil || (l != nil && sc.net.cut[[2]uint64{l.id, n.id}]) {
			continue
		}
		if n.smIndex < index {
			return false
		}
	}
	return true
}

// entryAt returns the data of the entry at index in some live node's durable
// log, or nil when every copy was compacted.
func (sc *scenario) entryAt(index uint64) []byte {
	for _, n := range sc.nodes {
		d := n.disk
		var base uint64
		if d.snap != nil {
			base = d.snap.Meta.Index
		}
		if index > base && index-base <= uint64(len(d.ents)) {
			return d.ents[index-base-1].Data
		}
	}
	return nil
}

func (sc *scenario) term(id uint64) uint64 { return sc.node(id).rn.Status().Term }
