package eventlog

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// slogLine is the line log/slog's JSON handler writes for e, as the Writer
// once wrote them: the reference the hand-written encoder must match.
func slogLine(t *testing.T, e Event, node string) []byte {
	var out bytes.Buffer
	h := slog.NewJSONHandler(&out, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		switch a.Key {
		case slog.TimeKey:
			return slog.String("time", a.Value.Time().UTC().Format(time.RFC3339Nano))
		case slog.MessageKey:
			return slog.String("event", a.Value.String())
		case slog.LevelKey:
			return slog.Attr{}
		}
		return a
	}}).WithAttrs([]slog.Attr{slog.String("node", node)})
	r := slog.NewRecord(e.Time, slog.LevelInfo, string(e.Event), 0)
	var fields map[string]any
	raw := e.appendLine(nil, node)
	require.NoError(t, json.Unmarshal(raw, &fields), "%s", raw)
	// The fields in the order appendLine wrote them, from the line itself.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_, _ = dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		v, _ := dec.Token()
		switch k {
		case "time", "event", "node":
			continue
		}
		switch v := v.(type) {
		case json.Number:
			n, err := v.Int64()
			require.NoError(t, err)
			r.AddAttrs(slog.Int64(k.(string), n))
		case string:
			r.AddAttrs(slog.String(k.(string), v))
		}
	}
	require.NoError(t, h.Handle(context.Background(), r))
	return out.Bytes()
}

// TestLinesMatchSlog: the encoder writes the bytes log/slog's JSON handler
// wrote for every kind (the format readers and older files share), and
// strings that need escaping decode back to what was written.
func TestLinesMatchSlog(t *testing.T) {
	evs := life(time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("x", 3600)))
	evs = append(evs, Event{Time: evs[0].Time, Event: "custom", Term: 4, Hash: "ab", Index: 9})
	for _, e := range evs {
		got := e.appendLine(nil, "n1")
		require.Equal(t, string(slogLine(t, e, "n1")), string(got))
	}

	odd := Event{Time: evs[0].Time, Event: KindVote, Term: 1, For: "n\"1<\\>\t\u00e9"}
	var back struct {
		For  string `json:"for"`
		Node string `json:"node"`
	}
	require.NoError(t, json.Unmarshal(odd.appendLine(nil, "n&2"), &back))
	require.Equal(t, odd.For, back.For)
	require.Equal(t, "n&2", back.Node)
	ev, err := ParseLine(bytes.TrimSpace(odd.appendLine(nil, "n&2")))
	require.NoError(t, err)
	require.Equal(t, odd.For, ev.For)
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
