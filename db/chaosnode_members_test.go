package db

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// serveNoLeader answers every request on addr:port as a chaos-node that
// knows no leader (its /status, so it is up, and its /members); port 0
// picks one. It returns the port.
func serveNoLeader(t *testing.T, addr string, port int) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"members":[{"id":1,"name":"n1","role":"voter"}],"leader":""}`))
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// A node that knows no leader cannot say the membership. When fewer than
// a majority of the nodes run, none can be elected, and the error says so
// (ErrNoQuorum, with the count); with a majority up it is a plain error (an
// election may be under way).
func TestChaosNodeMembersWithoutALeader(t *testing.T) {
	port := serveNoLeader(t, "127.0.0.1", 0)
	nodes := []Node{{Name: "n1", Addr: "127.0.0.1"}, {Name: "n2", Addr: "127.0.0.2"}, {Name: "n3", Addr: "127.0.0.3"}}
	d := &ChaosNode{Nodes: nodes, ClientPort: port}
	_, _, err := d.Members(context.Background(), nodes[0])
	require.ErrorIs(t, err, ErrNoQuorum)
	require.EqualError(t, err, `n1: members: it knows no leader (""); the membership is the leader's to say: no quorum: 1 of 3 nodes run`)

	serveNoLeader(t, "127.0.0.2", port)
	_, _, err = d.Members(context.Background(), nodes[0])
	require.Error(t, err)
	require.False(t, errors.Is(err, ErrNoQuorum), "two of three run: %v", err)
	require.ErrorContains(t, err, "it knows no leader")
}
