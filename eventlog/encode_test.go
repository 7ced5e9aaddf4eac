package eventlog

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLinesOfEveryKind: each kind's line has time, event and node, then
// exactly its fields, in the documented order (docs/FORMATS.md,
// "events.jsonl"), zero values included; an unnamed kind gets its non-zero
// fields.
func TestLinesOfEveryKind(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 120000000, time.FixedZone("x", 3600))
	const head = `{"time":"2026-03-04T04:06:07.12Z","event":`
	for _, c := range []struct {
		e    Event
		want string
	}{
		{Event{Event: KindStart, Term: 2, For: "n2", Index: 5, Entries: 3, Bugs: "forget-vote"}, `"start","node":"n1","term":2,"for":"n2","index":5,"entries":3,"truncated":0,"bugs":"forget-vote"}`},
		{Event{Event: KindStart, For: NoVote}, `"start","node":"n1","term":0,"for":"none","index":0,"entries":0,"truncated":0,"bugs":""}`},
		{Event{Event: KindStop, Term: 9}, `"stop","node":"n1"}`},
		{Event{Event: KindRole, Role: Leader, Term: 3, Leader: "n1"}, `"role","node":"n1","role":"leader","term":3,"leader":"n1"}`},
		{Event{Event: KindVote, Term: 3, For: "n2"}, `"vote","node":"n1","term":3,"for":"n2"}`},
		{Event{Event: KindCommit, Index: 4, Term: 3}, `"commit","node":"n1","index":4}`},
		{Event{Event: KindApply, Index: 4, Term: 3, Hash: "00000000000000cc"}, `"apply","node":"n1","index":4,"term":3,"hash":"00000000000000cc"}`},
		{Event{Event: KindSnapshot, Index: 4, Term: 3}, `"snapshot","node":"n1","index":4,"term":3}`},
		{Event{Event: KindRestore, Index: 2, Term: 1}, `"restore","node":"n1","index":2,"term":1}`},
		{Event{Event: KindConf, Index: 3, Term: 1, Change: "add-learner n4", Voters: "n1,n2,n3", Learners: "n4"},
			`"conf","node":"n1","index":3,"term":1,"change":"add-learner n4","voters":"n1,n2,n3","learners":"n4"}`},
		{Event{Event: "custom", Term: 4, Hash: "ab", Index: 9, Leader: "n2"}, `"custom","node":"n1","leader":"n2","term":4,"index":9,"hash":"ab"}`},
	} {
		c.e.Time = at
		require.Equal(t, head+c.want+"\n", string(c.e.appendLine(nil, "n1")))
	}
}

// TestDocumentedLinesAreWrittenAsDocumented: the example of docs/FORMATS.md
// read and written again is the same bytes.
func TestDocumentedLinesAreWrittenAsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/FORMATS.md")
	require.NoError(t, err)
	sec := string(doc[bytes.Index(doc, []byte("## events.jsonl")):])
	sec = sec[strings.Index(sec, "```\n")+4:]
	sec = sec[:strings.Index(sec, "```")]
	lines := strings.SplitAfter(strings.TrimSuffix(sec, "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 5)
	for _, line := range lines {
		ev, err := ParseLine([]byte(strings.TrimSuffix(line, "\n")))
		require.NoError(t, err)
		require.Equal(t, strings.TrimSuffix(line, "\n")+"\n", string(ev.appendLine(nil, ev.Node)))
	}
}

// TestStringsThatNeedEscapingDecodeBack: names with quotes, control
// characters or non-ASCII are escaped as encoding/json escapes them (log/slog,
// which wrote these lines before, left <, > and & as they are; both decode
// to the same string).
func TestStringsThatNeedEscapingDecodeBack(t *testing.T) {
	odd := Event{Time: time.Unix(1, 0), Event: KindVote, Term: 1, For: "n\"1<\\>\t\u00e9"}
	line := odd.appendLine(nil, "n&2")
	var back struct {
		For  string `json:"for"`
		Node string `json:"node"`
	}
	require.NoError(t, json.Unmarshal(line, &back))
	require.Equal(t, odd.For, back.For)
	require.Equal(t, "n&2", back.Node)
	ev, err := ParseLine(bytes.TrimSpace(line))
	require.NoError(t, err)
	require.Equal(t, odd.For, ev.For)
	require.Equal(t, "n&2", ev.Node)
}

// TestZeroFieldsOfAKindAreWritten: zero values of a kind's fields are
// written (and read back) as the Kind constants say.
func TestZeroFieldsOfAKindAreWritten(t *testing.T) {
	line := string(Event{Time: time.Unix(0, 0), Event: KindRole, Role: Follower}.appendLine(nil, "n1"))
	require.Equal(t, `{"time":"1970-01-01T00:00:00Z","event":"role","node":"n1","role":"follower","term":0,"leader":""}`+"\n", line)
}

func BenchmarkEmit(b *testing.B) {
	w, err := Open(b.TempDir(), "n1")
	require.NoError(b, err)
	defer w.Close()
	e := Event{Event: KindApply, Index: 123456, Term: 7, Hash: "00000000deadbeef"}
	b.ReportAllocs()
	for b.Loop() {
		w.Emit(e)
	}
}
