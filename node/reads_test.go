//go:build linux

package node_test

import (
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const (
	baseReadBatch = 200
	baseReadRetry = 210
	baseReadSlow  = 220
)

// readIndexes is p's chaos_node_read_indexes_total.
func (c *cluster) readIndexes(p *proc) int {
	c.t.Helper()
	m := regexp.MustCompile(`(?m)^chaos_node_read_indexes_total ([0-9.e+]+)$`).FindSubmatch(c.mustDo(p, http.MethodGet, "/metrics", nil).body)
	require.NotNil(c.t, m, "%s /metrics has chaos_node_read_indexes_total", p.name)
	n, err := strconv.ParseFloat(string(m[1]), 64)
	require.NoError(c.t, err)
	return int(n)
}

// Linearizable reads that reach a follower together share read indexes:
// one is asked for at a time, and the reads that arrive meanwhile share the
// next, so a burst of reads costs far fewer exchanges with the leader than
// reads. The follower's messages to the leader are delayed by 50 ms (a
// quarter of the election timeout, after which a read index counts as lost),
// so every exchange spans many arrivals however slowly this machine (or the
// race detector) lets the 400 clients send: a node that asked once per read
// would still ask 400 times.
func TestConcurrentReadsShareReadIndexes(t *testing.T) {
	c := newCluster(t, baseReadBatch, 3, "--enable-fault-hooks")
	leader, _ := c.waitLeader()
	r := c.eventually(leader, http.MethodPut, "/kv/k", putBody("v", 1, 1))
	require.Equal(t, http.StatusOK, r.code, "PUT: %s", r)
	follower := c.nodes[0]
	if follower == leader {
		follower = c.nodes[1]
	}
	before := c.readIndexes(follower)
	c.hook(follower, http.MethodPost, "/faults/net", map[string]any{"peers": []string{leader.name}, "delay_ms": 50})
	const reads = 400
	var wg sync.WaitGroup
	codes := make([]int, reads)
	for i := range reads {
		wg.Go(func() {
			r, err := c.do(follower, http.MethodGet, "/kv/k", nil)
			if err == nil {
				codes[i] = r.code
			}
		})
	}
	wg.Wait()
	for i, code := range codes {
		require.Equal(t, http.StatusOK, code, "read %d", i)
	}
	asked := c.readIndexes(follower) - before
	require.Positive(t, asked)
	t.Logf("%d reads asked for %d read indexes", reads, asked)
	require.Less(t, asked, reads/4, "%d reads asked for %d read indexes", reads, asked)
}

// A read index asked for and lost (the follower cut off from its leader
// for less than an election timeout) is asked for again: the read is
// answered once the link is back, before its request times out.
func TestLostReadIndexIsAskedAgain(t *testing.T) {
	c := newCluster(t, baseReadRetry, 3, "--enable-fault-hooks", "--heartbeat-interval", "50ms",
		"--election-timeout", "1s", "--request-timeout", "5s")
	leader, _ := c.waitLeader()
	var follower *proc
	for _, p := range c.nodes {
		if p != leader {
			follower = p
			break
		}
	}
	r := c.eventually(follower, http.MethodGet, "/kv/k", nil)
	require.Equal(t, http.StatusNotFound, r.code, "GET before the cut: %s", r)
	before := c.readIndexes(follower)
	c.cutOff(follower, leader)
	done := make(chan reply, 1)
	go func() {
		r, err := c.do(follower, http.MethodGet, "/kv/k", nil)
		if err != nil {
			r = reply{code: -1}
		}
		done <- r
	}()
	require.Eventually(t, func() bool { return c.readIndexes(follower) > before }, 5*time.Second, 10*time.Millisecond,
		"the read asked for its read index")
	c.healAll()
	select {
	case r := <-done:
		require.Equal(t, http.StatusNotFound, r.code, "the read after the link came back: %s", r)
	case <-time.After(10 * time.Second):
		t.Fatal("the read was not answered")
	}
	require.GreaterOrEqual(t, c.readIndexes(follower), before+2, "asked again")
}

// A follower whose messages to the leader take longer than an election
// timeout (a slow link, not a lost one) still serves linearizable reads:
// asking again does not throw away the answer to the first ask.
func TestReadsOverALinkSlowerThanAnElectionTimeout(t *testing.T) {
	c := newCluster(t, baseReadSlow, 3, "--enable-fault-hooks", "--heartbeat-interval", "20ms",
		"--election-timeout", "200ms", "--request-timeout", "3s")
	leader, _ := c.waitLeader()
	follower := c.followers(leader)[0]
	r := c.eventually(follower, http.MethodGet, "/kv/k", nil)
	require.Equal(t, http.StatusNotFound, r.code, "GET before the delay: %s", r)
	before := c.readIndexes(follower)
	c.hook(follower, http.MethodPost, "/faults/net", map[string]any{"peers": []string{leader.name}, "delay_ms": 300})
	for i := range 3 {
		r := c.mustDo(follower, http.MethodGet, "/kv/k", nil)
		require.Equal(t, http.StatusNotFound, r.code, "read %d over the slow link: %s", i, r)
	}
	require.GreaterOrEqual(t, c.readIndexes(follower), before+3+1, "some read index was asked for again")
}
