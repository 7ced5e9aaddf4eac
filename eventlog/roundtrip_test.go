package eventlog

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// life is one life of node n1 with an event of every kind, as the Writer
// is given them (times explicit, Node and Line unset).
func life(t0 time.Time) []Event {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms)*time.Millisecond + 123456789) }
	return []Event{
		{Time: at(0), Event: KindStart, Term: 2, For: "n3", Index: 7, Entries: 3, Truncated: 40, Bugs: "forget-vote,stale-read"},
		{Time: at(1), Event: KindRestore, Index: 2, Term: 1},
		{Time: at(1), Event: KindConf, Index: 2, Term: 1, Voters: "n1,n2,n3"},
		{Time: at(1), Event: KindConf, Index: 3, Term: 1, Change: "add-learner n4", Voters: "n1,n2,n3", Learners: "n4"},
		{Time: at(2), Event: KindRole, Role: PreCandidate, Term: 2},
		{Time: at(3), Event: KindRole, Role: Candidate, Term: 3},
		{Time: at(4), Event: KindVote, Term: 3, For: "n1"},
		{Time: at(5), Event: KindRole, Role: Leader, Term: 3, Leader: "n1"},
		{Time: at(6), Event: KindCommit, Index: 4},
		{Time: at(7), Event: KindApply, Index: 4, Term: 3, Hash: "00000000000000cc"},
		{Time: at(8), Event: KindSnapshot, Index: 4, Term: 3},
		{Time: at(9), Event: KindRole, Role: Follower, Term: 4, Leader: "n2"},
		{Time: at(10), Event: KindStop},
	}
}

// write appends evs to dir/events.jsonl with a Writer for n1.
func write(t *testing.T, dir string, evs []Event) {
	t.Helper()
	w, err := Open(dir, "n1")
	require.NoError(t, err)
	for _, e := range evs {
		w.Emit(e)
	}
	require.NoError(t, w.Close())
}

// written returns what a Writer for n1 writes for evs into a new log.
func written(t *testing.T, evs []Event) []byte {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, evs)
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	require.NoError(t, err)
	return b
}

// asRead returns evs as ReadEvents returns them from a file of n1 whose
// line numbers start at first.
func asRead(evs []Event, first int) []Event {
	out := make([]Event, len(evs))
	for i, e := range evs {
		e.Node, e.Line = "n1", first+i
		out[i] = e
	}
	return out
}

var t0 = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)

// What the Writer writes, the reader reads back as it was given, every
// field of every kind; the bytes keep the format's field names and order.
func TestRoundTrip(t *testing.T) {
	evs := life(t0)
	b := written(t, evs)
	got, warns, err := ReadEvents(bytes.NewReader(b))
	require.NoError(t, err)
	require.Empty(t, warns)
	require.Equal(t, asRead(evs, 1), got)

	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, len(evs))
	for i, l := range lines {
		require.True(t, strings.HasPrefix(l, eventStart), "line %d: %s", i+1, l)
	}
	require.Equal(t, `{"time":"2026-01-02T10:00:00.123456789Z","event":"start","node":"n1","term":2,"for":"n3","index":7,"entries":3,"truncated":40,"bugs":"forget-vote,stale-read"}`, lines[0])
	require.Equal(t, `{"time":"2026-01-02T10:00:00.124456789Z","event":"conf","node":"n1","index":3,"term":1,"change":"add-learner n4","voters":"n1,n2,n3","learners":"n4"}`, lines[3])
	require.Equal(t, `{"time":"2026-01-02T10:00:00.125456789Z","event":"role","node":"n1","role":"pre-candidate","term":2,"leader":""}`, lines[4])
	require.Equal(t, `{"time":"2026-01-02T10:00:00.130456789Z","event":"apply","node":"n1","index":4,"term":3,"hash":"00000000000000cc"}`, lines[9])
	require.Equal(t, `{"time":"2026-01-02T10:00:00.133456789Z","event":"stop","node":"n1"}`, lines[12])
}

// A node killed in the middle of a write leaves a torn last line. The
// reader skips it with a warning when it ends a life: as the last line,
// followed by the next life's start (the Writer ends the torn line on
// open), or with that start appended on the same line (older nodes); in
// the middle of a life it is an error naming the line.
func TestRoundTripTornLines(t *testing.T) {
	first := life(t0)[:10] // up to the apply
	second := life(t0.Add(time.Minute))
	whole := written(t, first)
	// Killed while writing the apply: its line is cut short.
	torn := whole[:bytes.LastIndexByte(whole[:len(whole)-1], '\n')+1+len(eventStart)+10]
	// The next life, written by a Writer opened on the torn file.
	afterKill := func(t *testing.T) []byte {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), torn, 0o644))
		write(t, dir, second)
		b, err := os.ReadFile(filepath.Join(dir, FileName))
		require.NoError(t, err)
		return b
	}
	for _, c := range []struct {
		name string
		file func(t *testing.T) []byte
		want []Event
	}{
		{"last line", func(*testing.T) []byte { return torn }, asRead(first[:9], 1)},
		{"followed by a start", afterKill, append(asRead(first[:9], 1), asRead(second, 11)...)},
		{"start appended", func(t *testing.T) []byte { return append(slices.Clip(torn), written(t, second)...) },
			append(asRead(first[:9], 1), asRead(second, 10)...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, warns, err := ReadEvents(bytes.NewReader(c.file(t)))
			require.NoError(t, err)
			require.Len(t, warns, 1)
			require.Equal(t, 10, warns[0].Line)
			require.Contains(t, warns[0].Msg, "torn line skipped")
			require.Equal(t, c.want, got)
		})
	}
	t.Run("mid-life", func(t *testing.T) {
		b := append(append(slices.Clip(torn), '\n'), written(t, second[1:])...) // the life goes on without a start
		_, _, err := ReadEvents(bytes.NewReader(b))
		require.ErrorContains(t, err, "events line 10: ")
		require.ErrorContains(t, err, "a torn line in the middle of a life")
	})
}
