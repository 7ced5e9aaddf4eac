package history

import (
	"bytes"
	"fmt"
	"testing"
)

// benchHistory writes n register operations (an invoke and a completion
// each) over 1,000 keys from 50 processes, as the recorder writes them.
func benchHistory(n int) []byte {
	var b bytes.Buffer
	var t int64
	for i := range n {
		p, key := i%50, fmt.Sprintf("k%d", i%1000)
		t += 1000
		op := Op{Index: int64(2 * i), Time: t, Process: Process(p), Type: Invoke, F: FWrite, Key: key,
			Value: []byte(fmt.Sprint(i + 1))}
		b.Write(op.appendJSON(nil))
		b.WriteByte('\n')
		t += 1000
		op = Op{Index: int64(2*i + 1), Time: t, Process: Process(p), Type: OK, F: FWrite, Key: key,
			Value: []byte(fmt.Sprint(i + 1)), Node: fmt.Sprintf("n%d", p%5+1)}
		b.Write(op.appendJSON(nil))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// BenchmarkParse measures the history decoder on 200,000 operations
// (400,000 lines); lines/s is the figure to compare with the event log's.
func BenchmarkParse(b *testing.B) {
	data := benchHistory(200_000)
	lines := bytes.Count(data, []byte("\n"))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
