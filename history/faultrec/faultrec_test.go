package faultrec

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every op value of nemesis's golden fault records (made by each family
// of the registry on fakes, see nemesis's TestFaultRecordsGolden) decodes
// to its record type and marshals back to the same bytes.
func TestDecodeRoundTripsTheNemesisRecords(t *testing.T) {
	f, err := os.Open("../../nemesis/testdata/fault-records.golden")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "op ")
		if !ok {
			continue
		}
		op, raw, _ := strings.Cut(rest, " ")
		v, err := Decode(op, json.RawMessage(raw))
		require.NoError(t, err, op)
		b, err := json.Marshal(v)
		require.NoError(t, err, op)
		assert.Equal(t, raw, string(b), "%s (%T)", op, v)
		n++
	}
	require.NoError(t, sc.Err())
	require.Greater(t, n, 40)
}

func TestDecodeFailuresAndHeals(t *testing.T) {
	for _, c := range []struct {
		f, raw string
		want   Value
	}{
		{"start-kill", `{"error":"n3: kill: exited 1","op":"kill","value":{"nodes":["n3"]}}`,
			Failure{Error: "n3: kill: exited 1", Op: "kill", Value: json.RawMessage(`{"nodes":["n3"]}`)}},
		{"start-partition", `{"error":"n2: iptables: exited 1"}`, Failure{Error: "n2: iptables: exited 1"}},
		{"stop-pause", `{"error":"e","op":"off-pause","value":null}`, Failure{Error: "e", Op: "off-pause", Value: json.RawMessage("null")}},
		{"heal", `{"error":"heal pause: x","faults":["pause"]}`, Heal{Error: "heal pause: x", Faults: []string{"pause"}}},
		{"heal", `{"leftovers":{"n1":["chaos-node process 4242, paused"]}}`,
			Heal{Leftovers: map[string][]string{"n1": {"chaos-node process 4242, paused"}}}},
	} {
		v, err := Decode(c.f, json.RawMessage(c.raw))
		require.NoError(t, err, c.raw)
		assert.Equal(t, c.want, v, c.raw)
		b, err := json.Marshal(v)
		require.NoError(t, err)
		assert.Equal(t, c.raw, string(b))
	}
}

// A value of another shape is an error that names the op; an op of no
// family is ErrUnknownOp.
func TestDecodeSaysWhy(t *testing.T) {
	for _, c := range []struct{ f, raw, want string }{
		{"kill", `{"nodes":"n1"}`, "kill: json: cannot unmarshal string into Go struct field Process.nodes of type []string"},
		{"kill", `["n1"]`, `kill: the value ["n1"] is no object`},
		{"start-partition", `{"groups":[["n1"],["n2","n3"]]}`, `start-partition: partition: node "groups": json: cannot unmarshal array into Go value of type string`},
		{"stop-partition", `null`, "stop-partition: the value null is no object"},
		{"clock-bump", ``, "clock-bump: no value"},
		{"start-figure8", `{"lone_writes":true}`, "start-figure8: want a count or a reason: json: cannot unmarshal bool into Go value of type int"},
	} {
		_, err := Decode(c.f, json.RawMessage(c.raw))
		assert.EqualError(t, err, c.want, c.raw)
	}
	_, err := Decode("on-hang", json.RawMessage(`{}`))
	assert.True(t, errors.Is(err, ErrUnknownOp), "%v", err)
}

// The types whose keys are many are declared in key order, which is the
// order encoding/json writes a map in: the order of the bytes before the
// types.
func TestFieldsInKeyOrder(t *testing.T) {
	for _, v := range []any{Targeted{}, Round{}, Member{}, Failure{}, Heal{}} {
		typ := reflect.TypeOf(v)
		var keys []string
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			keys = append(keys, name)
		}
		assert.True(t, slices.IsSorted(keys), "%s: %v", typ.Name(), keys)
	}
}

func TestPartitionOmitsEmptyAndRejectsAMechanismNode(t *testing.T) {
	b, err := json.Marshal(Partition{})
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(b))
	b, err = json.Marshal(Partition{Mechanism: "hooks", Grudge: map[string][]string{"n2": {"n1"}, "n1": nil}})
	require.NoError(t, err)
	assert.Equal(t, `{"mechanism":"hooks","n2":["n1"]}`, string(b))
	_, err = json.Marshal(Partition{Grudge: map[string][]string{"mechanism": {"n1"}}})
	assert.ErrorContains(t, err, `a node is called "mechanism"`)
}

func TestOpFamily(t *testing.T) {
	for _, c := range []struct {
		f     string
		fam   string
		phase Phase
	}{
		{"kill", NameKill, Begins}, {"start", NameKill, Ends}, {"start-kill", NameKill, Begins}, {"stop-kill", NameKill, Ends},
		{"resume", NamePause, Ends}, {"clock-reset", NameClock, Ends}, {"start-partition", NamePartition, Begins},
		{"stop-figure8", NameFigure8, Ends}, {"start-eio", NameEIO, Begins},
	} {
		fam, phase, ok := OpFamily(c.f)
		assert.True(t, ok, c.f)
		assert.Equal(t, c.fam, fam.Name, c.f)
		assert.Equal(t, c.phase, phase, c.f)
	}
	_, _, ok := OpFamily("heal")
	assert.False(t, ok)
	assert.Equal(t, "clock", StartedFamily("clock-bump"))
	assert.Equal(t, "hang", StartedFamily("start-hang"))
	assert.Equal(t, "", StartedFamily("start"))
	assert.Equal(t, "", StartedFamily("stop-kill"))
}
