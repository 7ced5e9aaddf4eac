package runreport

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"chaos/history/faultrec"
)

// describe fills in a fault's targets, mechanism and effect, in words,
// from the value of the op f that began it, decoded as its fault record
// (package faultrec). A value that does not decode is shown as such, with
// why, in place of the targets; an op of no family known to faultrec is
// described from whatever its value holds (describeOther).
func describe(f string, value json.RawMessage, flt Fault) Fault {
	rec, err := faultrec.Decode(f, value)
	if errors.Is(err, faultrec.ErrUnknownOp) {
		return describeOther(value, flt)
	}
	if err != nil {
		flt.Targets = fmt.Sprintf("undecodable %s value: %v", f, err)
		return flt
	}
	switch v := rec.(type) {
	case faultrec.Process:
		if f == faultrec.OpPause {
			return describeProcess(v, "paused", "SIGSTOP", flt)
		}
		return describeProcess(v, "killed", "SIGKILL", flt)
	case faultrec.Partition:
		flt.Targets = cutWords(v.Grudge)
		flt.Mechanism = v.Mechanism
		return flt
	case faultrec.Clock:
		return describeClock(v, flt)
	case faultrec.Packet:
		return describePacket(v, flt)
	case faultrec.Targeted:
		return describeTargeted(v, value, flt)
	case faultrec.PowerLoss:
		return describeNodes(v.Nodes, v.Effect, flt)
	case faultrec.Corrupt:
		return describeNodes(v.Nodes, v.Effect, flt)
	case faultrec.DiskErrors:
		return describeNodes(v.Nodes, "", flt)
	}
	return describeOther(value, flt)
}

// describeNodes words a storage fault: "nodes n1, n2", and its effect.
func describeNodes(nodes []string, effect string, flt Fault) Fault {
	flt.Targets = "nodes " + nodeList(nodes)
	if len(nodes) == 0 {
		flt.Targets = "no node"
	}
	flt.Effect = effect
	return flt
}

// describeProcess words a kill or a pause: "n1, n3 killed".
func describeProcess(v faultrec.Process, verb, mechanism string, flt Fault) Fault {
	flt.Nodes = v.Nodes
	flt.Targets = nodeList(v.Nodes) + " " + verb
	if v.Mode != "" {
		flt.Targets += " (" + v.Mode + ")"
	}
	flt.Mechanism = mechanism
	flt.Effect = v.Effect
	if len(v.Silent) > 0 {
		flt.Effect += "; silent before: " + nodeList(v.Silent)
	}
	if len(v.Answering) > 0 {
		flt.Effect += "; still answering after: " + nodeList(v.Answering)
	}
	return flt
}

// nodeList writes nodes as "n1, n3"; "no node" for none.
func nodeList(nodes []string) string {
	if len(nodes) == 0 {
		return "no node"
	}
	return strings.Join(nodes, ", ")
}

// cutWords says who is cut off from whom: nodes with the same drop list
// are grouped ("n1, n2 cut off from n3, n4, n5"); a group whose every
// link another statement already names is left out, so a clean split is
// said once, the smaller side first. A one-way drop (a node drops a peer
// that still hears it) is "deaf to".
func cutWords(g map[string][]string) string {
	groups := map[string][]string{} // drop list → nodes dropping exactly it
	for n, peers := range g {
		if len(peers) > 0 {
			k := strings.Join(sorted(peers), ",")
			groups[k] = append(groups[k], n)
		}
	}
	keys := slices.SortedFunc(maps.Keys(groups), func(a, b string) int {
		if d := len(groups[a]) - len(groups[b]); d != 0 {
			return d
		}
		return strings.Compare(sorted(groups[a])[0], sorted(groups[b])[0])
	})
	named := map[[2]string]bool{}
	var parts []string
	for _, k := range keys {
		nodes, peers := sorted(groups[k]), strings.Split(k, ",")
		if allNamed(named, nodes, peers) {
			continue
		}
		verb := "cut off from"
		for _, n := range nodes {
			for _, p := range peers {
				named[[2]string{n, p}], named[[2]string{p, n}] = true, true
				if !slices.Contains(g[p], n) {
					verb = "deaf to"
				}
			}
		}
		parts = append(parts, nodeList(nodes)+" "+verb+" "+nodeList(peers))
	}
	if len(parts) == 0 {
		return "no link cut"
	}
	return strings.Join(parts, "; ")
}

// allNamed reports whether every link between nodes and peers is named.
func allNamed(named map[[2]string]bool, nodes, peers []string) bool {
	for _, n := range nodes {
		for _, p := range peers {
			if !named[[2]string{n, p}] {
				return false
			}
		}
	}
	return true
}

// sorted returns a sorted copy of s.
func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

// stringField is fields[k] when it is a string, else "".
func stringField(fields map[string]json.RawMessage, k string) string {
	var s string
	if json.Unmarshal(fields[k], &s) != nil {
		return "" // absent, or not a string: no words for it
	}
	return s
}

// trimJSON is a value shown as it is, cut to a readable length.
func trimJSON(v json.RawMessage) string {
	s := string(v)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// describeTargeted words a targeted fault: its leader and its cut, else
// its value as it is; the effect and the outcome.
func describeTargeted(v faultrec.Targeted, value json.RawMessage, flt Fault) Fault {
	var parts []string
	if v.Leader != "" {
		parts = append(parts, "leader "+v.Leader)
	}
	if v.Cut != nil {
		parts = append(parts, cutWords(v.Cut.Grudge))
		flt.Mechanism = v.Cut.Mechanism
	}
	if len(parts) == 0 {
		parts = append(parts, trimJSON(value))
	}
	flt.Targets = strings.Join(parts, "; ")
	flt.Effect = strings.TrimPrefix(strings.TrimSuffix(v.Effect+"; "+v.Outcome, "; "), "; ")
	return flt
}

// describeOther words an op chaos has no record type for (a family of a
// later chaos, an op of another tool): its leader, nodes, cut, effect,
// outcome and mechanism when its value is an object that has them, else
// the value itself.
func describeOther(value json.RawMessage, flt Fault) Fault {
	var fields map[string]json.RawMessage
	if json.Unmarshal(value, &fields) != nil {
		if len(value) > 0 && string(value) != "null" {
			flt.Targets = trimJSON(value)
		}
		return flt
	}
	var parts []string
	if l := stringField(fields, "leader"); l != "" {
		parts = append(parts, "leader "+l)
	}
	var nodes []string
	if json.Unmarshal(fields["nodes"], &nodes) == nil && len(nodes) > 0 {
		parts = append(parts, "nodes "+nodeList(nodes))
	}
	var cut faultrec.Partition
	if json.Unmarshal(fields["cut"], &cut) == nil && (cut.Mechanism != "" || len(cut.Grudge) > 0) {
		parts = append(parts, cutWords(cut.Grudge))
		flt.Mechanism = cut.Mechanism
	}
	if len(parts) == 0 {
		parts = append(parts, trimJSON(value))
	}
	flt.Targets = strings.Join(parts, "; ")
	flt.Effect = stringField(fields, "effect")
	if o := stringField(fields, "outcome"); o != "" {
		flt.Effect = strings.TrimPrefix(flt.Effect+"; "+o, "; ")
	}
	if m := stringField(fields, "mechanism"); m != "" {
		flt.Mechanism = m
	}
	return flt
}

// percent writes a probability as a percentage.
func percent(p float64) string { return fmt.Sprintf("%g%%", p*100) }
