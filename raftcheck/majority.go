package raftcheck

import (
	"encoding/json"
	"maps"
	"math/bits"
	"slices"
	"strings"

	"chaos/history/faultrec"
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

// apply changes the state by one nemesis op (docs/FORMATS.md, "Nemesis
// operations"), its value decoded as its fault record (package faultrec).
// A failed stop leaves its fault in place (the heal ends it); a failed
// start counts only when it names the op it did. An op of a family this
// file does not know, or whose value does not say what it hit, hits every
// node until its stop.
func (s *clusterState) apply(f string, value json.RawMessage) {
	rec, err := faultrec.Decode(f, value)
	if fail, ok := rec.(faultrec.Failure); ok && err == nil {
		if strings.HasPrefix(f, "start-") && fail.Op != "" {
			s.apply(fail.Op, fail.Value)
		}
		return
	}
	if f == faultrec.OpHeal {
		*s = *newClusterState()
		return
	}
	fam, _, _ := faultrec.OpFamily(f)
	switch {
	case !appliedFamily(fam.Name) || (f != fam.StartOp && f != fam.StopOp):
		// Another family's "start-<family>" lasts until its
		// "stop-<family>" (or the heal).
		if family, ok := strings.CutPrefix(f, "stop-"); ok {
			delete(s.unknown, "start-"+family)
			return
		}
		s.unknown[f] = true
	case f == fam.StartOp:
		s.begin(fam, rec, err)
	default:
		s.end(fam, rec, err)
	}
}

// appliedFamily reports whether apply knows what the faults of the family
// called name do to the nodes and links: kill, pause, partition, clock,
// packet, and the storage families that take nodes down (power-loss and
// corrupt: killed, their files damaged or cut back, until the stop starts
// them again).
func appliedFamily(name string) bool {
	switch name {
	case faultrec.NameKill, faultrec.NamePause, faultrec.NamePartition, faultrec.NameClock, faultrec.NamePacket,
		faultrec.NamePowerLoss, faultrec.NameCorrupt:
		return true
	}
	return false
}

// begin applies the start op of an applied family, its record rec (err
// when its value did not decode).
func (s *clusterState) begin(fam faultrec.Family, rec faultrec.Value, err error) {
	switch fam.Name {
	case faultrec.NamePartition:
		p, ok := rec.(faultrec.Partition)
		s.grudge = p.Grudge
		if err != nil || !ok || p.Grudge == nil {
			s.grudge = nil
			s.unknown[fam.StartOp] = true
		}
	case faultrec.NamePacket:
		p, ok := rec.(faultrec.Packet)
		s.degraded = p.Targets
		if err != nil || !ok || p.Targets == nil {
			s.unknown[fam.StartOp] = true
		}
	default:
		nodes := recordNodes(rec)
		if err != nil || len(nodes) == 0 {
			s.unknown[fam.StartOp] = true
		}
		set := s.nodeSet(fam)
		for _, n := range nodes {
			set[n] = true
		}
	}
}

// end applies the stop op of an applied family: its nodes are back (all of
// the family's, when its value does not name them), its links restored.
func (s *clusterState) end(fam faultrec.Family, rec faultrec.Value, err error) {
	delete(s.unknown, fam.StartOp)
	switch fam.Name {
	case faultrec.NamePartition:
		s.grudge = nil
	case faultrec.NamePacket:
		s.degraded = nil
	default:
		nodes, set := recordNodes(rec), s.nodeSet(fam)
		if (err != nil || len(nodes) == 0) && fam.Target != faultrec.TargetStorage {
			clear(set)
		}
		for _, n := range nodes {
			delete(set, n)
		}
	}
}

// recordNodes are the nodes a fault record of a node fault names.
func recordNodes(rec faultrec.Value) []string {
	switch v := rec.(type) {
	case faultrec.Process:
		return v.Nodes
	case faultrec.Clock:
		return v.Nodes
	case faultrec.PowerLoss:
		return v.Nodes
	case faultrec.Corrupt:
		return v.Nodes
	}
	return nil
}

// knownFamily reports whether apply knows what an op named f does: the
// start and stop ops of the applied families (appliedFamily), their failed
// transitions ("start-kill"...), and the heal.
func knownFamily(f string) bool {
	if f == faultrec.OpHeal {
		return true
	}
	fam, _, ok := faultrec.OpFamily(f)
	return ok && appliedFamily(fam.Name)
}

// nodeSet returns the set a node fault of the family fam fills: the
// storage families' nodes are down, as kill's.
func (s *clusterState) nodeSet(fam faultrec.Family) map[string]bool {
	switch {
	case fam.Name == faultrec.NameKill, fam.Target == faultrec.TargetStorage:
		return s.killed
	case fam.Name == faultrec.NamePause:
		return s.paused
	}
	return s.skewed
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
