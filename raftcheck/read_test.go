package raftcheck

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/checker"
	"chaos/eventlog"
)

// longEntries is how many entries longRun's nodes apply: more than the
// pages appliedTable allocates whatever their fill, so that the table
// works as on a long run's logs.
const longEntries = minPages*appliedPageSize + 5000

// longRun writes a run directory of five nodes n1..n5 that start, elect
// n1 in term 1 (every node voting for it), then each commit and apply
// longEntries entries, one event a millisecond; then each node's lines in
// last (events as JSON objects without time and node, which are added).
// It returns the directory and each node's number of lines.
func longRun(t *testing.T, last map[string]string) (string, map[string]int) {
	return writeLongRun(t, longEntries, last)
}

// writeLongRun is longRun with entries entries.
func writeLongRun(t testing.TB, entries int, last map[string]string) (string, map[string]int) {
	t.Helper()
	dir := t.TempDir()
	lines := map[string]int{}
	for n := 1; n <= 5; n++ {
		node := fmt.Sprintf("n%d", n)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "nodes", node), 0o755))
		f, err := os.Create(filepath.Join(dir, "nodes", node, eventlog.FileName))
		require.NoError(t, err)
		w := &lineWriter{node: node, w: bufio.NewWriter(f)}
		role := "follower"
		if n == 1 {
			role = "leader"
		}
		w.line(`"event":"start","term":0,"for":"none","index":0`)
		w.line(`"event":"vote","term":1,"for":"n1"`)
		w.line(fmt.Sprintf(`"event":"role","role":%q,"term":1,"leader":"n1"`, role))
		for i := 1; i <= entries; i++ {
			w.line(fmt.Sprintf(`"event":"commit","index":%d`, i))
			w.line(fmt.Sprintf(`"event":"apply","index":%d,"term":1,"hash":"%016x"`, i, i*7919))
		}
		if l, ok := last[node]; ok {
			w.line(l)
		}
		require.NoError(t, w.err)
		require.NoError(t, w.w.Flush())
		require.NoError(t, f.Close())
		lines[node] = w.n
	}
	return dir, lines
}

// lineWriter writes one node's event lines, each a millisecond after the
// one before.
type lineWriter struct {
	node string
	w    *bufio.Writer
	n    int
	err  error
}

var longT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (w *lineWriter) line(fields string) {
	at := longT0.Add(time.Duration(w.n) * time.Millisecond).Format(time.RFC3339Nano)
	w.n++
	if _, err := fmt.Fprintf(w.w, `{"time":%q,"node":%q,%s}`+"\n", at, w.node, fields); err != nil && w.err == nil {
		w.err = err
	}
}

// Each node's last line, after 140,000 lines of applies and commits,
// breaks a rule, and the streaming read finds each of them at that line:
// what it keeps of the long stretch before is enough for every rule. It
// keeps the rare events and a few applies and commits, not the lines.
func TestCheckRunFindsAnAnomalyInTheLastLineOfALongLog(t *testing.T) {
	dir, lines := longRun(t, map[string]string{
		"n1": `"event":"apply","index":1,"term":1,"hash":"ffffffffffffffff"`,
		"n2": `"event":"commit","index":7`,
		"n3": `"event":"vote","term":1,"for":"n5"`,
		"n4": `"event":"start","term":1,"for":"n1","index":3,"entries":3`,
		"n5": `"event":"role","role":"leader","term":1,"leader":"n5"`,
	})
	res := CheckRun(dir, &Timeline{}, AvailabilityOptions{})["raft"]
	d := raftDetails(t, res)
	require.Equal(t, checker.Invalid, res.Valid)
	assert.Equal(t, 5*(3+2*longEntries)+5, d.Events)
	found := map[string]string{}
	for _, v := range d.Violations {
		assert.Equal(t, lines[v.Node], v.Line, "%+v is not at its node's last line", v)
		found[v.Node] = v.Kind
	}
	assert.Equal(t, map[string]string{"n1": KindStateMachineSafety, "n2": KindCommitDecreased,
		"n3": KindDoubleVote, "n4": KindCameBackWithLess, "n5": KindElectionSafety}, found)

	r, err := readEvents(runFiles(dir))
	require.NoError(t, err)
	// Per node: start, vote, role, its stretch's highest apply, its
	// earliest and latest apply or commit, and the planted line.
	assert.LessOrEqual(t, len(r.events), 5*7)
	assert.Equal(t, map[uint64]uint64{1: 1}, r.firstApplied)
	assert.Equal(t, longT0.Add(4*time.Millisecond), r.clientApply)
}

// CheckRun reads a run directory's files as Raft reads the same events
// loaded whole (eventlog.LoadRun): the same verdict and details.
func TestCheckRunIsRaftOfTheLoadedRun(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "*", "nodes"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join("testdata", "real", "*", "nodes"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	require.NotEmpty(t, more)
	for _, nodes := range append(dirs, more...) {
		dir := filepath.Dir(nodes)
		evs, skipped, err := eventlog.LoadRun(dir)
		require.NoError(t, err)
		whole := Raft(evs)
		whole.Details.(*RaftDetails).Skipped = skipped
		read := CheckRun(dir, &Timeline{}, AvailabilityOptions{})["raft"]
		assert.JSONEq(t, jsonOf(t, whole), jsonOf(t, read), dir)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// A conflict is found wherever the index's first apply was kept: in a
// page, in the map of scattered indexes, after its page was allocated
// later, and between a hash of hex digits and any other string.
func TestAppliedTableFindsEveryConflict(t *testing.T) {
	tab := newAppliedTable()
	const hash = "0123456789abcdef"
	far := uint64(1) << 60
	for i := range uint64(minPages) {
		tab.observe(i*appliedPageSize, 1, hash) // one index a page: the pages allowed are used up
	}
	tab.observe(far, 1, hash)
	assert.Contains(t, tab.far, far)
	tab.observe(far, 1, hash)
	assert.Empty(t, tab.conflicts)
	tab.observe(far, 2, hash)
	assert.Equal(t, map[uint64]bool{far: true}, tab.conflicts)

	// Fill pages until far's page could be allocated: its index stays
	// where its first apply went.
	near := uint64(minPages+1) * appliedPageSize
	tab.observe(near, 1, hash)
	assert.Contains(t, tab.far, near)
	for i := range uint64(appliedPageSize) {
		tab.observe(i, 1, hash)
	}
	tab.observe(near+1, 1, hash)
	assert.Contains(t, tab.pages, near/appliedPageSize)
	tab.observe(near, 1, "fedcba9876543210")
	assert.True(t, tab.conflicts[near])

	for _, c := range []struct{ first, then string }{
		{hash, "0123456789ABCDEF"}, {"0123456789ABCDEF", hash}, {"xyz", hash}, {hash, "xyz"}, {"xyz", "xy"}, {"", "xyz"},
	} {
		tab := newAppliedTable()
		tab.observe(5, 1, c.first)
		tab.observe(5, 1, c.first)
		assert.Empty(t, tab.conflicts, "%q twice", c.first)
		tab.observe(5, 1, c.then)
		assert.True(t, tab.conflicts[5], "%q then %q", c.first, c.then)
	}
}

// A log of scattered indexes costs its lines, not the span between them:
// the pages stay within what their fill allows.
func TestAppliedTableScatteredIndexesAreBounded(t *testing.T) {
	tab := newAppliedTable()
	const n = 100_000
	for i := range uint64(n) {
		tab.observe(i*1_000_003, 1, strings.Repeat("a", 16))
	}
	assert.LessOrEqual(t, len(tab.pages), minPages+tab.stored/(appliedPageSize/4)+1)
	assert.Equal(t, n, tab.stored+len(tab.far))
	tab.observe(99_999*1_000_003, 2, strings.Repeat("a", 16))
	assert.Len(t, tab.conflicts, 1)
}

// The per-node rules see the highest index of each stretch of applies,
// even when neither the node's earliest nor its latest apply holds it: n1
// applied 1..50, restarted (a start without its recovered state, which is
// not judged), applied 1..5 again, and came back with its log ending at
// index 10, below the 50 it had applied.
func TestReadKeepsTheHighestApplyOfAStretch(t *testing.T) {
	var evs []eventlog.Event
	at := func(e eventlog.Event) {
		e.Node, e.Time, e.Line = "n1", longT0.Add(time.Duration(len(evs))*time.Millisecond), len(evs)+1
		evs = append(evs, e)
	}
	apply := func(i uint64) {
		at(eventlog.Event{Event: eventlog.KindApply, Index: i, Term: 1, Hash: fmt.Sprintf("%016x", i)})
	}
	at(eventlog.Event{Event: eventlog.KindStart, Term: 1})
	for i := range uint64(50) {
		apply(i + 1)
	}
	at(eventlog.Event{Event: eventlog.KindStart, Term: 1})
	for i := range uint64(5) {
		apply(i + 1)
	}
	at(eventlog.Event{Event: eventlog.KindStart, Term: 1, For: "n2", Index: 10})
	d := raftDetails(t, Raft(evs))
	require.Len(t, d.Violations, 1)
	assert.Equal(t, KindCameBackWithLess, d.Violations[0].Kind)
	assert.Equal(t, len(evs), d.Violations[0].Line)
}

// hexHash takes exactly kv.Hash's form: 16 lowercase hex digits.
func TestHexHash(t *testing.T) {
	v, ok := hexHash("0123456789abcdef")
	assert.True(t, ok)
	assert.Equal(t, uint64(0x0123456789abcdef), v)
	v, ok = hexHash("ffffffffffffffff")
	assert.True(t, ok)
	assert.Equal(t, ^uint64(0), v)
	for _, bad := range []string{"", "0123456789abcde", "0123456789abcdef0", "0123456789ABCDEF",
		"/000000000000000", ":000000000000000", "`000000000000000", "g000000000000000", "000000000000000 "} {
		_, ok := hexHash(bad)
		assert.False(t, ok, bad)
	}
}
