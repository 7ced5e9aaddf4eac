package history

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The three lines docs/FORMATS.md shows, byte for byte.
const contractExample = `{"index":0,"time":1204331,"process":0,"type":"invoke","f":"write","key":"k1","value":3}
{"index":1,"time":3088210,"process":0,"type":"ok","f":"write","key":"k1","value":3,"node":"n2"}
{"index":2,"time":3100021,"process":"nemesis","type":"info","f":"start-partition","value":{"n1":["n4","n5"]}}
`

func TestOpMarshalMatchesContract(t *testing.T) {
	ops := History{
		{Index: 0, Time: 1204331, Process: 0, Type: Invoke, F: "write", Key: "k1", Value: json.RawMessage("3")},
		{Index: 1, Time: 3088210, Process: 0, Type: OK, F: "write", Key: "k1", Value: json.RawMessage("3"), Node: "n2"},
		{Index: 2, Time: 3100021, Process: NemesisProcess, Type: Info, F: "start-partition",
			Value: json.RawMessage(`{"n1":["n4","n5"]}`)},
	}
	var out []byte
	for _, op := range ops {
		b, err := json.Marshal(op)
		require.NoError(t, err)
		out = append(append(out, b...), '\n')
	}
	assert.Equal(t, contractExample, string(out))
}

func TestOpMarshalRefusesInvalidFields(t *testing.T) {
	_, err := json.Marshal(Op{F: "read"})
	assert.ErrorContains(t, err, "type")
	_, err = json.Marshal(Op{Type: OK, F: "read", Process: -2})
	assert.ErrorContains(t, err, "process -2")
	_, err = json.Marshal(Op{Type: OK, F: "read", Value: json.RawMessage("{")})
	assert.ErrorContains(t, err, "value")
}

func TestStringsNeedingEscapesRoundTrip(t *testing.T) {
	for _, s := range []string{`quote"`, `back\slash`, "tab\t", "nl\n", "ünïcode", "<html>&", "\x00", "bad utf8 \xff"} {
		op := Op{Type: Invoke, F: s, Key: s, Node: s, Error: s}
		b, err := json.Marshal(op)
		require.NoError(t, err, "%q", s)
		var back wireOp
		require.NoError(t, json.Unmarshal(b, &back), "%s", b)
		want := string([]rune(s)) // invalid UTF-8 becomes U+FFFD, as encoding/json does
		assert.Equal(t, want, *back.F)
		assert.Equal(t, want, back.Key)
		assert.NotContains(t, string(b), "\n")
	}
}

func TestProcessJSON(t *testing.T) {
	for _, c := range []struct {
		p    Process
		json string
	}{{0, "0"}, {17, "17"}, {NemesisProcess, `"nemesis"`}} {
		b, err := json.Marshal(c.p)
		require.NoError(t, err)
		assert.Equal(t, c.json, string(b))
		var back Process
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, c.p, back)
	}
	for _, bad := range []string{"-1", "1.5", `"3"`, `"Nemesis"`, "null", "true", "1e3"} {
		var p Process
		assert.Error(t, json.Unmarshal([]byte(bad), &p), bad)
	}
	_, err := json.Marshal(Process(-5))
	assert.Error(t, err)
}

func TestTypeJSON(t *testing.T) {
	for _, ty := range []Type{Invoke, OK, Fail, Info} {
		b, err := json.Marshal(ty)
		require.NoError(t, err)
		var back Type
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, ty, back)
	}
	var ty Type
	assert.ErrorContains(t, json.Unmarshal([]byte(`"timeout"`), &ty), `unknown type "timeout"`)
	assert.Error(t, json.Unmarshal([]byte(`1`), &ty))
	_, err := json.Marshal(Type(0))
	assert.Error(t, err)
	assert.True(t, OK.Completes() && Fail.Completes() && Info.Completes())
	assert.False(t, Invoke.Completes())
}

func TestHasValue(t *testing.T) {
	assert.False(t, (&Op{}).HasValue())
	assert.False(t, (&Op{Value: json.RawMessage("null")}).HasValue())
	assert.True(t, (&Op{Value: json.RawMessage("0")}).HasValue())
}
