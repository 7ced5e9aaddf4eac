package testrun

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/cluster"
	"chaos/db"
	"chaos/history"
	"chaos/testrun/runrecord"
	"chaos/workload"
)

// The log keeps one entry per change of leader, and says [] rather than
// null when nothing was observed.
func TestLeaderLogKeepsChanges(t *testing.T) {
	var l leaderLog
	assert.Equal(t, []runrecord.LeaderChange{}, l.list())
	for i, leader := range []string{"n1", "n1", noLeader, noLeader, "n3", "n3", "n1"} {
		l.observe(time.Duration(i+1)*time.Second, leader)
	}
	assert.Equal(t, []runrecord.LeaderChange{{TimeS: 1, Leader: "n1"}, {TimeS: 3, Leader: "none"}, {TimeS: 5, Leader: "n3"}, {TimeS: 7, Leader: "n1"}}, l.list())
}

// requestLog is an HTTP server that answers 200 with body and keeps each
// request's path, query and body.
type requestLog struct {
	mu   sync.Mutex
	seen []string
	port int
}

func newRequestLog(t *testing.T, body string) *requestLog {
	l := &requestLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		l.mu.Lock()
		l.seen = append(l.seen, r.Method+" "+r.URL.RequestURI()+" "+string(b))
		l.mu.Unlock()
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	l.port, err = strconv.Atoi(port)
	require.NoError(t, err)
	return l
}

func (l *requestLog) requests() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.seen, "\n")
}

// --read-consistency reaches the requests: etcd's range says serializable,
// chaos-node's GET asks for a stale read; linearizable asks for neither.
func TestReadConsistencyReachesTheRequest(t *testing.T) {
	n := db.Node{Name: "n1", Addr: "127.0.0.1"}
	read := workload.Op{F: history.FRead, Key: "k1"}
	for _, tc := range []struct {
		reads    string
		etcd, cn string
	}{
		{ReadSerializable, `"serializable":true`, "GET /kv/k1?stale=true"},
		{ReadLinearizable, `"serializable":false`, "GET /kv/k1 "},
	} {
		etcd := newRequestLog(t, `{"header":{"revision":"1"}}`)
		c, err := cluster.NewClient(&db.Etcd{ClientPort: etcd.port}, n, tc.reads)
		require.NoError(t, err)
		assert.Equal(t, history.OK, c.Do(t.Context(), read).Type)
		assert.Contains(t, etcd.requests(), tc.etcd, tc.reads)

		cn := newRequestLog(t, `{"value":"3"}`)
		c, err = cluster.NewClient(&db.ChaosNode{ClientPort: cn.port}, n, tc.reads)
		require.NoError(t, err)
		assert.Equal(t, history.OK, c.Do(t.Context(), read).Type)
		assert.Contains(t, cn.requests(), tc.cn, tc.reads)
	}
}
