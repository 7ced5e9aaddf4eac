package faultrec

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Partition is the value of start-partition and stop-partition, and of
// the cut a targeted fault makes: the grudge, by node the peers whose
// traffic it drops, beside the mechanism, in one JSON object whose keys
// are the node names and "mechanism":
//
//	{"mechanism":"iptables","n1":["n2"],"n2":["n1","n3"],"n3":["n2"]}
//
// A node that drops nothing is left out; a stop-partition with no
// partition active is {} (no mechanism). No node may be called
// "mechanism".
type Partition struct {
	// Mechanism is "iptables" or "hooks"; "" is left out.
	Mechanism string
	// Grudge is, by node, the peers whose traffic the node drops.
	Grudge map[string][]string
}

// MarshalJSON writes the grudge's nodes and "mechanism" as one object,
// keys sorted, nodes with no peer left out.
func (p Partition) MarshalJSON() ([]byte, error) {
	fields := map[string]any{}
	if p.Mechanism != "" {
		fields["mechanism"] = p.Mechanism
	}
	for n, peers := range p.Grudge {
		if n == "mechanism" {
			return nil, fmt.Errorf("partition: a node is called %q", n)
		}
		if len(peers) > 0 {
			fields[n] = peers
		}
	}
	return json.Marshal(fields)
}

// UnmarshalJSON reads an object whose "mechanism" is a string and every
// other key a node holding a list of peers; any other shape is an error.
func (p *Partition) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return fmt.Errorf("partition: %w", err)
	}
	if fields == nil {
		return fmt.Errorf("partition: %s is no object", b)
	}
	out := Partition{Grudge: map[string][]string{}}
	for k, raw := range fields {
		if k == "mechanism" {
			if err := json.Unmarshal(raw, &out.Mechanism); err != nil {
				return fmt.Errorf("partition: mechanism: %w", err)
			}
			continue
		}
		var peers []string
		if err := json.Unmarshal(raw, &peers); err != nil {
			return fmt.Errorf("partition: node %q: %w", k, err)
		}
		out.Grudge[k] = peers
	}
	*p = out
	return nil
}

// Nodes are the nodes of the grudge that drop some peer, sorted.
func (p Partition) Nodes() []string {
	var nodes []string
	for n, peers := range p.Grudge {
		if len(peers) > 0 {
			nodes = append(nodes, n)
		}
	}
	slices.Sort(nodes)
	return nodes
}
