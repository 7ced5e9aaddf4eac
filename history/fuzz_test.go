package history

import (
	"bytes"
	"testing"
)

// FuzzParse checks that Parse never panics or hangs, that what it accepts is
// a valid history, and that writing an accepted history out and parsing it
// again gives the same history. Seeds: testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(contractExample))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, warnings, err := Parse(bytes.NewReader(data))
		if err != nil {
			if h != nil {
				t.Fatalf("error %v with a non-nil history", err)
			}
			if bytes.ContainsRune([]byte(err.Error()), '\n') {
				t.Fatalf("error is more than one line: %q", err)
			}
			return
		}
		if len(warnings) > 0 && (len(data) == 0 || data[len(data)-1] == '\n') {
			t.Fatalf("warning %v on input that ends with a newline", warnings)
		}
		if err := Validate(h); err != nil {
			t.Fatalf("Parse accepted an invalid history: %v", err)
		}
		var out []byte
		for i := range h {
			out = append(h[i].appendJSON(out), '\n')
		}
		again, warnings, err := Parse(bytes.NewReader(out))
		if err != nil || len(warnings) > 0 {
			t.Fatalf("re-parse of %q: %v %v", out, err, warnings)
		}
		if len(again) != len(h) {
			t.Fatalf("re-parse gave %d ops, want %d", len(again), len(h))
		}
		for i := range h {
			a, b := h[i], again[i]
			if a.Index != b.Index || a.Time != b.Time || a.Process != b.Process || a.Type != b.Type ||
				a.F != b.F || a.Key != b.Key || a.Node != b.Node || a.Error != b.Error ||
				!bytes.Equal(a.Value, b.Value) {
				t.Fatalf("op %d changed in a round trip: %+v became %+v", i, a, b)
			}
		}
	})
}

// FuzzDecodeAgrees checks the decoder's fast path against encoding/json:
// every line the fast path accepts must decode to the same op both ways.
func FuzzDecodeAgrees(f *testing.F) {
	for _, line := range bytes.Split([]byte(contractExample), []byte("\n")) {
		f.Add(line)
	}
	f.Add([]byte(`{"index":0,"time":-0,"process":0,"type":"invoke","f":"read","value":null}`))
	f.Add([]byte(` { "index" : 9223372036854775807 , "time":1,"process":"nemesis","type":"info","f":"kill","value":[ "n1" , {"a":"}"} ] } `))
	f.Add([]byte(`{"index":1,"time":2,"process":3,"type":"ok","f":"wr\u00e9","Key":"k","value":"x\"y"}`))
	f.Add([]byte(`{"index":01,"time":2,"process":3,"type":"ok","f":"ünï","key":"k","error":""}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := newDecoder().fast(line)
		if !ok {
			return
		}
		slow, err := decodeOp(line)
		if err != nil {
			t.Fatalf("fast path accepted %q, encoding/json says %v", line, err)
		}
		if fast.Index != slow.Index || fast.Time != slow.Time || fast.Process != slow.Process ||
			fast.Type != slow.Type || fast.F != slow.F || fast.Key != slow.Key || fast.Node != slow.Node ||
			fast.Error != slow.Error || !bytes.Equal(fast.Value, slow.Value) {
			t.Fatalf("%q: fast path %+v, encoding/json %+v", line, fast, slow)
		}
	})
}
