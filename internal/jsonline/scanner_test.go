package jsonline

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestScannerNumbers(t *testing.T) {
	for _, c := range []struct {
		in   string
		u    uint64
		uOK  bool
		i    int64
		iOK  bool
		rest string
	}{
		{"0", 0, true, 0, true, ""},
		{"18446744073709551615", 1<<64 - 1, true, 0, false, ""},
		{"18446744073709551616", 0, false, 0, false, ""},
		{"9223372036854775807,", 1<<63 - 1, true, 1<<63 - 1, true, ","},
		{"-9223372036854775808", 0, false, -1 << 63, true, ""},
		{"01", 0, false, 0, false, ""},
		{"1.5", 0, false, 0, false, ""},
		{"2e3", 0, false, 0, false, ""},
		{"-", 0, false, 0, false, ""},
	} {
		s := New([]byte(c.in))
		u, ok := s.Uint()
		assert.Equal(t, c.uOK, ok, "Uint %q", c.in)
		if ok {
			assert.Equal(t, c.u, u, c.in)
			assert.Equal(t, c.rest, string(c.in[s.Pos():]), c.in)
		}
		s = New([]byte(c.in))
		i, ok := s.Int()
		assert.Equal(t, c.iOK, ok, "Int %q", c.in)
		if ok {
			assert.Equal(t, c.i, i, c.in)
		}
	}
}

func TestScannerPlainString(t *testing.T) {
	for in, want := range map[string]bool{`"abc"`: true, `"ünï"`: true, `"a\"b"`: false, "\"a\x01\"": false,
		"\"\xff\"": false, `"open`: false, `abc`: false} {
		_, ok := New([]byte(in)).PlainString()
		assert.Equal(t, want, ok, in)
	}
}

// Object reads a flat object member by member and refuses what a fast
// path must leave to encoding/json.
func TestScannerObject(t *testing.T) {
	read := func(line string) (map[string]uint64, bool) {
		s := New([]byte(line))
		got := map[string]uint64{}
		bits := map[string]uint{"a": 1, "b": 2}
		_, ok := s.Object(func(key []byte) (uint, bool) {
			n, ok := s.Uint()
			got[string(key)] = n
			return bits[string(key)], ok && bits[string(key)] != 0
		})
		return got, ok
	}
	got, ok := read(` { "a" : 1 , "b":2 } `)
	assert.True(t, ok)
	assert.Equal(t, map[string]uint64{"a": 1, "b": 2}, got)
	_, ok = read(`{}`)
	assert.True(t, ok)
	for _, bad := range []string{`{"a":1,}`, `{"a":1,"a":2}`, `{"a":1} x`, `{"c":1}`, `{"a":1`, `{"a" 1}`, `{"a":"1"}`, `[1]`} {
		_, ok := read(bad)
		assert.False(t, ok, bad)
	}
}

func TestScannerSkipValue(t *testing.T) {
	for in, rest := range map[string]string{`[1,{"a":"}"}],x`: ",x", `"s\"t" }`: " }", `12}`: "}", `{"a":[]}`: ""} {
		s := New([]byte(in))
		assert.True(t, s.SkipValue(), in)
		assert.Equal(t, rest, in[s.Pos():], in)
	}
	assert.False(t, New([]byte(`[1,2`)).SkipValue())
}
