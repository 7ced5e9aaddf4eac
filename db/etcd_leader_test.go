package db

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Member ids of a three-member cluster, as etcd 3.4's gateway writes them.
const (
	etcdID1 = "12134364123639871493"
	etcdID2 = "9372538179322589801"
	etcdID3 = "10501334649042878790"
)

// etcdStatusAnswer is a maintenance status answer of etcd 3.4.23, recorded
// and given another member id, leader and term. etcd omits a zero leader.
func etcdStatusAnswer(member, leader string, term int) string {
	lead := ""
	if leader != "" {
		lead = fmt.Sprintf(`"leader":%q,`, leader)
	}
	return fmt.Sprintf(`{"header":{"cluster_id":"16113529933036940125","member_id":%q,"revision":"1","raft_term":"%d"},`+
		`"version":"3.4.23","dbSize":"20480",%s"raftIndex":"4","raftTerm":"%d","raftAppliedIndex":"4","dbSizeInUse":"16384"}`,
		member, term, lead, term)
}

// etcdMemberListAnswer is a member list answer of etcd 3.4.23, recorded and
// extended to three members.
const etcdMemberListAnswer = `{"header":{"cluster_id":"16113529933036940125","member_id":"` + etcdID1 + `","raft_term":"2"},"members":[` +
	`{"ID":"` + etcdID1 + `","name":"n1","peerURLs":["http://10.0.0.11:2380"],"clientURLs":["http://10.0.0.11:2379"]},` +
	`{"ID":"` + etcdID2 + `","name":"n2","peerURLs":["http://10.0.0.12:2380"],"clientURLs":["http://10.0.0.12:2379"]},` +
	`{"ID":"` + etcdID3 + `","name":"n3","peerURLs":["http://10.0.0.13:2380"],"clientURLs":["http://10.0.0.13:2379"]}]}`

// etcdFakeMember answers the gateway's status with status and its member
// list with etcdMemberListAnswer; an empty status means it does not answer
// (it waits until the request is abandoned).
func etcdFakeMember(t *testing.T, status string) string {
	t.Helper()
	return etcdFakeGateway(t, status, etcdMemberListAnswer, nil)
}

// etcdFakeGateway is etcdFakeMember answering members to the member list,
// and counting the member list requests in lists (when not nil).
func etcdFakeGateway(t *testing.T, status, members string, lists *atomic.Int32) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		if r.Method != http.MethodPost {
			http.Error(w, "method", http.StatusMethodNotAllowed)
			return
		}
		switch {
		case status == "":
			<-r.Context().Done()
		case r.URL.Path == "/v3/maintenance/status":
			_, _ = io.WriteString(w, status)
		case r.URL.Path == "/v3/cluster/member/list":
			if lists != nil {
				lists.Add(1)
			}
			_, _ = io.WriteString(w, members)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func etcdLeaderOf(t *testing.T, statuses ...string) (string, error) {
	t.Helper()
	nodes := make([]Node, len(statuses))
	endpoints := make([]string, len(statuses))
	for i, st := range statuses {
		nodes[i] = Node{Name: fmt.Sprintf("n%d", i+1)}
		endpoints[i] = etcdFakeMember(t, st)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	return etcdLeader(ctx, &http.Client{}, nodes, endpoints)
}

func TestEtcdLeader(t *testing.T) {
	for _, tc := range []struct {
		name     string
		statuses []string
		want     string
	}{
		{"every member agrees", []string{etcdStatusAnswer(etcdID1, etcdID2, 2),
			etcdStatusAnswer(etcdID2, etcdID2, 2), etcdStatusAnswer(etcdID3, etcdID2, 2)}, "n2"},
		{"the leader does not answer: named by the member list", []string{etcdStatusAnswer(etcdID1, etcdID3, 3),
			etcdStatusAnswer(etcdID2, etcdID3, 3), ""}, "n3"},
		{"a cut-off member's old leader loses to the newer term", []string{etcdStatusAnswer(etcdID1, etcdID1, 2),
			etcdStatusAnswer(etcdID2, etcdID3, 3), etcdStatusAnswer(etcdID3, etcdID3, 3)}, "n3"},
		{"a candidate of a higher term follows no one", []string{etcdStatusAnswer(etcdID1, "", 9),
			etcdStatusAnswer(etcdID2, etcdID2, 4), etcdStatusAnswer(etcdID3, "0", 7)}, "n2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := etcdLeaderOf(t, tc.statuses...)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestEtcdLeaderNone(t *testing.T) {
	_, err := etcdLeaderOf(t, etcdStatusAnswer(etcdID1, "", 5), "", etcdStatusAnswer(etcdID3, "0", 5))
	assert.ErrorContains(t, err, "no etcd member reports a leader")
	_, err = etcdLeaderOf(t, "", "", "")
	assert.ErrorContains(t, err, "no etcd member reports a leader", "no member answers within the deadline")
	_, err = etcdLeaderOf(t, etcdStatusAnswer(etcdID1, "42", 5))
	assert.ErrorContains(t, err, "etcd leader 42 is not in n1's member list")
}
