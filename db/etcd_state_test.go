package db

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// etcdRecorded are the maintenance statuses of a three-member etcd 3.4.23
// cluster (members n1, n2, n3 in order; n2 leads term 2) and its member
// list, as its gateway answered them.
func etcdRecorded(t *testing.T) (statuses []string, members string) {
	t.Helper()
	b, err := os.ReadFile("testdata/etcd-3.4-statuses.jsonl")
	require.NoError(t, err)
	m, err := os.ReadFile("testdata/etcd-3.4-member-list.json")
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(b)), "\n"), string(m)
}

// etcdStatesOf is States over fake gateways answering statuses ("": not
// answering) and members, with ids, and the count of member list requests.
func etcdStatesOf(t *testing.T, ids *etcdIDs, members string, statuses ...string) (map[string]NodeState, int32) {
	t.Helper()
	var lists atomic.Int32
	nodes := make([]Node, len(statuses))
	endpoints := make([]string, len(statuses))
	for i, st := range statuses {
		nodes[i] = Node{Name: fmt.Sprintf("n%d", i+1)}
		endpoints[i] = etcdFakeGateway(t, st, members, &lists)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	return etcdStates(ctx, &http.Client{}, nodes, endpoints, ids), lists.Load()
}

// Every member's term, leader (by node name), commit and applied index;
// the member that names itself leads, the others follow.
func TestEtcdStatesFromRecordedStatuses(t *testing.T) {
	statuses, members := etcdRecorded(t)
	st, lists := etcdStatesOf(t, &etcdIDs{}, members, statuses...)
	follower := NodeState{Role: RoleFollower, Term: 2, Leader: "n2", Commit: 8, Applied: 8}
	assert.Equal(t, map[string]NodeState{"n1": follower, "n2": {Role: RoleLeader, Term: 2, Leader: "n2", Commit: 8, Applied: 8},
		"n3": follower}, st)
	assert.Zero(t, lists, "the members that answered named every id")
}

// A leader that does not answer is named through the member list, once:
// its id is remembered.
func TestEtcdStatesNameASilentLeaderFromTheMemberList(t *testing.T) {
	statuses, members := etcdRecorded(t)
	ids := &etcdIDs{}
	st, lists := etcdStatesOf(t, ids, members, statuses[0], "", statuses[2])
	require.Len(t, st, 2, "the silent member has no state")
	assert.Equal(t, "n2", st["n1"].Leader)
	assert.Equal(t, "n2", st["n3"].Leader)
	assert.Equal(t, int32(1), lists, "one member list for both")
	_, lists = etcdStatesOf(t, ids, members, statuses[0], "", statuses[2])
	assert.Zero(t, lists, "the id is known now")
}

// A member that follows no leader says neither its role nor a leader;
// one whose leader no list names has a role and no leader.
func TestEtcdStatesWithoutALeader(t *testing.T) {
	st, _ := etcdStatesOf(t, &etcdIDs{}, `{"members":[]}`,
		etcdStatusAnswer(etcdID1, "", 5), etcdStatusAnswer(etcdID2, "777", 4))
	assert.Equal(t, NodeState{Term: 5, Commit: 4, Applied: 4}, st["n1"])
	assert.Equal(t, NodeState{Role: RoleFollower, Term: 4, Commit: 4, Applied: 4}, st["n2"])
}
