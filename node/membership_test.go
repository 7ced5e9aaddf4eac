//go:build linux

package node_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/node/nodeapi"
)

const (
	baseMembers    = 150
	baseLastVoter  = 160
	baseJoinRefuse = 170
)

// joiner prepares a node that joins c under name at 127.0.0.<base+i>,
// asking c's initial members.
func (c *cluster) joiner(dir, name string, ip string, extra ...string) *proc {
	var peers []string
	for _, p := range c.nodes {
		peers = append(peers, p.name+"="+p.peerAddr())
	}
	args := []string{"node", "--id", name, "--join", "--data-dir", filepath.Join(dir, name),
		"--client-addr", net.JoinHostPort(ip, clientPort), "--peer-addr", net.JoinHostPort(ip, peerPort),
		"--peers", strings.Join(peers, ",")}
	return newProc(c.t, dir, name, ip, append(append(args, fastTimings...), extra...))
}

// admit makes p, a node that joined and is now a voter, one of the nodes
// live and waitLeader watch: it may be elected.
func (c *cluster) admit(p *proc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.joined = append(c.joined, p)
	c.byName[p.name] = p
}

// dismiss stops watching p, a member that was removed.
func (c *cluster) dismiss(p *proc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.joined = slices.DeleteFunc(c.joined, func(q *proc) bool { return q == p })
}

// members asks p for its configuration.
func (c *cluster) members(p *proc) nodeapi.MembersResponse {
	c.t.Helper()
	r := c.mustDo(p, http.MethodGet, "/members", nil)
	require.Equal(c.t, http.StatusOK, r.code, r.String())
	var m nodeapi.MembersResponse
	require.NoError(c.t, json.Unmarshal(r.body, &m))
	return m
}

// roles is a configuration as "n1:voter n2:voter ...", sorted by ID.
func roles(m nodeapi.MembersResponse) string {
	var out []string
	for _, x := range m.Members {
		out = append(out, fmt.Sprintf("%s:%s", x.Name, x.Role))
	}
	return strings.Join(out, " ")
}

// waitRoles waits until every one of ps shows the configuration want.
func (c *cluster) waitRoles(want string, ps ...*proc) {
	c.t.Helper()
	waitFor(c.t, 15*time.Second, "configuration "+want, func() error {
		for _, p := range ps {
			if got := roles(c.members(p)); got != want {
				return fmt.Errorf("%s shows %s", p.name, got)
			}
		}
		return nil
	})
}

// change sends a membership change through p, repeating it while no
// leader answers, and returns the definite answer.
func (c *cluster) change(p *proc, method, path string, body []byte) reply {
	c.t.Helper()
	var r reply
	waitFor(c.t, 15*time.Second, method+" "+path, func() error {
		var err error
		if r, err = c.do(p, method, path, body); err == nil && r.code != http.StatusServiceUnavailable {
			return nil
		}
		return fmt.Errorf("%v %s", err, r)
	})
	return r
}

// waitApplied waits until p has applied the leader's commit index.
func (c *cluster) waitApplied(p *proc) {
	c.t.Helper()
	_, lst := c.waitLeader()
	waitFor(c.t, 15*time.Second, p.name+" catches up", func() error {
		st, err := c.status(p)
		if err != nil {
			return err
		}
		if st.Applied < lst.Commit {
			return fmt.Errorf("applied %d < commit %d", st.Applied, lst.Commit)
		}
		return nil
	})
}

// A 3-node cluster grows to 5 (each new node added as a learner, joined
// with an empty log from a snapshot, promoted) and shrinks back to 3, with
// the leader SIGKILLed and restarted between, under a stream of writes:
// no acknowledged write is lost, every node ends on the same values, and
// the event logs record each change.
func TestIntegrationGrowAndShrink(t *testing.T) {
	c := newCluster(t, baseMembers, 3, "--request-timeout", "1s", "--snapshot-entries", "64")
	c.waitLeader()
	h := &writeHistory{}
	stop := startWriters(c, h, 1)
	t.Cleanup(func() { stop() })
	waitFor(t, 30*time.Second, "writes before the change", func() error {
		if n := h.ackedCount(); n < 100 {
			return fmt.Errorf("%d acknowledged", n)
		}
		return nil
	})

	dir := t.TempDir()
	var added []*proc
	for i, name := range []string{"n4", "n5"} {
		p := c.joiner(dir, name, loopback(baseMembers+4+i), "--snapshot-entries", "64")
		r := c.change(c.nodes[i], http.MethodPost, "/members",
			jsonBody(nodeapi.AddMemberRequest{Name: name, Peer: p.peerAddr(), Client: p.clientAddr()}))
		require.Equal(t, http.StatusOK, r.code, r.String())
		var add nodeapi.AddMemberResponse
		require.NoError(t, json.Unmarshal(r.body, &add))
		require.Equal(t, uint64(4+i), add.Member.ID, r.String())
		require.Equal(t, nodeapi.RoleLearner, add.Member.Role)

		p.start()
		c.waitUp(p)
		c.waitApplied(p)
		// It joined with an empty log after compaction: it installed a
		// snapshot (events are written out every 50 ms).
		waitFor(t, 5*time.Second, name+" restores a snapshot", func() error {
			evs, err := readEvents(p)
			if err != nil || !slices.ContainsFunc(evs, func(e event) bool { return e.Event == "restore" }) {
				return fmt.Errorf("no restore event (%v)", err)
			}
			return nil
		})
		r = c.change(c.nodes[2], http.MethodPost, fmt.Sprintf("/members/%d/promote", add.Member.ID), nil)
		require.Equal(t, http.StatusOK, r.code, r.String())
		added = append(added, p)
		c.admit(p) // a voter now: it may be the leader waitLeader looks for
	}
	all := append(append([]*proc{}, c.nodes...), added...)
	c.waitRoles("n1:voter n2:voter n3:voter n4:voter n5:voter", all...)

	// A node of the five killed and restarted: it comes back a voter.
	leader, _ := c.waitLeader()
	leader.kill()
	ackedAtKill := h.ackedCount()
	waitFor(t, 20*time.Second, "writes without "+leader.name, func() error {
		if n := h.ackedCount(); n < ackedAtKill+30 {
			return fmt.Errorf("%d acknowledged since the kill", n-ackedAtKill)
		}
		return nil
	})
	leader.start()
	c.waitUp(leader)
	added[0].kill() // a joined node restarts as the same member, without asking
	added[0].start()
	c.waitUp(added[0])
	c.waitApplied(added[0])

	for _, p := range added {
		id := map[string]int{"n4": 4, "n5": 5}[p.name]
		r := c.change(c.nodes[0], http.MethodDelete, fmt.Sprintf("/members/%d", id), nil)
		require.Equal(t, http.StatusOK, r.code, r.String())
	}
	c.waitRoles("n1:voter n2:voter n3:voter", c.nodes...)
	for _, p := range added {
		p.kill()
		c.dismiss(p)
	}
	ackedAtShrink := h.ackedCount()
	waitFor(t, 20*time.Second, "writes after the shrink", func() error {
		if n := h.ackedCount(); n < ackedAtShrink+30 {
			return fmt.Errorf("%d acknowledged since the shrink", n-ackedAtShrink)
		}
		return nil
	})
	stop()
	counts := checkKeys(t, c, h, "after grow and shrink")
	t.Logf("final values: %v (%d acknowledged writes)", counts, h.ackedCount())
	c.waitCaughtUp()

	// n1 writes its events out every 50 ms (eventlog.FlushInterval): on a
	// loaded machine the last change may still be in its buffer.
	want := []string{"add-learner n4/n1,n2,n3/n4", "promote-voter n4/n1,n2,n3,n4/",
		"add-learner n5/n1,n2,n3,n4/n5", "remove-node n5/n1,n2,n3/"}
	waitFor(t, 10*time.Second, "conf events of n1", func() error {
		changes, err := confChanges(c.nodes[0])
		if err != nil {
			return err
		}
		for _, w := range want {
			if !slices.Contains(changes, w) {
				return fmt.Errorf("%q does not contain %q", changes, w)
			}
		}
		return nil
	})
}

// confChanges are the conf events of p's event log, each as
// "change/voters/learners".
func confChanges(p *proc) ([]string, error) {
	evs, err := readEvents(p)
	if err != nil {
		return nil, err
	}
	var changes []string
	for _, e := range evs {
		if e.Event == "conf" {
			changes = append(changes, fmt.Sprint(e.raw["change"], "/", e.raw["voters"], "/", e.raw["learners"]))
		}
	}
	return changes, nil
}

// Bad membership requests get a clear 4xx and change nothing.
func TestIntegrationMembershipBadInput(t *testing.T) {
	c := newCluster(t, baseLastVoter, 1)
	c.waitLeader()
	p := c.nodes[0]
	for _, tc := range []struct {
		method, path string
		body         []byte
		code         int
		msg          string
	}{
		{http.MethodDelete, "/members/1", nil, http.StatusConflict, "last voter"},
		{http.MethodDelete, "/members/7", nil, http.StatusNotFound, "no member has id 7"},
		{http.MethodDelete, "/members/x", nil, http.StatusBadRequest, "positive integer"},
		{http.MethodPost, "/members/1/promote", nil, http.StatusConflict, "not a learner"},
		{http.MethodPost, "/members", jsonBody(nodeapi.AddMemberRequest{Name: "n1", Peer: "127.0.0.9:1", Client: "127.0.0.9:2"}),
			http.StatusConflict, "n1 is a member already"},
		{http.MethodPost, "/members", jsonBody(nodeapi.AddMemberRequest{Name: "n2", Peer: p.peerAddr(), Client: "127.0.0.9:2"}),
			http.StatusConflict, "has peer address"},
		{http.MethodPost, "/members", []byte(`{"name":"n2","peer":"nohost"}`), http.StatusBadRequest, "peer address"},
		{http.MethodPost, "/members", []byte(`{"name":"n,2"}`), http.StatusBadRequest, "without commas"},
		{http.MethodPost, "/members", []byte(`{"nom":"n2"}`), http.StatusBadRequest, "unknown field"},
	} {
		r := c.mustDo(p, tc.method, tc.path, tc.body)
		require.Equal(t, tc.code, r.code, "%s %s: %s", tc.method, tc.path, r)
		msg, _ := r.str("error")
		require.Contains(t, msg, tc.msg, "%s %s", tc.method, tc.path)
	}
	require.Equal(t, "n1:voter", roles(c.members(p)))
}

// A node started with --join that the cluster does not know refuses to
// start, says how to add it, and writes nothing.
func TestIntegrationJoinRefused(t *testing.T) {
	c := newCluster(t, baseJoinRefuse, 3)
	c.waitLeader()
	dir := t.TempDir()
	p := c.joiner(dir, "n9", loopback(baseJoinRefuse+9))
	p.start()
	require.Equal(t, 254, p.waitExit(15*time.Second))
	require.Contains(t, p.logText(), "does not know n9; add it first: POST /members")
	_, err := os.Stat(p.dataDir)
	require.ErrorIs(t, err, os.ErrNotExist, "a refused joiner must not write its data directory")
	_, err = os.Stat(filepath.Join(dir, "n9", "events.jsonl"))
	require.ErrorIs(t, err, os.ErrNotExist)

	// A data directory with a node's state but no record of a join is not
	// a member that joined: --join refuses it rather than mix two lives.
	require.NoError(t, os.MkdirAll(filepath.Join(p.dataDir, "wal"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(p.dataDir, "wal", "0000000000000001.wal"), []byte("x"), 0o644))
	p.start()
	require.Equal(t, 254, p.waitExit(15*time.Second))
	require.Contains(t, p.logText(), "holds a node's state but no join.json")
}

const baseRemoveLeader = 180

// A leader removed from the configuration answers the removal once it
// applied it, then steps down; the others elect a leader among
// themselves.
func TestIntegrationRemoveTheLeader(t *testing.T) {
	c := newCluster(t, baseRemoveLeader, 3, "--request-timeout", "1s")
	leader, _ := c.waitLeader()
	id := map[string]int{"n1": 1, "n2": 2, "n3": 3}[leader.name]
	start := time.Now()
	r := c.change(leader, http.MethodDelete, fmt.Sprintf("/members/%d", id), nil)
	require.Equal(t, http.StatusOK, r.code, r.String())
	t.Logf("the leader's removal answered in %v", time.Since(start))
	rest := slices.DeleteFunc(slices.Clone(c.nodes), func(p *proc) bool { return p == leader })
	want := map[string]string{"n1": "n2:voter n3:voter", "n2": "n1:voter n3:voter", "n3": "n1:voter n2:voter"}[leader.name]
	c.waitRoles(want, rest...)
	waitFor(t, 10*time.Second, "a leader among the others", func() error {
		st, err := c.status(rest[0])
		if err != nil || st.Leader == "" || st.Leader == leader.name {
			return fmt.Errorf("%v %+v", err, st)
		}
		return nil
	})
}

const baseInFlight = 190

// A change while another is in flight is refused with 409 and changes
// nothing: the leader, cut off from its followers, cannot commit the
// first (its client gets 504, outcome unknown), and refuses the second.
// The election timeout of 3 s keeps it leading (CheckQuorum) meanwhile.
func TestIntegrationChangeInFlightRefused(t *testing.T) {
	c := newCluster(t, baseInFlight, 3, "--enable-fault-hooks", "--request-timeout", "500ms", "--election-timeout", "3s")
	leader, _ := c.waitLeader()
	var others []string
	for _, p := range c.followers(leader) {
		others = append(others, p.name)
	}
	r := c.mustDo(leader, http.MethodPost, "/faults/partition", jsonBody(nodeapi.PartitionRequest{Drop: others}))
	require.Equal(t, http.StatusOK, r.code, r.String())
	add := func(name string, n int) reply {
		return c.mustDo(leader, http.MethodPost, "/members", jsonBody(nodeapi.AddMemberRequest{Name: name,
			Peer: net.JoinHostPort(loopback(baseInFlight+n), peerPort), Client: net.JoinHostPort(loopback(baseInFlight+n), clientPort)}))
	}
	r = add("n4", 4)
	require.Equal(t, http.StatusGatewayTimeout, r.code, "the first change cannot commit: %s", r)
	r = add("n5", 5)
	require.Equal(t, http.StatusConflict, r.code, r.String())
	msg, _ := r.str("error")
	require.Contains(t, msg, "a membership change is in progress")
	require.Equal(t, "n1:voter n2:voter n3:voter n4:learner", roles(c.members(leader)),
		"the first change is in force on the leader from its append; the second changed nothing")
	c.mustDo(leader, http.MethodDelete, "/faults/partition", nil)
}
