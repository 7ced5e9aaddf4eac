package eventlog

import (
	"encoding/json"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lines of Writer's shape take the fast path and give what encoding/json
// gives; anything else falls back to encoding/json, errors included.
func TestDecodeFastPathAndFallback(t *testing.T) {
	d := newDecoder()
	line := `{"time":"2026-11-24T19:05:03.734123456Z","node":"n1","event":"role","role":"leader","term":7,"leader":"n1"}`
	_, ok := d.fast([]byte(line))
	require.True(t, ok, "Writer's shape takes the fast path")
	ev, err := d.parseLine([]byte(line))
	require.NoError(t, err)
	var want Event
	require.NoError(t, json.Unmarshal([]byte(line), &want))
	assert.Equal(t, want, ev)
	again, _ := d.parseLine([]byte(line))
	assert.Same(t, unsafe.StringData(ev.Node), unsafe.StringData(again.Node), "node names are interned")

	for _, other := range []string{
		`{"time":"2026-11-24T19:05:03Z","Node":"n1","event":"stop"}`,               // a key in another case
		`{"time":"2026-11-24T19:05:03Z","node":"n\u0031","event":"stop"}`,          // an escape
		`{"time":"2026-11-24T19:05:03Z","node":"n1","event":"stop","extra":[1,2]}`, // an unknown key
		`{"time":"2026-11-24T19:05:03Z","node":"n1","node":"n2","event":"stop"}`,   // a repeated key
	} {
		_, ok := d.fast([]byte(other))
		assert.False(t, ok, other)
		got, err := d.parseLine([]byte(other))
		require.NoError(t, err, other)
		var want Event
		require.NoError(t, json.Unmarshal([]byte(other), &want))
		assert.Equal(t, want, got, other)
	}
	for _, bad := range []string{
		`{"time":"2026-11-24T19:05:03Z","node":"n1","event":"vote","term":-1}`,
		`{"time":"yesterday","node":"n1","event":"stop"}`,
		`{"time":"2026-11-24T19:05:03Z","node":"n1","event":"apply","index":1.0e1}`,
		`{"time":"2026-11-24T19:05:03Z","node":"n1","event":"stop"`,
	} {
		_, err := d.parseLine([]byte(bad))
		var want Event
		assert.Equal(t, json.Unmarshal([]byte(bad), &want), err, bad)
	}
}

// FuzzParseLineAgrees checks the fast path against encoding/json: every
// line the fast path accepts decodes to the same Event both ways.
func FuzzParseLineAgrees(f *testing.F) {
	f.Add([]byte(`{"time":"2026-11-24T19:05:03.734123456Z","node":"n1","event":"apply","index":12,"term":3,"hash":"cbf29ce484222325"}`))
	f.Add([]byte(`{"time":"2026-11-24T19:05:03Z","node":"n2","event":"start","term":0,"entries":0,"bugs":"forget-vote,lease-read"}`))
	f.Add([]byte(`{"time":"2026-11-24T19:05:03Z","node":"n2","event":"start","term":3,"for":"none","index":9,"entries":4,"truncated":-1,"bugs":""}`))
	f.Add([]byte(` { "time" : "2026-11-24T19:05:03+01:00" , "node":"n3","event":"vote","term":18446744073709551615,"for":"n1"} `))
	f.Add([]byte(`{"time":"2026-11-24T19:05:03Z","node":"ñ","event":"role","role":"pre-candidate","term":01}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := newDecoder().fast(line)
		if !ok {
			return
		}
		var slow Event
		if err := json.Unmarshal(line, &slow); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json says %v", line, err)
		}
		if !fast.Time.Equal(slow.Time) || fast.Time.String() != slow.Time.String() {
			t.Fatalf("%q: time %v, encoding/json %v", line, fast.Time, slow.Time)
		}
		fast.Time = slow.Time
		if fast != slow {
			t.Fatalf("%q: fast path %+v, encoding/json %+v", line, fast, slow)
		}
	})
}
