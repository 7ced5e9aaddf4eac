package workload

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
)

// setStub serves GET /kv/s<v>: 200 for the elements in present, 404 for
// the others, and failWith for the element fail (0: none). It tracks how
// many GETs are in flight at once.
type setStub struct {
	present  map[int64]bool
	fail     int64
	failWith int

	mu                sync.Mutex
	inFlight, maxSeen int
}

func (s *setStub) handle(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.inFlight++
	s.maxSeen = max(s.maxSeen, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	v, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/kv/s"), 10, 64)
	switch {
	case err != nil || r.Method != http.MethodGet:
		answering(http.StatusBadRequest, `{"error":"not a set read"}`)(w, r)
	case v == s.fail:
		answering(s.failWith, `{"error":"no leader"}`)(w, r)
	case s.present[v]:
		answering(http.StatusOK, `{"value":"1"}`)(w, r)
	default:
		answering(http.StatusNotFound, `{"error":"key not found"}`)(w, r)
	}
}

func TestChaosNodeFinalSetRead(t *testing.T) {
	stub := &setStub{present: map[int64]bool{}}
	var attempted, want []int64
	for v := int64(1); v <= 200; v++ {
		attempted = append(attempted, v)
		if v%3 != 0 {
			stub.present[v] = true
			want = append(want, v)
		}
	}
	server := newNodeStub(t, stub.handle)
	c := newTestChaosNodeClient(t, server.addr(), ChaosNodeOptions{ReadConcurrency: 4})
	// Out of order on purpose: the answer is sorted regardless.
	attempted[0], attempted[199] = attempted[199], attempted[0]
	out := c.Do(t.Context(), Op{F: history.FRead, Attempted: attempted})
	require.Equal(t, history.OK, out.Type, out.Error)
	assert.Equal(t, want, out.Value)
	assert.Equal(t, "n3", out.Node)
	assert.Len(t, server.requests(), 200, "one GET per element")
	// The bound is on requests in flight; the number of TCP connections is
	// not bounded by it (net/http may open one while another is being put
	// back into its idle pool).
	assert.LessOrEqual(t, stub.maxSeen, 4, "at most ReadConcurrency GETs at once")
}

func TestChaosNodeFinalSetReadFailsWhole(t *testing.T) {
	for _, code := range []int{http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusInternalServerError} {
		stub := &setStub{present: map[int64]bool{1: true, 2: true}, fail: 50, failWith: code}
		server := newNodeStub(t, stub.handle)
		c := newTestChaosNodeClient(t, server.addr(), ChaosNodeOptions{})
		attempted := make([]int64, 100)
		for i := range attempted {
			attempted[i] = int64(i + 1)
		}
		out := c.Do(t.Context(), Op{F: history.FRead, Attempted: attempted})
		assert.Equal(t, history.Fail, out.Type)
		assert.Nil(t, out.Value)
		assert.Contains(t, out.Error, "final read of 100 elements: read s50: status "+strconv.Itoa(code))
	}
}

func TestChaosNodeFinalSetReadOfNothing(t *testing.T) {
	c := newTestChaosNodeClient(t, "127.0.0.1:1", ChaosNodeOptions{}) // never contacted
	out := c.Do(t.Context(), Op{F: history.FRead})
	require.Equal(t, history.OK, out.Type)
	assert.Equal(t, []int64{}, out.Value, "an empty list, which records as [] rather than null")
}

func TestChaosNodeFinalSetReadInterrupted(t *testing.T) {
	stub := &setStub{present: map[int64]bool{1: true}}
	server := newNodeStub(t, stub.handle)
	c := newTestChaosNodeClient(t, server.addr(), ChaosNodeOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out := c.Do(ctx, Op{F: history.FRead, Attempted: []int64{1, 2, 3}})
	assert.Equal(t, history.Fail, out.Type)
	assert.Contains(t, out.Error, "context canceled")
}
