package raftcheck

import (
	"encoding/json"
	"maps"
	"math/bits"
	"slices"
	"strings"

	"chaos/history"
)

// Which stretches of a run a correct cluster should have a leader in: a
// majority of its nodes up, not paused, on a true clock, and able to talk
// to each other, as the history's nemesis ops say. faults.go pairs faults
// with their ends for the recovery verdict; this file needs more, the
// nodes and links each fault touches.

// maxCliqueNodes bounds the nodes whose connectivity is searched
// exhaustively (2^n subsets); a larger cluster is never judged to have a
// connected majority, so the stuck rule stays silent rather than guess.
const maxCliqueNodes = 16

// clusterState is the cluster as the nemesis ops seen so far leave it.
type clusterState struct {
	killed, paused, skewed map[string]bool
	grudge                 map[string][]string // partition: node -> peers whose traffic it drops
	degraded               map[string][]string // packet faults: sender -> peers its packets to are degraded
	// unknown holds faults whose targets cannot be told (an f chaos does
	// not know, a value without nodes): every node counts as hit.
	unknown map[string]bool
}

func newClusterState() *clusterState {
	return &clusterState{killed: map[string]bool{}, paused: map[string]bool{}, skewed: map[string]bool{},
		unknown: map[string]bool{}}
}

// nemesisValue is the part of a nemesis op's value this file reads.
type nemesisValue struct {
	Nodes   []string            `json:"nodes"`
	Targets map[string][]string `json:"targets"` // start-packet
	Error   *string             `json:"error"`   // a failed transition
	Op      string              `json:"op"`      // what a failed start did
	Value   json.RawMessage     `json:"value"`   // its value
}

// apply changes the state by one nemesis op (docs/FORMATS.md, "Nemesis
// operations"). A failed stop leaves its fault in place (the heal ends
// it); a failed start counts only when it names the op it did. An op of a
// family this file does not know hits every node until its stop.
func (s *clusterState) apply(f string, value json.RawMessage) {
	var v nemesisValue
	parsed := json.Unmarshal(value, &v) == nil
	if parsed && v.Error != nil {
		if strings.HasPrefix(f, "start-") && v.Op != "" {
			s.apply(v.Op, v.Value)
		}
		return
	}
	switch f {
	case history.FHeal:
		*s = *newClusterState()
	case history.FKill, history.FPause, history.FClockBump:
		set := s.nodeSet(f)
		if !parsed || len(v.Nodes) == 0 {
			s.unknown[f] = true
		}
		for _, n := range v.Nodes {
			set[n] = true
		}
	case history.FStart, history.FResume, history.FClockReset:
		begin := faultEnds[f]
		set := s.nodeSet(begin)
		if !parsed || len(v.Nodes) == 0 {
			clear(set)
		}
		for _, n := range v.Nodes {
			delete(set, n)
		}
		delete(s.unknown, begin)
	case history.FStartPartition:
		s.grudge = grudgeOf(value)
		if s.grudge == nil {
			s.unknown[f] = true
		}
	case history.FStopPartition:
		s.grudge = nil
		delete(s.unknown, history.FStartPartition)
	case history.FStartPacket:
		s.degraded = v.Targets
		if !parsed || v.Targets == nil {
			s.unknown[f] = true
		}
	case history.FStopPacket:
		s.degraded = nil
		delete(s.unknown, history.FStartPacket)
	case startPowerLoss, startCorrupt:
		// Their nodes are down (killed; their files damaged or cut back)
		// until the stop starts them again.
		if !parsed || len(v.Nodes) == 0 {
			s.unknown[f] = true
		}
		for _, n := range v.Nodes {
			s.killed[n] = true
		}
	case stopPowerLoss, stopCorrupt:
		for _, n := range v.Nodes {
			delete(s.killed, n)
		}
		delete(s.unknown, "start-"+strings.TrimPrefix(f, "stop-"))
	default:
		// Another family's "start-<family>" lasts until its
		// "stop-<family>" (or the heal).
		if family, ok := strings.CutPrefix(f, "stop-"); ok {
			delete(s.unknown, "start-"+family)
			return
		}
		s.unknown[f] = true
	}
}

// The ops of the storage families that take nodes down (package nemesis:
// power-loss and corrupt), named here as the history holds them.
const (
	startPowerLoss = "start-power-loss"
	stopPowerLoss  = "stop-power-loss"
	startCorrupt   = "start-corrupt"
	stopCorrupt    = "stop-corrupt"
)

// knownFamily reports whether apply knows what an op named f does: the
// ops of the kill, pause, partition, clock, packet, power-loss and corrupt
// families, their failed transitions ("start-kill"...), and the heal.
func knownFamily(f string) bool {
	switch f {
	case history.FHeal, history.FKill, history.FStart, history.FPause, history.FResume, history.FClockBump,
		history.FClockReset, history.FStartPartition, history.FStopPartition, history.FStartPacket, history.FStopPacket,
		startPowerLoss, stopPowerLoss, startCorrupt, stopCorrupt:
		return true
	}
	for _, family := range []string{"kill", "pause", "partition", "clock", "packet"} {
		if f == "start-"+family || f == "stop-"+family {
			return true
		}
	}
	return false
}

// nodeSet returns the set a node fault begun by f fills.
func (s *clusterState) nodeSet(f string) map[string]bool {
	switch f {
	case history.FKill:
		return s.killed
	case history.FPause:
		return s.paused
	}
	return s.skewed
}

// grudgeOf reads a start-partition value: every key but "mechanism" is a
// node, holding the peers it drops. nil when the value is not that shape.
func grudgeOf(value json.RawMessage) map[string][]string {
	var raw map[string]json.RawMessage
	if json.Unmarshal(value, &raw) != nil {
		return nil
	}
	g := map[string][]string{}
	for k, v := range raw {
		if k == "mechanism" {
			continue
		}
		var peers []string
		if json.Unmarshal(v, &peers) != nil {
			return nil
		}
		g[k] = peers
	}
	return g
}

// cut reports whether the link between a and b is partitioned or
// degraded, in either direction.
func (s *clusterState) cut(a, b string) bool {
	return slices.Contains(s.grudge[a], b) || slices.Contains(s.grudge[b], a) ||
		slices.Contains(s.degraded[a], b) || slices.Contains(s.degraded[b], a)
}

// hit reports whether node n is down, paused or on a skewed clock.
func (s *clusterState) hit(n string) bool { return s.killed[n] || s.paused[n] || s.skewed[n] }

// majorityConnected reports whether some majority of nodes are all
// untouched by node faults and pairwise linked by untouched links: a
// clique, so that its most up-to-date member can win every vote in it.
// Degraded links count as cut, so packet faults never make a stretch one
// in which a leader is owed.
func (s *clusterState) majorityConnected(nodes []string) bool {
	if len(s.unknown) > 0 || len(nodes) > maxCliqueNodes {
		return false
	}
	var ok []string
	for _, n := range nodes {
		if !s.hit(n) {
			ok = append(ok, n)
		}
	}
	quorum := len(nodes)/2 + 1
	adj := make([]uint32, len(ok)) // adj[i]: bit j set when ok[i] and ok[j] can talk
	for i := range ok {
		for j := range ok {
			if i == j || !s.cut(ok[i], ok[j]) {
				adj[i] |= 1 << j
			}
		}
	}
	for set := uint32(0); set < 1<<len(ok); set++ {
		if bits.OnesCount32(set) < quorum {
			continue
		}
		if isClique(set, adj) {
			return true
		}
	}
	return false
}

// isClique reports whether every member of set is linked to every other.
func isClique(set uint32, adj []uint32) bool {
	for i := range adj {
		if set&(1<<i) != 0 && adj[i]&set != set {
			return false
		}
	}
	return true
}

// describe names the faults active, for a finding ("no fault" when none).
func (s *clusterState) describe() string {
	var parts []string
	for _, f := range []struct {
		name string
		set  map[string]bool
	}{{"killed", s.killed}, {"paused", s.paused}, {"clock skewed", s.skewed}} {
		if len(f.set) > 0 {
			parts = append(parts, f.name+" "+strings.Join(slices.Sorted(maps.Keys(f.set)), ","))
		}
	}
	if len(s.grudge) > 0 {
		parts = append(parts, "partitioned")
	}
	if len(s.degraded) > 0 {
		parts = append(parts, "packet faults")
	}
	if len(parts) == 0 {
		return "no fault"
	}
	return strings.Join(parts, "; ")
}
