package listappend

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// hist builds a history from transactions given by outcome and ops: each
// gets Index and Process equal to its position and the interval [0, 100],
// so all overlap and realtime order adds nothing unless a test sets times.
func hist(ts ...Txn) []Txn {
	for i := range ts {
		ts[i].Index, ts[i].Process = i, i
		if ts[i].Invoke == 0 && ts[i].Complete == 0 {
			ts[i].Complete = 100
		}
	}
	return ts
}

// ok, fail and info make a transaction of that outcome.
func ok(ops ...MicroOp) Txn   { return Txn{Type: OK, Ops: ops} }
func fail(ops ...MicroOp) Txn { return Txn{Type: Fail, Ops: ops} }
func info(ops ...MicroOp) Txn { return Txn{Type: Info, Ops: ops} }

// at sets t's interval.
func at(t Txn, invoke, complete int64) Txn {
	t.Invoke, t.Complete = invoke, complete
	return t
}

// ap and rd are short for AppendOp and ReadOp.
func ap(k string, v int64) MicroOp    { return AppendOp(k, v) }
func rd(k string, l ...int64) MicroOp { return ReadOp(k, l...) }
func check(t *testing.T, h []Txn, m Model) Result {
	t.Helper()
	res, err := Check(h, Options{Model: m})
	require.NoError(t, err)
	return res
}

// requireOnly asserts that res holds exactly the anomaly names given (each
// at least once) and is invalid.
func requireOnly(t *testing.T, res Result, names ...string) {
	t.Helper()
	require.Equal(t, names, res.AnomalyTypes, "anomalies: %s", explainAll(res))
	require.Equal(t, Invalid, res.Valid)
}

// requireValid asserts that res found nothing and is valid.
func requireValid(t *testing.T, res Result) {
	t.Helper()
	require.Empty(t, res.Anomalies, "anomalies: %s", explainAll(res))
	require.Empty(t, res.Undecided)
	require.Equal(t, Valid, res.Valid)
}

// explainAll renders every anomaly of res, for failure messages.
func explainAll(res Result) string {
	s := ""
	for _, a := range res.Anomalies {
		s += "\n" + a.Name + ": " + a.Explain()
	}
	return s
}

// itoa formats n in decimal.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
