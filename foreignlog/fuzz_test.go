package foreignlog

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzParser checks the invariants every parser keeps on any input: it
// does not panic, its counts add up, events point at real lines and carry
// a known kind and role, and the analysis and rendering of its events do
// not fail.
func fuzzParser(f *testing.F, p Parser, testdata string, seeds ...string) {
	data, err := os.ReadFile(filepath.Join("testdata", testdata))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(data))
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		evs, st, err := p.Parse(strings.NewReader(in))
		if err != nil {
			return // only an unreadable input (a line over 16 MiB) fails
		}
		if st.Parsed < 0 || st.Unparsed < 0 || st.Parsed+st.Unparsed > st.Lines {
			t.Fatalf("stats do not add up: %+v", st)
		}
		if len(st.FirstUnparsed) > min(st.Unparsed, maxFirstUnparsed) {
			t.Fatalf("%d first unparsed lines of %d", len(st.FirstUnparsed), st.Unparsed)
		}
		prev := 0
		for _, n := range st.FirstUnparsed {
			if n <= prev || n > st.Lines {
				t.Fatalf("unparsed line numbers %v out of order or range (%d lines)", st.FirstUnparsed, st.Lines)
			}
			prev = n
		}
		for _, ev := range evs {
			if ev.Line < 1 || ev.Line > st.Lines {
				t.Fatalf("event at line %d of %d", ev.Line, st.Lines)
			}
			if _, ok := map[Kind]bool{KindRole: true, KindVote: true, KindStart: true, KindStop: true, KindCrash: true,
				KindDisconnect: true, KindReconnect: true, KindCommit: true, KindApply: true, KindSnapshot: true,
				KindRestore: true, KindNote: true, KindConf: true}[ev.Kind]; !ok {
				t.Fatalf("unknown kind %q", ev.Kind)
			}
			if ev.Kind == KindRole && ev.Role != Leader && ev.Role != Follower && ev.Role != Candidate {
				t.Fatalf("unknown role %q", ev.Role)
			}
		}
		r := NewReport(Log{Path: "fuzz", Format: p.Name(), Stats: st, Events: evs})
		Summary(io.Discard, r)
		TimelineText(io.Discard, r)
		var b bytes.Buffer
		if err := HTML(&b, []Report{r}); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzParseChaos(f *testing.F) {
	fuzzParser(f, chaosParser{}, "chaos.jsonl",
		`{"time":"2026-01-02T10:00:00Z","node":"n1","event":"role","role":"king","term":1}`,
		`{"time":"2026-01-02T10:00:00Z","node":"n1","event":"role","role":"leader","term":-3}`+"\n{",
		`{"time":null,"node":"","event":"stop"}`,
		`{"time":"2026-01-02T10:00:00Z","node":"n1","event":"conf","index":3,"term":1,"change":"remove-node n2","voters":"n1,,n3","learners":""}`)
}

func FuzzParseSplay(f *testing.F) {
	fuzzParser(f, splayParser{}, "splay.txt",
		"2019-06-04 06:53:40.7973 (6)  ANIM STATE 5 : candidate : 99999999999999999999\n",
		"2019-06-04 06:53:40.7973 (6)  CRASH NOW \n2019-13-04 06:53:40.7973 (6)  ANIM START 1\n")
}

func FuzzParseTable(f *testing.F) {
	fuzzParser(f, tableParser{}, "table.txt",
		"│ TIME │ a │\n├─┤\n│ 10:00:00.1 │ becomes Leader; term=1 │\n│ │ x │ y │\n",
		"│\n││\n│ TIME │\n└\n")
}

func FuzzParseEtcdTrace(f *testing.F) {
	fuzzParser(f, etcdParser{}, "etcd.txt",
		"raft2021/05/06 22:26:15 INFO: 1 became leader at term 99999999999999999999\n",
		"raft2021/05/06 22:26:15 INFO: 2 [logterm: 9, index: 11, vote: 0] cast MsgVote for 1 [logterm: 9, index: 11] at term 10\nIgnored event {\n",
		"raft2021/05/06 22:26:15 INFO: 1 switched to configuration voters=(1 99999999999999999999) learners=(x)\n"+
			"raft2021/05/06 22:26:15 INFO: 1 switched to configuration voters=(1 2)&&(1) learners=(3)\n")
}

func FuzzParseCourse(f *testing.F) {
	fuzzParser(f, courseParser{}, "course.txt",
		"2024/05/19 09:50:30 server[2], become a leader, got 3 tickets\n",
		"2024/05/19 09:50:28 server[0]begin a new ticker, local state is:7, local Term is:1\n    cont\n")
}

func FuzzParseEliben(f *testing.F) {
	fuzzParser(f, elibenParser{}, "eliben.txt",
		"13:43:33.422806 [2] [TEST]Disconnect 1\n13:43:33.422806 [2] [TEST]Reconnect 1\n",
		"99:99:99.9 [1] becomes Leader; term=1\n")
}
