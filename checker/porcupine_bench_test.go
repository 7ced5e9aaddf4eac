package checker

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"chaos/history"
)

// BenchmarkBarePorcupine1M is the yardstick of issue 40: porcupine alone,
// as a user of it would check the history of BenchmarkCheckLinearizable1M
// without chaos: read history.jsonl line by line with encoding/json, pair
// each invoke with its completion, and call porcupine.CheckOperations,
// partitioned by key, with a register model of its own (none of this
// package's code). Reports the seconds reading (read-s), checking
// (check-s) and both (total-s). `chaos check` of that history, report
// included, should take at most 0.3x total-s.
//
//	go test ./checker -run '^$' -bench BarePorcupine1M -benchtime 1x
func BenchmarkBarePorcupine1M(b *testing.B) {
	path := filepath.Join(b.TempDir(), "history.jsonl")
	if err := writeHistory(path, millionOps()); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		ops, err := bareRead(path)
		if err != nil {
			b.Fatal(err)
		}
		read := time.Now()
		if !porcupine.CheckOperations(bareModel(), ops) {
			b.Fatal("porcupine: not linearizable")
		}
		b.ReportMetric(read.Sub(start).Seconds(), "read-s")
		b.ReportMetric(time.Since(read).Seconds(), "check-s")
		b.ReportMetric(time.Since(start).Seconds(), "total-s")
	}
}

// bareLine is a line of history.jsonl as encoding/json reads it.
type bareLine struct {
	Time    int64           `json:"time"`
	Process json.RawMessage `json:"process"` // a number, or "nemesis"
	Type    string          `json:"type"`
	F       string          `json:"f"`
	Key     string          `json:"key"`
	Value   json.RawMessage `json:"value"`
}

// bareInput is one register operation as bareModel sees it: read returned
// v (none: never written), write v, or cas v to to; unknown: an info write
// or cas, which may or may not have taken effect.
type bareInput struct {
	key     string
	f       string
	v, to   int64
	none    bool
	unknown bool
}

// bareRead reads the history at path into porcupine's operations, as a
// user of porcupine would: a fail certainly did not happen and an info
// read constrains nothing, so both are left out; an info write or cas
// returns at infinity.
func bareRead(path string) ([]porcupine.Operation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ops []porcupine.Operation
	open := map[string]bareLine{} // process -> its invoke
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l bareLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, err
		}
		proc := string(l.Process)
		if l.Type == "invoke" {
			open[proc] = l
			continue
		}
		inv, ok := open[proc]
		if !ok {
			continue // a nemesis op
		}
		delete(open, proc)
		if l.Type == "fail" || (l.Type == "info" && l.F == history.FRead) {
			continue
		}
		in, err := bareInputOf(inv, l)
		if err != nil {
			return nil, err
		}
		ret := int64(math.MaxInt64)
		if l.Type == "ok" {
			ret = l.Time
		}
		ops = append(ops, porcupine.Operation{Input: in, Call: inv.Time, Return: ret})
	}
	return ops, sc.Err()
}

// bareInputOf is the operation invoked by inv that completed as out.
func bareInputOf(inv, out bareLine) (bareInput, error) {
	in := bareInput{key: inv.Key, f: inv.F, unknown: out.Type == "info"}
	switch inv.F {
	case history.FRead:
		in.none = len(out.Value) == 0 || string(out.Value) == "null"
		if !in.none {
			return in, json.Unmarshal(out.Value, &in.v)
		}
		return in, nil
	case history.FWrite:
		return in, json.Unmarshal(inv.Value, &in.v)
	}
	var ft [2]int64
	err := json.Unmarshal(inv.Value, &ft)
	in.v, in.to = ft[0], ft[1]
	return in, err
}

// bareState is a register's value; written is false before any write.
type bareState struct {
	v       int64
	written bool
}

// bareModel is a register per key, partitioned by key.
func bareModel() porcupine.Model {
	return porcupine.Model{
		Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
			byKey := map[string][]porcupine.Operation{}
			for _, op := range ops {
				k := op.Input.(bareInput).key
				byKey[k] = append(byKey[k], op)
			}
			out := make([][]porcupine.Operation, 0, len(byKey))
			for _, p := range byKey {
				out = append(out, p)
			}
			return out
		},
		Init: func() any { return bareState{} },
		Step: func(state, input, _ any) (bool, any) {
			s, in := state.(bareState), input.(bareInput)
			switch in.f {
			case history.FRead:
				return in.none == !s.written && (in.none || s.v == in.v), s
			case history.FWrite:
				return true, bareState{v: in.v, written: true}
			}
			if s.written && s.v == in.v {
				return true, bareState{v: in.to, written: true}
			}
			return in.unknown, s
		},
		Equal: func(a, b any) bool { return a.(bareState) == b.(bareState) },
	}
}
