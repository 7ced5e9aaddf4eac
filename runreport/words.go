package runreport

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"chaos/history"
	"chaos/nemesis"
)

// describe fills in a fault's targets, mechanism and effect, in words,
// from the value of the op f that began it.
func describe(f string, value json.RawMessage, flt Fault) Fault {
	switch f {
	case history.FKill:
		return describeProcess(value, "killed", "SIGKILL", flt)
	case history.FPause:
		return describeProcess(value, "paused", "SIGSTOP", flt)
	case history.FStartPartition:
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(value, &fields)
		flt.Targets = cutWords(grudgeOf(fields))
		flt.Mechanism = stringField(fields, "mechanism")
		return flt
	case history.FClockBump:
		return describeClock(value, flt)
	case history.FStartPacket:
		return describePacket(value, flt)
	}
	return describeOther(value, flt)
}

// processValue is the value of kill and pause ops (docs/FORMATS.md).
type processValue struct {
	Nodes     []string `json:"nodes"`
	Mode      string   `json:"mode"`
	Effect    string   `json:"effect"`
	Silent    []string `json:"silent_before"`
	Answering []string `json:"answering_after"`
}

// describeProcess words a kill or a pause: "n1, n3 killed".
func describeProcess(value json.RawMessage, verb, mechanism string, flt Fault) Fault {
	var v processValue
	_ = json.Unmarshal(value, &v)
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

// grudgeOf takes the node fields of a partition's value: each node and
// the peers whose traffic it drops. Other fields (mechanism) are not
// lists of names and are left out.
func grudgeOf(fields map[string]json.RawMessage) nemesis.Grudge {
	g := nemesis.Grudge{}
	for k, raw := range fields {
		var peers []string
		if json.Unmarshal(raw, &peers) == nil && peers != nil {
			g[k] = peers
		}
	}
	return g
}

// cutWords says who is cut off from whom: nodes with the same drop list
// are grouped ("n1, n2 cut off from n3, n4, n5"); a group whose every
// link another statement already names is left out, so a clean split is
// said once, the smaller side first. A one-way drop (a node drops a peer
// that still hears it) is "deaf to".
func cutWords(g nemesis.Grudge) string {
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
	_ = json.Unmarshal(fields[k], &s)
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

// describeOther words an op chaos has no words for: a targeted fault's
// leader, cut and nodes when its value has them, else the value itself.
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
	var cut map[string]json.RawMessage
	if json.Unmarshal(fields["cut"], &cut) == nil && len(cut) > 0 {
		parts = append(parts, cutWords(grudgeOf(cut)))
		flt.Mechanism = stringField(cut, "mechanism")
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
