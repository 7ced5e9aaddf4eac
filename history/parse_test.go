package history

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseContractExample(t *testing.T) {
	h, warnings, err := Parse(strings.NewReader(contractExample))
	require.NoError(t, err)
	assert.Empty(t, warnings)
	require.Len(t, h, 3)
	assert.Equal(t, Op{Index: 1, Time: 3088210, Process: 0, Type: OK, F: "write", Key: "k1",
		Value: []byte("3"), Node: "n2"}, h[1])
	assert.Equal(t, NemesisProcess, h[2].Process)
	assert.JSONEq(t, `{"n1":["n4","n5"]}`, string(h[2].Value))
}

func TestParseSkipsTornFinalLine(t *testing.T) {
	for _, torn := range []string{`{"index":3,"ti`, `{`, `{"index":3,"time":5,"process":0,"type":"ok","f":"wr`, "   "} {
		h, warnings, err := Parse(strings.NewReader(contractExample + torn))
		require.NoError(t, err, torn)
		assert.Len(t, h, 3)
		require.Len(t, warnings, 1)
		assert.Equal(t, 4, warnings[0].Line)
		assert.Contains(t, warnings[0].String(), "line 4: torn final line skipped")
	}
}

func TestParseAcceptsFinalLineWithoutNewline(t *testing.T) {
	h, warnings, err := Parse(strings.NewReader(strings.TrimSuffix(contractExample, "\n")))
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Len(t, h, 3)
}

func TestParseKeepsOpenOperations(t *testing.T) {
	h, _, err := Parse(strings.NewReader(contractExample +
		`{"index":3,"time":3100022,"process":1,"type":"invoke","f":"read","key":"k1","value":null}` + "\n"))
	require.NoError(t, err)
	require.Len(t, h, 4)
	assert.True(t, h.Pairs()[1].Open())
}

func TestParseErrorsNameTheLine(t *testing.T) {
	const invoke0 = `{"index":0,"time":1,"process":0,"type":"invoke","f":"read"}` + "\n"
	cases := []struct {
		name, input, want string
	}{
		{"empty file", "", "history is empty: no complete op"},
		{"only a torn line", `{"ind`, "history is empty"},
		{"not JSON", invoke0 + "hello\n", "line 2: not JSON: invalid character 'h'"},
		{"not an object", invoke0 + "[1,2]\n", "line 2: not a JSON object"},
		{"empty line", invoke0 + "\n" + invoke0, "line 2: empty line"},
		{"torn line in the middle", `{"index":0,` + "\n" + invoke0, "line 1: not JSON"},
		{"unknown type", `{"index":0,"time":1,"process":0,"type":"timeout","f":"read"}` + "\n",
			`line 1: unknown type "timeout"`},
		{"missing type", `{"index":0,"time":1,"process":0,"f":"read"}` + "\n", `line 1: missing "type"`},
		{"missing index", `{"time":1,"process":0,"type":"invoke","f":"read"}` + "\n", `line 1: missing "index"`},
		{"missing time", `{"index":0,"process":0,"type":"invoke","f":"read"}` + "\n", `line 1: missing "time"`},
		{"missing process", `{"index":0,"time":1,"type":"invoke","f":"read"}` + "\n", `line 1: missing "process"`},
		{"missing f", `{"index":0,"time":1,"process":0,"type":"invoke"}` + "\n", `line 1: missing "f"`},
		{"bad process", `{"index":0,"time":1,"process":"client","type":"invoke","f":"read"}` + "\n",
			`line 1: process must be a non-negative integer or "nemesis"`},
		{"fractional index", `{"index":0.5,"time":1,"process":0,"type":"invoke","f":"read"}` + "\n", "line 1: "},
		{"completion without invoke", `{"index":0,"time":1,"process":4,"type":"ok","f":"read"}` + "\n",
			`line 1: invalid history: ok "read" for process 4, which has no open invoke`},
		{"two open ops", invoke0 + `{"index":1,"time":2,"process":0,"type":"invoke","f":"write","value":1}` + "\n",
			`line 2: invalid history: process 0 invokes "write" while its op 0 ("read") is still open`},
		{"index gap", invoke0 + `{"index":2,"time":2,"process":0,"type":"ok","f":"read"}` + "\n",
			"line 2: invalid history: index 2, want 1"},
		{"bad final line that is not torn", invoke0 + `{"index":1,"time":2,"process":0,"type":"ok","f":"write"}`,
			`line 2: invalid history: ok for process 0 has f "write"`},
	}
	for _, c := range cases {
		h, _, err := Parse(strings.NewReader(c.input))
		require.Error(t, err, c.name)
		assert.Nil(t, h, c.name)
		var pe *ParseError
		require.True(t, errors.As(err, &pe), c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
		assert.NotContains(t, err.Error(), "\n", "%s: the error is one line", c.name)
	}
}

func TestParseLongLines(t *testing.T) {
	// A final read of a big set is far longer than the reader's buffer.
	var b strings.Builder
	b.WriteString(`{"index":0,"time":1,"process":0,"type":"invoke","f":"read"}` + "\n")
	b.WriteString(`{"index":1,"time":2,"process":0,"type":"ok","f":"read","value":[0`)
	for i := 1; i < 400_000; i++ {
		b.WriteString(",1234567")
	}
	b.WriteString("]}\n")
	h, _, err := Parse(iotest.HalfReader(strings.NewReader(b.String())))
	require.NoError(t, err)
	require.Len(t, h, 2)
	assert.Greater(t, len(h[1].Value), 3_000_000)
}

func TestParseReadError(t *testing.T) {
	_, _, err := Parse(iotest.ErrReader(errors.New("disk on fire")))
	assert.ErrorContains(t, err, "line 1: read: disk on fire")
}

// Scan hands over, one at a time, exactly the ops Parse returns, with the
// same warnings; an error of its callback stops it and comes back as it is.
func TestScanMatchesParse(t *testing.T) {
	input := contractExample + `{"index":3,"ti`
	want, wantWarnings, err := Parse(strings.NewReader(input))
	require.NoError(t, err)
	var got History
	warnings, err := Scan(strings.NewReader(input), func(op *Op) error {
		got = append(got, *op)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, wantWarnings, warnings)

	stop := errors.New("enough")
	calls := 0
	_, err = Scan(strings.NewReader(input), func(*Op) error {
		calls++
		return stop
	})
	assert.Same(t, stop, err)
	assert.Equal(t, 1, calls)

	_, err = Scan(strings.NewReader(contractExample+"[1]\n"), func(*Op) error { return nil })
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 4, pe.Line)
}

// Lines are decoded in batches ahead of the validation; line numbers,
// errors and warnings stay exact across batch boundaries.
func TestScanAcrossBatches(t *testing.T) {
	lines := func(n int) string {
		var sb strings.Builder
		for i := range n {
			fmt.Fprintf(&sb, `{"index":%d,"time":%d,"process":%d,"type":"invoke","f":"read"}`+"\n", i, i, i)
		}
		return sb.String()
	}
	full := lines(batchLines)

	h, warnings, err := Parse(strings.NewReader(full + `{"index":`))
	require.NoError(t, err)
	assert.Len(t, h, batchLines)
	require.Len(t, warnings, 1)
	assert.Equal(t, batchLines+1, warnings[0].Line)

	_, _, err = Parse(strings.NewReader(full + full))
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, batchLines+1, pe.Line, "the first repeated index")

	_, _, err = Parse(strings.NewReader(full + "nope\n"))
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, batchLines+1, pe.Line)

	seen := 0
	_, err = Scan(strings.NewReader(lines(3*batchLines)), func(*Op) error {
		if seen++; seen == batchLines+3 {
			return errors.New("stop")
		}
		return nil
	})
	assert.EqualError(t, err, "stop")
}
