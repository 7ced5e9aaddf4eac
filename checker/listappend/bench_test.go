package listappend

import (
	"fmt"
	"testing"
)

// Benchmarks of Check on generated histories: 4 micro-operations per
// transaction, 50 processes, keys retired after 32 appends; valid, and
// with one of each plantable anomaly. The target is 1M transactions in
// 10 s and 2 GB on two cores. Run with -benchtime=1x: generating the
// history is outside the timer, so one iteration is one check.
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		for _, planted := range []bool{false, true} {
			b.Run(fmt.Sprintf("txns=%d/planted=%t", n, planted), func(b *testing.B) {
				h := benchHistory(b, n, planted)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					res, err := Check(h, Options{Model: StrictSerializable})
					if err != nil {
						b.Fatal(err)
					}
					want := Valid
					if planted {
						want = Invalid
					}
					if res.Valid != want || (planted && len(res.Anomalies) != 7) {
						b.Fatalf("verdict %s with %d anomalies, want %s", res.Valid, len(res.Anomalies), want)
					}
				}
			})
		}
	}
}

// benchHistory generates the history of BenchmarkCheck.
func benchHistory(b *testing.B, n int, planted bool) []Txn {
	b.Helper()
	h := Generate(1, n, 50, 32)
	if !planted {
		return h
	}
	for i, name := range PlantableAnomalies() {
		var err error
		if h, err = Plant(h, name, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
	return h
}
