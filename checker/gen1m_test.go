package checker

import (
	"bufio"
	"os"
	"testing"
)

// TestWriteMillionOpHistory writes the 1M-operation history of
// BenchmarkCheckLinearizable1M to $CHAOS_WRITE_1M (that of
// BenchmarkCheckLinearizableHotKey1M with CHAOS_WRITE_1M_HOT=1), for
// measuring `chaos check` on it (wall time, peak memory):
//
//	CHAOS_WRITE_1M=/tmp/h1m.jsonl go test ./checker -run TestWriteMillionOpHistory
//	/usr/bin/time -v chaos check /tmp/h1m.jsonl
func TestWriteMillionOpHistory(t *testing.T) {
	path := os.Getenv("CHAOS_WRITE_1M")
	if path == "" {
		t.Skip("set CHAOS_WRITE_1M to a path to write the history")
	}
	cfg := millionOps()
	if os.Getenv("CHAOS_WRITE_1M_HOT") != "" {
		cfg = hotKeyOps()
	}
	if err := writeHistory(path, cfg); err != nil {
		t.Fatal(err)
	}
}

// writeHistory writes the simulated history of cfg to path as
// history.jsonl.
func writeHistory(path string, cfg simConfig) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	for _, op := range simulate(cfg) {
		line, err := op.MarshalJSON()
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
