package node

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"chaos/node/nodeapi"
	"chaos/raft"
)

// memberTable is the node's address book: every member it has known of,
// by raft ID, with its name and addresses. It only grows: a member removed
// from the configuration keeps its entry (IDs are never reused, so an
// entry never changes meaning), and a name added back maps to its newest
// ID. Which of them are members now is raft's configuration, not the
// table's. The event loop writes it; HTTP handlers and hooks read it.
type memberTable struct {
	mu     sync.RWMutex
	byID   map[uint64]nodeapi.Member // Role unset
	newest map[string]uint64         // name -> its largest ID
}

func newMemberTable(ms []nodeapi.Member) *memberTable {
	t := &memberTable{byID: map[uint64]nodeapi.Member{}, newest: map[string]uint64{}}
	for _, m := range ms {
		t.add(m)
	}
	return t
}

// initialMembers is the table of a new cluster from the peer flags: the
// names in sorted order get IDs 1, 2, ...; every node derives the same IDs
// from the same list.
func initialMembers(c *Config) []nodeapi.Member {
	names := slices.Sorted(maps.Keys(c.Peers))
	ms := make([]nodeapi.Member, len(names))
	for i, n := range names {
		ms[i] = nodeapi.Member{ID: uint64(i + 1), Name: n, Peer: c.Peers[n], Client: c.clientAddrOf(n)}
	}
	return ms
}

// add records m (its Role is dropped); it reports whether m's ID was new.
func (t *memberTable) add(m nodeapi.Member) bool {
	m.Role = ""
	t.mu.Lock()
	defer t.mu.Unlock()
	old, known := t.byID[m.ID]
	t.byID[m.ID] = m
	if known && old.Name != m.Name && t.newest[old.Name] == m.ID {
		// An ID that changed hands (an entry that never committed, its ID
		// given again by a later leader): old's name goes back to its
		// previous ID, if any.
		delete(t.newest, old.Name)
		for id, e := range t.byID {
			if e.Name == old.Name && id > t.newest[old.Name] {
				t.newest[old.Name] = id
			}
		}
	}
	if m.ID > t.newest[m.Name] {
		t.newest[m.Name] = m.ID
	}
	return !known
}

// get returns member id.
func (t *memberTable) get(id uint64) (nodeapi.Member, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	m, ok := t.byID[id]
	return m, ok
}

// name is id's name, "" for none or unknown.
func (t *memberTable) name(id uint64) string {
	m, _ := t.get(id)
	return m.Name
}

// id is the newest ID of name.
func (t *memberTable) id(name string) (uint64, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	id, ok := t.newest[name]
	return id, ok
}

// clientAddr is where the newest member named name serves clients.
func (t *memberTable) clientAddr(name string) (string, bool) {
	id, ok := t.id(name)
	if !ok {
		return "", false
	}
	m, ok := t.get(id)
	return m.Client, ok
}

// nextID is the ID a member added now gets: one more than any known.
func (t *memberTable) nextID() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var top uint64
	for id := range t.byID {
		top = max(top, id)
	}
	return top + 1
}

// all returns every entry, sorted by ID.
func (t *memberTable) all() []nodeapi.Member {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.SortedFunc(maps.Values(t.byID), compareIDs)
}

func compareIDs(a, b nodeapi.Member) int { return cmp.Compare(a.ID, b.ID) }

// view returns the members of cs with their roles, sorted by ID. A member
// the table does not know (which a correct cluster never has) shows with
// its ID only.
func (t *memberTable) view(cs raft.ConfState) []nodeapi.Member {
	out := make([]nodeapi.Member, 0, len(cs.Voters)+len(cs.Learners))
	for _, g := range []struct {
		ids  []uint64
		role string
	}{{cs.Voters, nodeapi.RoleVoter}, {cs.Learners, nodeapi.RoleLearner}} {
		for _, id := range g.ids {
			m, _ := t.get(id)
			m.ID, m.Role = id, g.role
			out = append(out, m)
		}
	}
	slices.SortFunc(out, compareIDs)
	return out
}

// former returns the entries that are not members of cs, sorted by ID.
func (t *memberTable) former(cs raft.ConfState) []nodeapi.Member {
	return slices.DeleteFunc(t.all(), func(m nodeapi.Member) bool {
		return slices.Contains(cs.Voters, m.ID) || slices.Contains(cs.Learners, m.ID)
	})
}

// names returns the names of ids, sorted, comma-separated: how the event
// log lists members.
func (t *memberTable) names(ids []uint64) string {
	ns := make([]string, len(ids))
	for i, id := range ids {
		if ns[i] = t.name(id); ns[i] == "" {
			ns[i] = fmt.Sprint(id)
		}
	}
	slices.Sort(ns)
	return strings.Join(ns, ",")
}
