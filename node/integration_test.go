//go:build linux

package node_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/node/wal"
)

// Address blocks (127.0.0.<base+i>), one per test so they never collide.
const (
	baseCluster   = 20
	baseKill      = 30
	baseTornWAL   = 40
	baseDataLock  = 50
	baseStaleBug  = 60
	baseStaleSafe = 70
	baseNoHooks   = 80
	baseBadInput  = 90
)

func putBody(value string, client, seq uint64) []byte {
	return jsonBody(map[string]any{"value": value, "client": client, "seq": seq})
}

// TestIntegrationThreeNodes exercises the client API through every node of
// a three-node cluster and checks each node's event log.
func TestIntegrationThreeNodes(t *testing.T) {
	c := newCluster(t, baseCluster, 3)
	first, firstStatus := c.waitLeader()

	// Every write carries a client and seq, so a retry after a 503/504
	// during an election applies at most once.
	const client = 7
	seq := uint64(0)
	next := func() uint64 { seq++; return seq }

	// PUT through each node; followers forward the command to the leader
	// through raft, not as a second HTTP request: the leader's client API
	// serves only the put sent to it.
	var last string
	for _, p := range c.nodes {
		last = "via-" + p.name
		r := c.eventually(p, http.MethodPut, "/kv/reg", putBody(last, client, next()))
		require.Equal(t, http.StatusOK, r.code, "PUT through %s: %s", p.name, r)
	}
	if leader, st := c.waitLeader(); leader == first && st.Term == firstStatus.Term {
		puts := regexp.MustCompile(`(?m)^chaos_node_request_seconds_count\{code="200",op="write"\} ([0-9]+)$`)
		m := puts.FindSubmatch(c.mustDo(leader, http.MethodGet, "/metrics", nil).body)
		require.NotNil(t, m, "%s /metrics counts its writes", leader.name)
		require.Equal(t, "1", string(m[1]), "the leader served one write over HTTP, not the followers' too")
	}
	requireValueEverywhere := func(key, want string) {
		t.Helper()
		for _, p := range c.nodes {
			r := c.eventually(p, http.MethodGet, "/kv/"+key, nil)
			require.Equal(t, http.StatusOK, r.code, "GET %s through %s: %s", key, p.name, r)
			v, _ := r.str("value")
			require.Equal(t, want, v, "linearizable GET %s through %s", key, p.name)
		}
	}
	requireValueEverywhere("reg", last)

	// CAS: a mismatch answers 409 with the current value; a match applies.
	leader, _ := c.waitLeader()
	follower := c.followers(leader)[0]
	r := c.eventually(follower, http.MethodPost, "/kv/reg/cas",
		jsonBody(map[string]any{"from": "not-the-value", "to": "x", "client": client, "seq": next()}))
	require.Equal(t, http.StatusConflict, r.code, "CAS mismatch: %s", r)
	cur, ok := r.str("value")
	require.True(t, ok, "CAS mismatch body has the current value: %s", r)
	require.Equal(t, last, cur)
	require.Equal(t, "cas mismatch", r.fields["error"])
	requireValueEverywhere("reg", last)

	r = c.eventually(follower, http.MethodPost, "/kv/reg/cas",
		jsonBody(map[string]any{"from": last, "to": "swapped", "client": client, "seq": next()}))
	require.Equal(t, http.StatusOK, r.code, "CAS match: %s", r)
	requireValueEverywhere("reg", "swapped")

	r = c.eventually(leader, http.MethodPost, "/kv/absent/cas",
		jsonBody(map[string]any{"from": "a", "to": "b", "client": client, "seq": next()}))
	require.Equal(t, http.StatusConflict, r.code, "CAS on an absent key: %s", r)
	require.Contains(t, r.fields, "value")
	require.Nil(t, r.fields["value"], "CAS on an absent key reports value null: %s", r)

	// DELETE through a follower, then 404 everywhere.
	r = c.eventually(follower, http.MethodDelete, "/kv/reg", nil)
	require.Equal(t, http.StatusOK, r.code, "DELETE: %s", r)
	for _, p := range c.nodes {
		r := c.eventually(p, http.MethodGet, "/kv/reg", nil)
		require.Equal(t, http.StatusNotFound, r.code, "GET after DELETE through %s: %s", p.name, r)
		require.NotEmpty(t, r.fields["error"], "404 body is a JSON error: %s", r)
	}

	// Metrics.
	applied := regexp.MustCompile(`(?m)^chaos_node_applies_total ([0-9.e+]+)$`)
	for _, p := range c.nodes {
		r := c.mustDo(p, http.MethodGet, "/metrics", nil)
		require.Equal(t, http.StatusOK, r.code)
		m := applied.FindSubmatch(r.body)
		require.NotNil(t, m, "%s /metrics has chaos_node_applies_total:\n%s", p.name, r.body)
		n, err := strconv.ParseFloat(string(m[1]), 64)
		require.NoError(t, err)
		require.Positive(t, n, "%s applied entries", p.name)
	}

	// Event logs: every node has applied everything, then flushes within
	// its flush interval. The leader of term T logged becoming leader in T
	// and voting for itself in T, and some other node logged its vote for
	// it in T: a majority of three needs one.
	c.waitCaughtUp()
	leader, lst := c.waitLeader()
	var logs map[string][]event
	waitFor(t, 5*time.Second, "event logs with every event kind", func() error {
		logs = map[string][]event{}
		for _, p := range c.nodes {
			evs, err := readEvents(p)
			if err != nil {
				return err
			}
			if err := checkEvents(p.name, evs); err != nil {
				return err
			}
			if n := maxIndex(evs, "apply"); n < lst.Commit {
				return fmt.Errorf("%s: events.jsonl has applies up to %d, status commit %d", p.name, n, lst.Commit)
			}
			logs[p.name] = evs
		}
		votedFor := func(name string) bool {
			return hasEvent(logs[name], func(e event) bool {
				return e.Event == "vote" && e.For == leader.name && e.Term == lst.Term
			})
		}
		if !hasEvent(logs[leader.name], func(e event) bool {
			return e.Event == "role" && e.Role == "leader" && e.Term == lst.Term
		}) {
			return fmt.Errorf("%s did not log becoming leader in term %d", leader.name, lst.Term)
		}
		if !votedFor(leader.name) {
			return fmt.Errorf("%s did not log voting for itself in term %d", leader.name, lst.Term)
		}
		if !slices.ContainsFunc(c.followers(leader), func(p *proc) bool { return votedFor(p.name) }) {
			return fmt.Errorf("no follower logged its vote for %s in term %d", leader.name, lst.Term)
		}
		return nil
	})
	// Every node applied the same command at every index.
	hashes := map[uint64]string{}
	for name, evs := range logs {
		for _, e := range evs {
			if e.Event != "apply" {
				continue
			}
			if h, ok := hashes[e.Index]; ok && h != e.Hash {
				t.Fatalf("%s applied hash %s at index %d, another node %s", name, e.Hash, e.Index, h)
			}
			hashes[e.Index] = e.Hash
		}
	}
}

// event is one line of events.jsonl.
type event struct {
	Time  string `json:"time"`
	Node  string `json:"node"`
	Event string `json:"event"`
	Role  string `json:"role"`
	Term  uint64 `json:"term"`
	For   string `json:"for"`
	Index uint64 `json:"index"`
	Hash  string `json:"hash"`
	raw   map[string]any
}

func readEvents(p *proc) ([]event, error) {
	f, err := os.Open(filepath.Join(p.dataDir, "events.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var evs []event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s events.jsonl line %d %q: %w", p.name, n, sc.Text(), err)
		}
		if err := json.Unmarshal(sc.Bytes(), &e.raw); err != nil {
			return nil, err
		}
		evs = append(evs, e)
	}
	return evs, sc.Err()
}

var rfc3339Nano = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$`)

// checkEvents checks the contract's fields on every line of one node's
// events.jsonl (one incarnation, the node never restarted) and that it has
// start, role, vote, commit and apply lines. A node that never changed
// role or voted (it heard the leader before its own election timeout) has
// no role or vote line, so those two are required only from the cluster as
// a whole by the caller; here they are checked for their fields.
func checkEvents(name string, evs []event) error {
	if len(evs) == 0 || evs[0].Event != "start" {
		return fmt.Errorf("%s: events.jsonl does not begin with a start event", name)
	}
	kinds := map[string]int{}
	nanos := false
	var lastApply, lastCommit uint64
	for i, e := range evs {
		where := fmt.Sprintf("%s events.jsonl line %d %v", name, i+1, e.raw)
		if !rfc3339Nano.MatchString(e.Time) {
			return fmt.Errorf("%s: time %q is not RFC 3339", where, e.Time)
		}
		if _, err := time.Parse(time.RFC3339Nano, e.Time); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if m := rfc3339Nano.FindStringSubmatch(e.Time); len(m[1]) == 10 {
			nanos = true
		}
		if e.Node != name || e.Event == "" {
			return fmt.Errorf("%s: want node %q and an event", where, name)
		}
		kinds[e.Event]++
		has := func(keys ...string) error {
			for _, k := range keys {
				if _, ok := e.raw[k]; !ok {
					return fmt.Errorf("%s: %s event lacks %q", where, e.Event, k)
				}
			}
			return nil
		}
		var err error
		switch e.Event {
		case "start":
			err = has("term")
		case "role":
			err = has("role", "term")
			if err == nil && !slices.Contains([]string{"follower", "pre-candidate", "candidate", "leader"}, e.Role) {
				err = fmt.Errorf("%s: unknown role %q", where, e.Role)
			}
		case "vote":
			err = has("term", "for")
			if err == nil && e.For == "" {
				err = fmt.Errorf("%s: vote for nobody", where)
			}
		case "commit":
			err = has("index")
			if err == nil && e.Index < lastCommit {
				err = fmt.Errorf("%s: commit index went back from %d", where, lastCommit)
			}
			lastCommit = e.Index
		case "apply":
			err = has("index", "term", "hash")
			if err == nil && e.Index != lastApply+1 {
				err = fmt.Errorf("%s: applied index %d after %d", where, e.Index, lastApply)
			}
			lastApply = e.Index
		}
		if err != nil {
			return err
		}
	}
	for _, k := range []string{"start", "commit", "apply"} {
		if kinds[k] == 0 {
			return fmt.Errorf("%s: no %s event yet (have %v)", name, k, kinds)
		}
	}
	if !nanos {
		return fmt.Errorf("%s: no event time has nanosecond digits", name)
	}
	return nil
}

func maxIndex(evs []event, kind string) uint64 {
	var n uint64
	for _, e := range evs {
		if e.Event == kind {
			n = max(n, e.Index)
		}
	}
	return n
}

func hasEvent(evs []event, match func(event) bool) bool {
	return slices.ContainsFunc(evs, match)
}

// outcome of a write, as the history records it.
type outcome int

const (
	opPending outcome = iota
	opOK              // 200: it happened
	opFail            // 503: it certainly did not happen
	opUnknown         // 504, timeout, connection error: it may happen at any time
)

func (o outcome) String() string {
	return [...]string{"pending", "ok", "fail", "unknown"}[o]
}

// writeOp is one PUT of the kill test. seq orders invocations. Every key
// belongs to one writer, which issues its writes one at a time, so for the
// writes to one key seq is also real-time order.
type writeOp struct {
	seq     int
	key     string
	value   string
	node    string
	outcome outcome
	answer  string
}

type writeHistory struct {
	mu         sync.Mutex
	ops        []*writeOp
	acked      int
	unexpected []string
}

// invoke records the start of a write of a fresh unique value to key.
func (h *writeHistory) invoke(key, node string) *writeOp {
	h.mu.Lock()
	defer h.mu.Unlock()
	op := &writeOp{seq: len(h.ops), key: key, value: fmt.Sprintf("w%d", len(h.ops)), node: node}
	h.ops = append(h.ops, op)
	return op
}

func (h *writeHistory) complete(op *writeOp, o outcome, answer string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	op.outcome, op.answer = o, answer
	if o == opOK {
		h.acked++
	}
}

func (h *writeHistory) ackedCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.acked
}

// snapshot returns the writes so far and the unexpected answers.
func (h *writeHistory) snapshot() ([]*writeOp, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ops := make([]*writeOp, len(h.ops))
	for i, op := range h.ops {
		cp := *op
		ops[i] = &cp
	}
	return ops, slices.Clone(h.unexpected)
}

// The kill test's keys k0..k9 are spread over killWriters writers.
const (
	killKeys    = 10
	killWriters = 3
)

// startWriters starts the writers; the returned function stops them and
// waits for them, after which every write in the history is complete.
func startWriters(c *cluster, h *writeHistory, seed uint64) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range killWriters {
		var keys []string
		for k := w; k < killKeys; k += killWriters {
			keys = append(keys, fmt.Sprintf("k%d", k))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			runWriter(ctx, c, h, keys, rand.New(rand.NewPCG(seed, uint64(w))))
		}()
	}
	return sync.OnceFunc(func() { cancel(); wg.Wait() })
}

// runWriter PUTs unique values to keys, one at a time, each through a
// random live node with a 2 s timeout, until ctx ends, recording every
// write and its outcome.
func runWriter(ctx context.Context, c *cluster, h *writeHistory, keys []string, rng *rand.Rand) {
	hc := newHTTPClient(2 * time.Second)
	defer hc.CloseIdleConnections()
	for ctx.Err() == nil {
		live := c.live()
		if len(live) == 0 {
			return
		}
		p := live[rng.IntN(len(live))]
		op := h.invoke(keys[rng.IntN(len(keys))], p.name)
		r, err := do(ctx, hc, http.MethodPut, p.url("/kv/"+op.key), jsonBody(map[string]string{"value": op.value}))
		switch {
		case err != nil:
			h.complete(op, opUnknown, err.Error())
		case r.code == http.StatusOK:
			h.complete(op, opOK, r.String())
		case r.code == http.StatusServiceUnavailable:
			h.complete(op, opFail, r.String())
		case r.code == http.StatusGatewayTimeout:
			h.complete(op, opUnknown, r.String())
		default:
			h.complete(op, opUnknown, r.String())
			h.mu.Lock()
			h.unexpected = append(h.unexpected, fmt.Sprintf("PUT %s through %s: %s", op.key, p.name, r))
			h.mu.Unlock()
		}
		if err != nil || r.code != http.StatusOK {
			// An election is under way: don't spin.
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// recoveredLastIndex is the last log index the newest incarnation of p
// recovered from disk, from its start and restore events: the entries
// replayed from the WAL follow the snapshot's index.
func recoveredLastIndex(p *proc) (uint64, error) {
	evs, err := readEvents(p)
	if err != nil {
		return 0, err
	}
	start, starts := -1, 0
	for i, e := range evs {
		if e.Event == "start" {
			start = i
			starts++
		}
	}
	if want := p.startCount(); starts != want {
		return 0, fmt.Errorf("%s: %d start events logged, %d starts", p.name, starts, want)
	}
	entries, ok := evs[start].raw["entries"].(float64)
	if !ok {
		return 0, fmt.Errorf("%s: start event without entries: %v", p.name, evs[start].raw)
	}
	var snap uint64
	if start+1 < len(evs) && evs[start+1].Event == "restore" {
		snap = evs[start+1].Index
	}
	return snap + uint64(entries), nil
}

// checkKeys reads every key linearizably through the live nodes (the
// writers must be stopped) and checks each value against the history with
// explainFinal. It returns how many values each explanation accounted for.
func checkKeys(t *testing.T, c *cluster, h *writeHistory, when string) map[string]int {
	t.Helper()
	ops, unexpected := h.snapshot()
	require.Empty(t, unexpected, "answers other than 200, 503 and 504")
	counts := map[string]int{}
	live := c.live()
	for k := range killKeys {
		key := fmt.Sprintf("k%d", k)
		r := c.eventually(live[k%len(live)], http.MethodGet, "/kv/"+key, nil)
		var got *string
		switch r.code {
		case http.StatusOK:
			v, _ := r.str("value")
			got = &v
		case http.StatusNotFound:
		default:
			t.Fatalf("%s: GET %s: %s", when, key, r)
		}
		why, err := explainFinal(key, ops, got)
		require.NoError(t, err, when)
		counts[why]++
	}
	return counts
}

// TestIntegrationKillLeaderKeepsAcknowledgedWrites SIGKILLs the leader three
// times during a stream of writes, restarts it on the same data directory,
// and checks that no acknowledged write was lost: right after each kill
// (through the survivors) and at the end.
func TestIntegrationKillLeaderKeepsAcknowledgedWrites(t *testing.T) {
	// A small snapshot interval makes restarts recover from snapshot + WAL
	// and lets a lagging node be caught up by a snapshot.
	c := newCluster(t, baseKill, 3, "--request-timeout", "1s", "--snapshot-entries", "64")
	c.waitLeader()

	h := &writeHistory{}
	stop := startWriters(c, h, 1)
	t.Cleanup(func() { stop() })

	const rounds, perRound, afterKill = 3, 100, 20
	for round := 1; round <= rounds; round++ {
		target := h.ackedCount() + perRound
		waitFor(t, 30*time.Second, fmt.Sprintf("round %d: %d acknowledged writes", round, target), func() error {
			if n := h.ackedCount(); n < target {
				return fmt.Errorf("%d acknowledged", n)
			}
			return nil
		})
		leader, _ := c.waitLeader()
		st, err := c.status(leader)
		require.NoError(t, err)
		leader.kill()
		ackedAtKill := h.ackedCount()
		stop()
		t.Logf("round %d: SIGKILLed leader %s (term %d, commit %d) after %d acknowledged writes",
			round, leader.name, st.Term, st.Commit, ackedAtKill)

		// The survivors elect a leader that has every acknowledged write.
		counts := checkKeys(t, c, h, fmt.Sprintf("round %d, %s killed", round, leader.name))
		t.Logf("round %d: survivors' values: %v", round, counts)

		// They keep acknowledging writes.
		stop = startWriters(c, h, uint64(round+1))
		waitFor(t, 15*time.Second, fmt.Sprintf("round %d: writes acknowledged without %s", round, leader.name), func() error {
			if n := h.ackedCount(); n < ackedAtKill+afterKill {
				return fmt.Errorf("%d acknowledged since the kill", n-ackedAtKill)
			}
			return nil
		})

		// The restarted node recovers at least what it knew committed...
		leader.start()
		c.waitUp(leader)
		var recovered uint64
		waitFor(t, 5*time.Second, leader.name+" start event", func() error {
			recovered, err = recoveredLastIndex(leader)
			return err
		})
		require.GreaterOrEqual(t, recovered, st.Commit,
			"%s recovered its log up to %d from disk, but had reported commit %d before the SIGKILL", leader.name, recovered, st.Commit)
		// ...and catches up with the leader.
		_, now := c.waitLeader()
		waitFor(t, 15*time.Second, fmt.Sprintf("round %d: %s catches up to commit %d", round, leader.name, now.Commit), func() error {
			rs, err := c.status(leader)
			if err != nil {
				return err
			}
			if rs.Applied < now.Commit {
				return fmt.Errorf("%s applied %d", leader.name, rs.Applied)
			}
			return nil
		})
	}
	stop()

	// The final linearizable value of every key is explained by the history.
	counts := checkKeys(t, c, h, "final")
	ops, _ := h.snapshot()
	var stats [4]int
	for _, op := range ops {
		stats[op.outcome]++
	}
	t.Logf("history: %d writes: %d acknowledged, %d failed (503), %d unknown; final values: %v",
		len(ops), stats[opOK], stats[opFail], stats[opUnknown], counts)

	// Every node, the three restarted ones included, converges on the same
	// state (a write whose client gave up may still apply just after the
	// final reads, so agreement is required, not equality with them).
	waitFor(t, 15*time.Second, "every node holds the same values", func() error {
		c.waitCaughtUp()
		var first map[string]string
		for _, p := range c.nodes {
			vals := map[string]string{}
			for k := range killKeys {
				key := fmt.Sprintf("k%d", k)
				r, err := c.do(p, http.MethodGet, "/kv/"+key+"?stale=true", nil)
				if err != nil {
					return err
				}
				vals[key] = r.String()
			}
			if first == nil {
				first = vals
			} else if !mapsEqual(first, vals) {
				return fmt.Errorf("%s has %v, n1 has %v", p.name, vals, first)
			}
		}
		return nil
	})
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// explainFinal checks the final value of key (nil: absent) against the
// history and names the reason it is allowed:
//
//   - "last-ack": the value of the last acknowledged write to key.
//   - "later-unknown": a write invoked after the last acknowledged one whose
//     outcome is unknown (it may have applied).
//   - "earlier-unknown": a write invoked before the last acknowledged one
//     whose outcome is unknown. Linearizability allows it (an unknown write
//     may take effect at any time after its invocation), and it happens for
//     real when a follower gives up forwarding a write that the leader
//     then proposes late.
//   - "never-acked": key was never acknowledged and is absent.
//
// Anything else is an error: a lost acknowledged write (the value of an
// earlier acknowledged write, or absent), a write answered 503 (certainly
// not applied) being visible, or a value never written.
func explainFinal(key string, ops []*writeOp, got *string) (string, error) {
	var keyOps []*writeOp
	for _, op := range ops {
		if op.key == key {
			keyOps = append(keyOps, op)
		}
	}
	lastAck := -1
	for i, op := range keyOps {
		if op.outcome == opOK {
			lastAck = i
		}
	}
	tail := func() string {
		from := max(0, lastAck-2)
		var b strings.Builder
		for _, op := range keyOps[from:] {
			fmt.Fprintf(&b, "\n  #%d %s via %s: %v, %s", op.seq, op.value, op.node, op.outcome, op.answer)
		}
		return b.String()
	}
	if got == nil {
		if lastAck < 0 {
			return "never-acked", nil
		}
		return "", fmt.Errorf("%s is absent, but write #%d of %s was acknowledged:%s",
			key, keyOps[lastAck].seq, keyOps[lastAck].value, tail())
	}
	i := slices.IndexFunc(keyOps, func(op *writeOp) bool { return op.value == *got })
	if i < 0 {
		return "", fmt.Errorf("%s = %q, a value never written to it:%s", key, *got, tail())
	}
	op := keyOps[i]
	switch {
	case i == lastAck:
		return "last-ack", nil
	case op.outcome == opUnknown && i > lastAck:
		return "later-unknown", nil
	case op.outcome == opUnknown:
		return "earlier-unknown", nil
	case op.outcome == opFail:
		return "", fmt.Errorf("%s = %q, written by #%d which was answered %s (not applied):%s",
			key, *got, op.seq, op.answer, tail())
	default:
		return "", fmt.Errorf("%s = %q from acknowledged write #%d, but the later write #%d of %q was acknowledged too (lost write):%s",
			key, *got, op.seq, keyOps[lastAck].seq, keyOps[lastAck].value, tail())
	}
}

// TestExplainFinal checks the kill test's checker on hand-made histories;
// it needs no binary.
func TestExplainFinal(t *testing.T) {
	ops := []*writeOp{
		{seq: 0, key: "k", value: "a", outcome: opOK},
		{seq: 1, key: "k", value: "b", outcome: opUnknown},
		{seq: 2, key: "k", value: "c", outcome: opOK},
		{seq: 3, key: "other", value: "x", outcome: opOK},
		{seq: 4, key: "k", value: "d", outcome: opFail},
		{seq: 5, key: "k", value: "e", outcome: opUnknown},
		{seq: 6, key: "never", value: "y", outcome: opUnknown},
		{seq: 7, key: "never", value: "z", outcome: opFail},
	}
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		key  string
		got  *string
		why  string
		fail string
	}{
		{"k", str("c"), "last-ack", ""},
		{"k", str("e"), "later-unknown", ""},
		{"k", str("b"), "earlier-unknown", ""},
		{"k", str("a"), "", "lost write"},
		{"k", str("d"), "", "not applied"},
		{"k", str("x"), "", "never written"},
		{"k", nil, "", "absent"},
		{"never", nil, "never-acked", ""},
		{"never", str("y"), "later-unknown", ""},
		{"never", str("z"), "", "not applied"},
	} {
		why, err := explainFinal(tc.key, ops, tc.got)
		if tc.fail != "" {
			require.ErrorContains(t, err, tc.fail, "%s = %v", tc.key, tc.got)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.why, why, "%s = %v", tc.key, tc.got)
	}
}

// TestIntegrationTornWALTail appends half a record to the newest WAL
// segment of a killed node: the restart truncates it, logs that it did, and
// keeps every acknowledged write.
func TestIntegrationTornWALTail(t *testing.T) {
	c := newCluster(t, baseTornWAL, 1)
	n1 := c.nodes[0]
	c.waitLeader()
	want := map[string]string{}
	for i := range 10 {
		key, value := fmt.Sprintf("t%d", i), fmt.Sprintf("value-%d", i)
		r := c.eventually(n1, http.MethodPut, "/kv/"+key, putBody(value, 1, uint64(i+1)))
		require.Equal(t, http.StatusOK, r.code, "PUT %s: %s", key, r)
		want[key] = value
	}
	n1.kill()

	segs, err := filepath.Glob(filepath.Join(n1.dataDir, "wal", "*.wal"))
	require.NoError(t, err)
	require.NotEmpty(t, segs, "WAL segments in %s", n1.dataDir)
	slices.Sort(segs) // zero-padded sequence numbers: the last is the newest
	segment := segs[len(segs)-1]
	// The killed node's segment is preallocated; opening and closing its
	// WAL trims it to its records, the end a torn write would follow.
	w, err := wal.Open(filepath.Join(n1.dataDir, "wal"), wal.Options{})
	require.NoError(t, err)
	_, _, err = w.ReadAll()
	require.NoError(t, err)
	require.NoError(t, w.Close())
	info, err := os.Stat(segment)
	require.NoError(t, err)
	sizeBefore := info.Size()

	// A record header promising 64 data bytes, followed by only 10 of them:
	// what a crash in the middle of a write leaves.
	torn := binary.LittleEndian.AppendUint32(nil, 64)
	torn = binary.LittleEndian.AppendUint32(torn, 0xdeadbeef)
	torn = append(torn, 1)                                   // type
	torn = binary.LittleEndian.AppendUint64(torn, 1_000_000) // index
	torn = append(torn, []byte("0123456789")...)
	f, err := os.OpenFile(segment, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(torn)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	n1.start()
	c.waitUp(n1)
	newest := func(s string) string { // the log of the newest incarnation
		return s[strings.LastIndex(s, "==== start #"):]
	}
	logged := newest(n1.logText())
	require.Contains(t, logged, "truncated a torn WAL tail", "restart logs the truncation")
	require.Contains(t, logged, fmt.Sprintf("bytes=%d", len(torn)))
	require.Contains(t, logged, filepath.Base(segment))

	checkAll := func() {
		t.Helper()
		c.waitLeader()
		for key, value := range want {
			r := c.eventually(n1, http.MethodGet, "/kv/"+key, nil)
			require.Equal(t, http.StatusOK, r.code, "GET %s: %s", key, r)
			v, _ := r.str("value")
			require.Equal(t, value, v, "GET %s", key)
		}
	}
	checkAll()
	// The valid records before the tear are untouched.
	data, err := os.ReadFile(segment)
	require.NoError(t, err)
	require.GreaterOrEqual(t, int64(len(data)), sizeBefore)
	require.NotContains(t, string(data[sizeBefore:]), "0123456789", "the torn bytes are gone")

	// Writes after the truncation land on a clean tail: a clean stop and a
	// second restart recover them without finding anything torn.
	r := c.eventually(n1, http.MethodPut, "/kv/after", putBody("restart", 1, 100))
	require.Equal(t, http.StatusOK, r.code, "PUT after restart: %s", r)
	want["after"] = "restart"
	n1.signal(syscall.SIGTERM)
	require.Equal(t, 0, n1.waitExit(10*time.Second), "exit code after SIGTERM")
	n1.start()
	c.waitUp(n1)
	checkAll()
	require.NotContains(t, newest(n1.logText()), "torn", "second restart finds a clean WAL")
	evs, err := readEvents(n1)
	require.NoError(t, err)
	require.True(t, hasEvent(evs, func(e event) bool { return e.Event == "stop" }), "SIGTERM logs a stop event")
}

// runChaos runs the chaos binary to completion (bounded) and returns its
// exit code and stderr.
func runChaos(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, needBinary(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee) && ctx.Err() == nil:
		return ee.ExitCode(), stderr.String()
	default:
		t.Fatalf("chaos %s: %v (stderr %q)", strings.Join(args, " "), err, stderr.String())
		return -1, ""
	}
}

// TestIntegrationSetupAndConfigErrors: a second process on a locked data
// directory or a busy port exits 255; bad flags exit 254 with one line.
func TestIntegrationSetupAndConfigErrors(t *testing.T) {
	c := newCluster(t, baseDataLock, 1)
	n1 := c.nodes[0]
	dir := t.TempDir()
	otherIP := loopback(baseDataLock + 2)
	single := func(ip string) []string {
		return []string{"--client-addr", net.JoinHostPort(ip, clientPort), "--peer-addr", net.JoinHostPort(ip, peerPort),
			"--peers", "n1=" + net.JoinHostPort(ip, peerPort)}
	}

	second := newProc(t, dir, "second", otherIP,
		append([]string{"node", "--id", "n1", "--data-dir", n1.dataDir}, single(otherIP)...))
	second.start()
	require.Equal(t, 255, second.waitExit(5*time.Second), "second process on a locked data directory")
	require.Contains(t, strings.ToLower(second.logText()), "locked")

	busy := newProc(t, dir, "busy", n1.ip, []string{"node", "--id", "n1", "--data-dir", filepath.Join(dir, "busy-data"),
		"--client-addr", n1.clientAddr(), "--peer-addr", net.JoinHostPort(otherIP, peerPort), "--peers", "n1=" + net.JoinHostPort(otherIP, peerPort)})
	busy.start()
	require.Equal(t, 255, busy.waitExit(5*time.Second), "client address in use")
	require.Contains(t, busy.logText(), "address already in use")

	// The first node is unharmed.
	r := c.eventually(n1, http.MethodPut, "/kv/still", putBody("here", 1, 1))
	require.Equal(t, http.StatusOK, r.code, "%s", r)

	base := append([]string{"node", "--id", "n1", "--data-dir", filepath.Join(dir, "bad")}, single(otherIP)...)
	for _, tc := range []struct {
		name    string
		args    []string
		mention string
	}{
		{"unknown bug", append(slices.Clone(base), "--bug", "no-such-bug"), "no-such-bug"},
		{"missing peers", []string{"node", "--id", "n1", "--data-dir", filepath.Join(dir, "bad")}, "--peers"},
		{"id not in peers", append(slices.Clone(base[:2]), append([]string{"n9"}, base[3:]...)...), "n9"},
		{"unknown flag", append(slices.Clone(base), "--no-such-flag"), "no-such-flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := runChaos(t, tc.args...)
			require.Equal(t, 254, code, "stderr: %s", stderr)
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			require.Len(t, lines, 1, "one line on stderr: %q", stderr)
			require.Contains(t, lines[0], tc.mention)
		})
	}
}

// staleReadScenario cuts follower F off from the other two, writes a new
// value through the majority and reads through F once. It heals the cluster
// before returning and checks that F then sees the new value.
func staleReadScenario(t *testing.T, c *cluster) reply {
	leader, _ := c.waitLeader()
	f := c.followers(leader)[0]
	var majority []*proc
	for _, p := range c.nodes {
		if p != f {
			majority = append(majority, p)
		}
	}
	r := c.eventually(leader, http.MethodPut, "/kv/reg", putBody("old", 1, 1))
	require.Equal(t, http.StatusOK, r.code, "%s", r)
	waitFor(t, 10*time.Second, f.name+" applies the old value", func() error {
		r, err := c.do(f, http.MethodGet, "/kv/reg?stale=true", nil)
		if err != nil {
			return err
		}
		if v, _ := r.str("value"); v != "old" {
			return fmt.Errorf("%s", r)
		}
		return nil
	})

	// Cut both directions of both of F's links.
	r = c.mustDo(f, http.MethodPost, "/faults/partition", jsonBody(map[string]any{"drop": []string{majority[0].name, majority[1].name}}))
	require.Equal(t, http.StatusOK, r.code, "%s", r)
	require.ElementsMatch(t, []any{majority[0].name, majority[1].name}, r.fields["drop"])
	for _, p := range majority {
		r := c.mustDo(p, http.MethodPost, "/faults/partition", jsonBody(map[string]any{"drop": []string{f.name}}))
		require.Equal(t, http.StatusOK, r.code, "%s", r)
	}

	// The majority acknowledges the new value.
	r = c.eventually(majority[0], http.MethodPut, "/kv/reg", putBody("new", 1, 2))
	require.Equal(t, http.StatusOK, r.code, "%s", r)

	read := c.mustDo(f, http.MethodGet, "/kv/reg", nil)

	for _, p := range c.nodes {
		r := c.mustDo(p, http.MethodDelete, "/faults", nil)
		require.Equal(t, http.StatusOK, r.code, "%s", r)
	}
	waitFor(t, 10*time.Second, f.name+" reads the new value after healing", func() error {
		r, err := c.do(f, http.MethodGet, "/kv/reg", nil)
		if err != nil {
			return err
		}
		if v, _ := r.str("value"); r.code != http.StatusOK || v != "new" {
			return fmt.Errorf("%s", r)
		}
		return nil
	})
	return read
}

// TestIntegrationStaleReadBug: with the planted stale-read bug a
// partitioned follower answers a "linearizable" read with the value from
// before an acknowledged write; without it, it never does.
func TestIntegrationStaleReadBug(t *testing.T) {
	needBinary(t)
	t.Run("with stale-read", func(t *testing.T) {
		c := newCluster(t, baseStaleBug, 3, "--enable-fault-hooks", "--request-timeout", "1s", "--bug", "stale-read")
		r := staleReadScenario(t, c)
		require.Equal(t, http.StatusOK, r.code, "%s", r)
		v, _ := r.str("value")
		require.Equal(t, "old", v, "the planted bug serves the stale value")
	})
	t.Run("without bug", func(t *testing.T) {
		c := newCluster(t, baseStaleSafe, 3, "--enable-fault-hooks", "--request-timeout", "1s")
		r := staleReadScenario(t, c)
		v, _ := r.str("value")
		require.NotEqual(t, "old", v, "a linearizable read after an acknowledged write: %s", r)
		switch r.code {
		case http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			require.NotEmpty(t, r.fields["error"], "%s", r)
		case http.StatusOK:
			require.Equal(t, "new", v)
		default:
			t.Fatalf("partitioned follower answered %s", r)
		}
	})
}

// TestIntegrationFaultHooksDisabled: every fault hook answers 403 without
// --enable-fault-hooks.
func TestIntegrationFaultHooksDisabled(t *testing.T) {
	c := newCluster(t, baseNoHooks, 1)
	n1 := c.nodes[0]
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, "/faults", nil},
		{http.MethodDelete, "/faults", nil},
		{http.MethodPost, "/faults/partition", map[string]any{"drop": []string{}}},
		{http.MethodDelete, "/faults/partition", nil},
		{http.MethodPost, "/faults/net", map[string]any{"loss": 0.5, "delay_ms": 10}},
		{http.MethodDelete, "/faults/net", nil},
		{http.MethodPost, "/faults/clock", map[string]any{"offset_ms": 1000, "rate": 2}},
		{http.MethodDelete, "/faults/clock", nil},
	} {
		var body []byte
		if req.body != nil {
			body = jsonBody(req.body)
		}
		r := c.mustDo(n1, req.method, req.path, body)
		require.Equal(t, http.StatusForbidden, r.code, "%s %s: %s", req.method, req.path, r)
		require.Contains(t, r.fields["error"], "--enable-fault-hooks", "%s %s", req.method, req.path)
	}
}

// TestIntegrationBadInput: malformed and oversized requests get 4xx, and
// garbage on the peer port does not bring the node down.
func TestIntegrationBadInput(t *testing.T) {
	c := newCluster(t, baseBadInput, 1)
	n1 := c.nodes[0]
	c.waitLeader()

	for _, tc := range []struct {
		name, method, path string
		body               []byte
		code               int
	}{
		{"truncated JSON", http.MethodPut, "/kv/a", []byte(`{"value":`), http.StatusBadRequest},
		{"not JSON", http.MethodPut, "/kv/a", []byte(`value=1`), http.StatusBadRequest},
		{"value not a string", http.MethodPut, "/kv/a", []byte(`{"value":5}`), http.StatusBadRequest},
		{"unknown field", http.MethodPut, "/kv/a", []byte(`{"valu":"x"}`), http.StatusBadRequest},
		{"no value", http.MethodPut, "/kv/a", []byte(`{}`), http.StatusBadRequest},
		{"cas without to", http.MethodPost, "/kv/a/cas", []byte(`{"from":"x"}`), http.StatusBadRequest},
		{"unknown route", http.MethodGet, "/nope", nil, http.StatusNotFound},
		{"unknown nested route", http.MethodGet, "/kv/a/b/c", nil, http.StatusNotFound},
		{"3 MB body", http.MethodPut, "/kv/a", jsonBody(map[string]string{"value": strings.Repeat("x", 3<<20)}), http.StatusRequestEntityTooLarge},
		{"value over 1 MiB", http.MethodPut, "/kv/a", jsonBody(map[string]string{"value": strings.Repeat("x", 1<<20+1)}), http.StatusRequestEntityTooLarge},
		{"2 KB key GET", http.MethodGet, "/kv/" + strings.Repeat("k", 2048), nil, http.StatusRequestEntityTooLarge},
		{"2 KB key PUT", http.MethodPut, "/kv/" + strings.Repeat("k", 2048), []byte(`{"value":"v"}`), http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.mustDo(n1, tc.method, tc.path, tc.body)
			require.Equal(t, tc.code, r.code, "%s", r)
			require.NotEmpty(t, r.fields["error"], "error body is JSON with an error: %s", r)
		})
	}
	// None of them was applied.
	r := c.eventually(n1, http.MethodGet, "/kv/a", nil)
	require.Equal(t, http.StatusNotFound, r.code, "%s", r)

	// Garbage on the peer port: random bytes, a frame header whose checksum
	// fails, a frame whose checksum holds over random payload, and HTTP.
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	payload := random(200)
	goodCRC := binary.LittleEndian.AppendUint32(nil, uint32(len(payload)))
	goodCRC = binary.LittleEndian.AppendUint32(goodCRC, crc32.Checksum(payload, crc32.MakeTable(crc32.Castagnoli)))
	goodCRC = append(goodCRC, payload...)
	badCRC := binary.LittleEndian.AppendUint32(nil, 16)
	badCRC = append(append(badCRC, 1, 2, 3, 4), random(16)...)
	for i, garbage := range [][]byte{random(64 << 10), badCRC, goodCRC, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), random(3)} {
		conn, err := net.DialTimeout("tcp", n1.peerAddr(), 2*time.Second)
		require.NoError(t, err, "garbage connection %d", i)
		require.NoError(t, conn.SetDeadline(time.Now().Add(2*time.Second)))
		_, err = conn.Write(garbage)
		// The node may close the connection as soon as it sees bad input.
		if err != nil && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
			t.Fatalf("garbage connection %d: write: %v", i, err)
		}
		require.NoError(t, conn.Close())
	}
	waitFor(t, 5*time.Second, "the node logs rejecting bad peer input", func() error {
		if !strings.Contains(n1.logText(), "bad input") {
			return errors.New("no \"bad input\" in stderr")
		}
		return nil
	})
	require.True(t, n1.running(), "node survived peer garbage")
	st, err := c.status(n1)
	require.NoError(t, err)
	require.Equal(t, "leader", st.Role, "%+v", st)
	r = c.eventually(n1, http.MethodPut, "/kv/a", putBody("after-garbage", 1, 1))
	require.Equal(t, http.StatusOK, r.code, "%s", r)
	r = c.eventually(n1, http.MethodGet, "/kv/a", nil)
	require.Equal(t, http.StatusOK, r.code, "%s", r)
	v, _ := r.str("value")
	require.Equal(t, "after-garbage", v)
}
