package runreport

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"chaos/checker"
	"chaos/history"
	"chaos/testrun"
	"chaos/testrun/runrecord"
)

// BenchmarkReport1M measures what report.html costs `chaos check` on a
// history of 1,000,000 operations over 1,000 keys from 50 clients, with a
// kill and a restart every 1,000 operations (the shape of checker's
// BenchmarkCheckLinearizable1M): digesting the ops as the check hands
// them over (digest-s, Digest.Add on ops already decoded) and writing the
// page (page-s, WriteDigested); report-s is both. check-s is every check
// of testrun.Check on the same ops, also decoded (chaos check reads the
// file once for both). reread-s is Write, which reads history.jsonl again
// (`chaos run`'s report). Target (issue 40): report-s at most check-s for
// histories of 100k operations and more.
//
//	go test ./runreport -run '^$' -bench 'Report(1M|100k)' -benchtime 1x
func BenchmarkReport1M(b *testing.B) { benchmarkReport(b, 1_000_000) }

// BenchmarkReport100k is BenchmarkReport1M on 100,000 operations.
func BenchmarkReport100k(b *testing.B) { benchmarkReport(b, 100_000) }

func benchmarkReport(b *testing.B, ops int) {
	h := registerRun(ops, 1000, 50, 1000)
	dir := b.TempDir()
	if err := writeRun(dir, h); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		d := &Digest{}
		for i := range h {
			d.Add(&h[i])
		}
		digested := time.Now()
		if err := WriteDigested(dir, d); err != nil {
			b.Fatal(err)
		}
		written := time.Now()
		rep, err := testrun.Check(context.Background(), dir, h, testrun.CheckOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if lin := rep.Checks["linearizable"]; lin.Valid != checker.Valid {
			b.Fatalf("the generated history is not linearizable: %+v", lin.Details)
		}
		checked := time.Now()
		if err := Write(dir); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(digested.Sub(start).Seconds(), "digest-s")
		b.ReportMetric(written.Sub(digested).Seconds(), "page-s")
		b.ReportMetric(written.Sub(start).Seconds(), "report-s")
		b.ReportMetric(checked.Sub(written).Seconds(), "check-s")
		b.ReportMetric(time.Since(checked).Seconds(), "reread-s")
	}
	b.StopTimer()
	if st, err := os.Stat(filepath.Join(dir, ReportFile)); err == nil {
		b.ReportMetric(float64(st.Size())/(1<<20), "page-MB")
	}
}

// writeRun writes h and a results.json into dir, as a checked run has
// them.
func writeRun(dir string, h history.History) error {
	res, err := json.Marshal(runrecord.Results{RunSummary: runrecord.RunSummary{Name: "bench", Seed: 1}, Checks: map[string]json.RawMessage{}})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), res, 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	for i := range h {
		line, err := h[i].MarshalJSON()
		if err != nil {
			return err
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// registerRun generates a linearizable register history: ops operations
// over keys keys from clients clients, each invoking its next as its last
// completes (2.2 ms later on average); 40% reads, 40% writes of unique values, 20%
// cas; 7% fail, 1% info (after a second; the client then takes a new
// process), and a kill of n2 and its restart every faultEvery operations.
// The randomness is seeded: the history is the same every time.
func registerRun(ops, keys, clients, faultEvery int) history.History {
	rng := rand.New(rand.NewPCG(7, 11))
	h := make(history.History, 0, 2*ops+2*ops/faultEvery+2)
	next := make([]int64, clients)
	proc := make([]history.Process, clients)
	for c := range proc {
		proc[c] = history.Process(c)
	}
	for i := range ops {
		c := 0 // the client free first
		for j, t := range next {
			if t < next[c] {
				c = j
			}
		}
		start := next[c]
		lat := int64(200*time.Microsecond) + int64(rng.ExpFloat64()*float64(2*time.Millisecond))
		typ := history.OK
		switch r := rng.Float64(); {
		case r < 0.01:
			typ, lat = history.Info, int64(time.Second)
		case r < 0.08:
			typ = history.Fail
		}
		f := []string{history.FRead, history.FRead, history.FWrite, history.FWrite, history.FCAS}[rng.IntN(5)]
		key := fmt.Sprintf("k%d", rng.IntN(keys))
		h = append(h, history.Op{Time: start, Process: proc[c], Type: history.Invoke, F: f, Key: key},
			history.Op{Time: start + lat, Process: proc[c], Type: typ, F: f, Key: key})
		next[c] = start + lat + int64(rng.IntN(100_000))
		if typ == history.Info {
			proc[c] += history.Process(clients)
		}
		if i%faultEvery == faultEvery/2 {
			h = append(h, nem(0, float64(start)/1e9, history.FKill, `{"nodes":["n2"]}`),
				nem(0, float64(start+lat)/1e9, history.FStart, `{"nodes":["n2"]}`))
		}
	}
	slices.SortStableFunc(h, func(a, b history.Op) int { return int(a.Time - b.Time) })
	registerValues(h)
	return h
}

// registerValues fills in the values of h, ordered by time, so that it
// is linearizable: a write or cas takes effect when it completes ok (a
// cas on a key never written fails instead), a read returns what its key
// held when it was invoked. Indexes are set too.
func registerValues(h history.History) {
	state := map[string]int64{}
	readAt := map[history.Process]int64{} // a read in flight: what it saw; -1 for nothing
	invokedAt := map[history.Process]int{}
	next := int64(0)
	for i := range h {
		op := &h[i]
		op.Index = int64(i)
		if op.Process.IsNemesis() {
			continue
		}
		if op.Type == history.Invoke {
			invokedAt[op.Process] = i
			v, ok := state[op.Key]
			if !ok {
				v = -1
			}
			readAt[op.Process] = v
			next++
			op.Value = json.RawMessage(fmt.Sprint(next))
			if op.F == history.FCAS {
				op.Value = json.RawMessage(fmt.Sprintf("[%d,%d]", max(v, 0), next))
			}
			continue
		}
		inv := &h[invokedAt[op.Process]]
		registerEffect(op, inv, state, readAt[op.Process])
	}
}

// registerEffect applies the completion op of inv to state, and sets what
// a read returned (seen: the key's value at its invoke, -1 for none).
func registerEffect(op, inv *history.Op, state map[string]int64, seen int64) {
	switch {
	case op.F == history.FRead && op.Type == history.OK && seen >= 0:
		op.Value = json.RawMessage(fmt.Sprint(seen))
	case op.F == history.FRead:
	case op.Type != history.OK:
	case op.F == history.FWrite:
		var v int64
		json.Unmarshal(inv.Value, &v)
		state[op.Key] = v
	default:
		var ft [2]int64
		json.Unmarshal(inv.Value, &ft)
		if cur, ok := state[op.Key]; ok {
			inv.Value = json.RawMessage(fmt.Sprintf("[%d,%d]", cur, ft[1]))
			state[op.Key] = ft[1]
		} else {
			op.Type = history.Fail
		}
	}
}
