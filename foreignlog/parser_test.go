package foreignlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every testdata excerpt is detected as its own format and nothing else.
func TestDetectTestdata(t *testing.T) {
	for file, want := range map[string]string{
		"chaos.jsonl": "chaos", "splay.txt": "splay", "table.txt": "table",
		"etcd.txt": "etcd-trace", "course.txt": "course", "eliben.txt": "eliben",
	} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		require.NoError(t, err)
		p := Detect(data)
		require.NotNil(t, p, file)
		assert.Equal(t, want, p.Name(), file)
		for _, other := range Parsers() {
			if other.Name() != want {
				first := strings.Split(string(data), "\n")
				assert.False(t, other.Detect(first), "%s also detects %s", other.Name(), file)
			}
		}
	}
}

func TestChaosFormat(t *testing.T) {
	l, err := ReadFile(filepath.Join("testdata", "chaos.jsonl"), "")
	require.NoError(t, err)
	assert.Equal(t, Stats{Lines: 8, Parsed: 8}, l.Stats)
	var kinds []Kind
	for _, ev := range l.Events {
		kinds = append(kinds, ev.Kind)
	}
	assert.Equal(t, []Kind{KindStart, KindRole, KindRole, KindVote, KindRole, KindCommit, KindApply, KindStop}, kinds)
	assert.Equal(t, Event{Time: l.Events[4].Time, Node: "n1", Kind: KindRole, Role: Leader, Term: 2, File: l.Path, Line: 5}, l.Events[4])
	assert.Equal(t, "n1", l.Events[3].For)
	assert.Equal(t, 3, l.Events[6].Index)
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	all := strings.Join(FormatNames(), ", ")
	cases := []struct {
		path, format, want string
	}{
		{write("empty", ""), "", "empty: empty file (nothing to read in any format: " + all + ")"},
		{write("blank", "\n  \n\n"), "", "blank: empty file"},
		{write("prose", "hello\nworld\n"), "", "prose: not in any known format (tried " + all + " on the first 64 lines; force one with --format)"},
		{write("forced", "hello\nworld\n"), "splay", "forced: no line is in format splay (tried splay)"},
		{write("x", "hello\n"), "klingon", `unknown format "klingon" (known: ` + all + ")"},
		{filepath.Join(dir, "missing"), "", "no such file or directory"},
	}
	for _, c := range cases {
		_, err := ReadFile(c.path, c.format)
		require.Error(t, err, c.path)
		assert.Contains(t, err.Error(), c.want)
	}
}

// Lines that do not parse in the middle of a known format are counted with
// their numbers, and the events around them are kept.
func TestUnparsedLinesAreCounted(t *testing.T) {
	in := "13:43:33.422806 [2] becomes Candidate (currentTerm=1); log={}\n" +
		"garbage\n\n" +
		"13:43:33.430000 [2] becomes Leader; term=1, nextIndex=map[]\n" +
		"\x00\xff\n"
	l, err := ReadBytes("mid.log", []byte(in), "")
	require.NoError(t, err)
	assert.Equal(t, Stats{Lines: 5, Parsed: 2, Unparsed: 2, FirstUnparsed: []int{2, 5}}, l.Stats)
	assert.Len(t, l.Events, 2)
	assert.Equal(t, "mid.log: 2 of 4 non-blank lines are not in format eliben (lines 2, 5)", l.Unparsed())

	var many strings.Builder
	many.WriteString(`{"time":"2026-01-02T10:00:00Z","node":"n1","event":"start"}` + "\n")
	for range 12 {
		many.WriteString(`{"time":"2026-01-02T10:00:00Z","node":"n1","event":"explode"}` + "\n")
	}
	l, err = ReadBytes("many.jsonl", []byte(many.String()), "")
	require.NoError(t, err)
	assert.Equal(t, 12, l.Stats.Unparsed)
	assert.Equal(t, []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, l.Stats.FirstUnparsed)
	assert.Contains(t, l.Unparsed(), "(lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, ...)")
}

// A table row whose time cell is not a time is one unparsed row, not a crash.
func TestTableBadRow(t *testing.T) {
	in := "│ TIME │ a          │ b          │\n" +
		"├──────┼────────────┼────────────┤\n" +
		"│ 10:00:00.000001 │ becomes Leader; term=3 │            │\n" +
		"├──────┼────────────┼────────────┤\n" +
		"│ noon │ becomes Dead │            │\n" +
		"└──────┴────────────┴────────────┘\n"
	evs, st, err := tableParser{}.Parse(strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, []int{5}, st.FirstUnparsed)
	require.Len(t, evs, 1)
	assert.Equal(t, Event{Time: evs[0].Time, Node: "a", Kind: KindRole, Role: Leader, Term: 3, Line: 3}, evs[0])
}

func TestSplayCandidateTermIsTheNextTerm(t *testing.T) {
	evs, _, err := splayParser{}.Parse(strings.NewReader("2019-06-04 06:53:40.7973 (6)  ANIM STATE 5 : candidate : 7.0\n"))
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, 8, evs[0].Term)
}

func TestEtcdPreCandidate(t *testing.T) {
	evs, _, err := etcdParser{}.Parse(strings.NewReader("raft2021/05/06 22:26:15 INFO: 3 became pre-candidate at term 4\n"))
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, Event{Time: evs[0].Time, Node: "3", Kind: KindRole, Role: Candidate, Term: 5, Line: 1}, evs[0])
}

func TestCourseTermTooLargeIsUnparsed(t *testing.T) {
	evs, st, err := courseParser{}.Parse(strings.NewReader("2024/05/19 09:50:28 server[2]has vote for himself, Term is:99999999999999999999\n"))
	require.NoError(t, err)
	assert.Empty(t, evs)
	assert.Equal(t, []int{1}, st.FirstUnparsed)
}
