package db

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// etcd's timing: chaos starts it without --heartbeat-interval and
// --election-timeout, so with its defaults; and the recovery bound chaos
// holds it to.
const (
	etcdHeartbeat = 100 * time.Millisecond
	etcdElection  = time.Second
	etcdRecovery  = 5 * time.Second
)

// Capabilities are etcd's: its leader and states from the maintenance
// status of its v3 JSON gateway, its default timing, its data directory,
// its membership, its fake clocks, its process and its peer address. etcd
// keeps no event log of chaos's format and has no fault hooks.
func (e *Etcd) Capabilities() Capabilities {
	return Capabilities{Leader: e, States: e, Storage: e, Membership: e, FakeClocks: e, Processes: e, Peers: e,
		Timing: Timing{Heartbeat: etcdHeartbeat, ElectionTimeout: etcdElection, Recovery: etcdRecovery}}
}

// States implements StateReporter through the gateway (POST
// /v3/maintenance/status on every node at once): the member's Raft term,
// its leader, its commit index (raftIndex) and applied index
// (raftAppliedIndex). Its role is "leader" when it names itself as
// leader, "follower" when it names another, and "" when it names none
// (a candidate, or a follower that lost its leader: etcd does not say
// which). etcd reports neither its vote nor its last log index. Member
// ids become node names through the ids of the members that answered,
// and failing that, the member list (see etcdIDs).
func (e *Etcd) States(ctx context.Context, nodes []Node) (map[string]NodeState, error) {
	ctx, cancel := context.WithTimeout(ctx, etcdLeaderTimeout)
	defer cancel()
	endpoints := make([]string, len(nodes))
	for i, n := range nodes {
		endpoints[i] = "http://" + e.ClientAddr(n)
	}
	return etcdStates(ctx, &http.Client{}, nodes, endpoints, &e.ids), nil
}

// etcdStates is States over the gateways at endpoints (endpoints[i] is
// nodes[i]'s base URL), within ctx, which must have a deadline; ids
// remembers the member ids learned.
func etcdStates(ctx context.Context, client *http.Client, nodes []Node, endpoints []string, ids *etcdIDs) map[string]NodeState {
	statuses := etcdStatuses(ctx, client, endpoints)
	via := -1
	for i, st := range statuses {
		if st != nil {
			ids.put(st.Header.MemberID, nodes[i].Name)
			via = i
		}
	}
	out := map[string]NodeState{}
	for i, st := range statuses {
		if st == nil {
			continue
		}
		s := NodeState{Term: parseEtcdUint(st.RaftTerm), Commit: parseEtcdUint(st.RaftIndex),
			Applied: parseEtcdUint(st.RaftAppliedIndex)}
		switch {
		case st.Leader == "" || st.Leader == "0":
		case st.Leader == st.Header.MemberID:
			s.Role, s.Leader = RoleLeader, nodes[i].Name
		default:
			s.Role, s.Leader = RoleFollower, ids.name(ctx, client, st.Leader, endpoints[via])
		}
		out[nodes[i].Name] = s
	}
	return out
}

// parseEtcdUint reads one of the gateway's decimal strings (absent: 0).
func parseEtcdUint(s string) uint64 {
	v, _ := strconv.ParseUint(s, 10, 64)
	return v
}

// etcdIDs maps etcd member ids to node names: those seen answering, and
// those of the member list (whose names are our node names, --name). A
// leader that does not answer now (paused, cut off) is still named. Safe
// for concurrent use; the zero value is ready.
type etcdIDs struct {
	mu    sync.Mutex
	names map[string]string
}

func (m *etcdIDs) put(id, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.names == nil {
		m.names = map[string]string{}
	}
	m.names[id] = name
}

func (m *etcdIDs) get(id string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name, ok := m.names[id]
	return name, ok
}

// name is the node name of member id: known already, or read from the
// member list at endpoint; "" when neither names it.
func (m *etcdIDs) name(ctx context.Context, client *http.Client, id, endpoint string) string {
	if name, ok := m.get(id); ok {
		return name
	}
	var ms etcdMembers
	if etcdPost(ctx, client, endpoint+"/v3/cluster/member/list", &ms) != nil {
		return ""
	}
	for _, mb := range ms.Members {
		if mb.Name != "" {
			m.put(mb.ID, mb.Name)
		}
	}
	name, _ := m.get(id)
	return name
}
