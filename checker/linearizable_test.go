package checker

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
)

// load parses a fixture under testdata.
func load(t testing.TB, name string) history.History {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	h, warnings, err := history.Parse(f)
	require.NoError(t, err, name)
	require.Empty(t, warnings, name)
	return h
}

func checkLinearizable(t testing.TB, h history.History, opts LinearizableOptions) (Validity, *LinearizableDetails) {
	t.Helper()
	res, err := Linearizable(context.Background(), h, opts)
	require.NoError(t, err)
	return res.Valid, res.Details.(*LinearizableDetails)
}

// The hand-written register histories: each file's name says its verdict;
// failing ones name the key and must be explained as below.
func TestLinearizableFixtures(t *testing.T) {
	cases := []struct {
		file    string
		valid   Validity
		invalid []string // keys
		explain string
		ops     []int64 // history indexes the explanation names
		// What porcupine's search explains (AlgorithmSearch), where it
		// differs from the write order's explanation.
		searchExplain string
		searchOps     []int64
	}{
		{file: "valid-sequential.jsonl", valid: Valid},
		{file: "valid-concurrent-writes-either-order.jsonl", valid: Valid},
		{file: "valid-info-write-appears.jsonl", valid: Valid},
		{file: "valid-info-write-never-appears.jsonl", valid: Valid},
		{file: "valid-cas-chain.jsonl", valid: Valid},
		{file: "valid-open-at-end.jsonl", valid: Valid},
		{file: "valid-info-cas.jsonl", valid: Valid},
		{file: "invalid-stale-read.jsonl", valid: Invalid, invalid: []string{"k3"}, ops: []int64{7, 2, 5},
			explain: "key k3: process 2 read 7 at 0.140–0.150 s, but 7 was overwritten by 9: process 1's write 9 began at 0.120 s, after process 0's write 7 was acknowledged at 0.110 s, and was acknowledged at 0.130 s"},
		{file: "invalid-lost-write.jsonl", valid: Invalid, invalid: []string{"k1"}, ops: []int64{2, 0},
			explain: "key k1: process 1 read nothing at 0.030–0.040 s, but process 0's write 5 had been acknowledged at 0.020 s, and a key once written is never empty again"},
		{file: "invalid-concurrent-writes-flip-flop.jsonl", valid: Invalid, invalid: []string{"k1"}, ops: []int64{8, 0, 6},
			explain:       "key k1: process 2 read 1 at 0.240–0.250 s, but 1 had already been replaced: its only writer, process 0's write 1, took effect by 0.100 s (when it was acknowledged), and after that, before this began, process 2 read 2 at 0.220–0.230 s",
			searchOps:     []int64{6, 1, 4},
			searchExplain: "key k1: process 2 read 2 at 0.220–0.230 s, but 2 had already been replaced: its only writer, process 1's write 2, took effect by 0.110 s (when it was acknowledged), and after that, before this began, process 2 read 1 at 0.200–0.210 s"},
		{file: "invalid-two-cas-from-one-value.jsonl", valid: Invalid, invalid: []string{"k1"}, ops: []int64{2, 3, 0},
			explain:       "key k1: process 1's cas 1→2 succeeded at 0.020–0.100 s, and process 2's cas 1→3 succeeded at 0.020–0.100 s, but 1 was written only once (by process 0's write 1) and only one operation can replace it",
			searchExplain: "key k1: no order of its 3 operations fits a single register: the longest legal order the search found places 2 of them, leaving the value "},
		{file: "invalid-info-write-appears-then-vanishes.jsonl", valid: Invalid, invalid: []string{"k1"}, ops: []int64{6, 0, 2, 4},
			explain: "key k1: process 3 read 1 at 0.300–0.310 s, but 1 was overwritten by 2: process 1's write 2 (outcome unknown) began at 0.020 s, after process 0's write 1 was acknowledged at 0.010 s, and process 2 read 2 at 0.200–0.210 s"},
		{file: "invalid-cas-chain.jsonl", valid: Invalid, invalid: []string{"k1"},
			explain: "key k1: process 2's cas 1→3 succeeded at 0.040–0.050 s, but 1 was overwritten by 2: process 1's cas 1→2 began at 0.020 s"},
		{file: "invalid-cas-on-absent-key.jsonl", valid: Invalid, invalid: []string{"k1"},
			explain: "key k1: process 0's cas 0→5 succeeded at 0.000–0.010 s, but no operation wrote 0 to this key"},
		{file: "invalid-read-before-write.jsonl", valid: Invalid, invalid: []string{"k1"},
			explain: "key k1: process 0 read 4 at 0.000–0.010 s, but process 1's write 4, the first operation that could write 4, was invoked only at 0.020 s"},
	}
	for _, c := range cases {
		for _, algorithm := range []string{AlgorithmAuto, AlgorithmSearch} {
			t.Run(c.file+"/"+algorithm, func(t *testing.T) {
				valid, d := checkLinearizable(t, load(t, "register/"+c.file),
					LinearizableOptions{Timeout: time.Minute, Algorithm: algorithm})
				assert.Equal(t, c.valid, valid)
				assert.Equal(t, c.invalid, d.InvalidKeys)
				assert.Empty(t, d.UnknownKeys)
				assert.Empty(t, d.NotUnique)
				decider := map[string]string{AlgorithmAuto: AlgorithmWriteOrder, AlgorithmSearch: AlgorithmSearch}[algorithm]
				assert.Equal(t, map[string]int{decider: d.Partitions}, d.DecidedBy)
				if c.explain == "" {
					assert.Empty(t, d.Failures)
					return
				}
				explain, ops := c.explain, c.ops
				if algorithm == AlgorithmSearch && c.searchExplain != "" {
					explain, ops = c.searchExplain, c.searchOps
				}
				require.Len(t, d.Failures, 1)
				assert.Contains(t, d.Failures[0].Explanation, explain)
				assert.False(t, d.Failures[0].Proven, "decided, not the argument alone")
				assert.Equal(t, decider, d.Failures[0].DecidedBy)
				if ops != nil {
					assert.Equal(t, ops, d.Failures[0].Ops)
				}
			})
		}
	}
}

func TestLinearizableDetailsCount(t *testing.T) {
	_, d := checkLinearizable(t, load(t, "register/valid-cas-chain.jsonl"), LinearizableOptions{})
	assert.Equal(t, 2, d.Partitions)
	assert.Equal(t, 7, d.Operations)
	assert.Equal(t, 2, d.DroppedFail)
	assert.Equal(t, 5, d.Searched)

	_, d = checkLinearizable(t, load(t, "register/valid-info-write-never-appears.jsonl"), LinearizableOptions{})
	assert.Equal(t, 1, d.DroppedInfo, "an unknown write nobody read is dropped")
	assert.Equal(t, 0, d.Unbounded)

	_, d = checkLinearizable(t, load(t, "register/valid-info-write-appears.jsonl"), LinearizableOptions{})
	assert.Equal(t, 0, d.DroppedInfo, "an unknown write somebody read is kept")
	assert.Equal(t, 0, d.Unbounded, "and bounded by its first reader")

	_, d = checkLinearizable(t, load(t, "register/valid-info-cas.jsonl"), LinearizableOptions{})
	assert.Equal(t, 1, d.DroppedInfo, "the cas 2→7 nobody observed")
}

func TestLinearizableRejectsMalformedOps(t *testing.T) {
	for _, c := range []struct{ f, value, want string }{
		{"write", `"seven"`, `write value "seven", want an integer`},
		{"write", `null`, "write value null, want an integer"},
		{"cas", `[1]`, "cas value [1], want [expected, new]"},
		{"cas", `[1,"x"]`, "want [expected, new]"},
		{"cas", `[1,2.5]`, "want two integers"},
		{"delete", `1`, `f "delete" is not a register operation`},
	} {
		h := history.History{
			{Index: 0, Time: 1, Type: history.Invoke, F: c.f, Key: "k", Value: []byte(c.value)},
			{Index: 1, Time: 2, Type: history.OK, F: c.f, Key: "k"},
		}
		_, err := Linearizable(context.Background(), h, LinearizableOptions{})
		assert.ErrorIs(t, err, ErrMalformed, c.f)
		assert.ErrorContains(t, err, c.want)
		assert.ErrorContains(t, err, "op 0 ("+c.f+` on key "k")`)
	}
	h := history.History{
		{Index: 0, Time: 1, Type: history.Invoke, F: "read", Key: "k"},
		{Index: 1, Time: 2, Type: history.OK, F: "read", Key: "k", Value: []byte(`[1]`)},
	}
	_, err := Linearizable(context.Background(), h, LinearizableOptions{})
	assert.ErrorContains(t, err, "read returned [1], want an integer or null")
}

// hardHistory is not linearizable, and no short argument shows it: 30
// writes are in flight, ten each of the values 1, 2 and 3, while one
// process reads 1, 2, 1, 2, ... 1: eleven reads of 1, each after a read of
// 2, need eleven writes of 1. Refuting it means trying the subsets of the
// writes before each read, far more than any test's timeout allows.
func hardHistory() history.History {
	var h history.History
	add := func(p int, typ history.Type, f, value string) {
		op := history.Op{Index: int64(len(h)), Time: int64(len(h)), Process: history.Process(p), Type: typ, F: f, Key: "k"}
		if value != "" {
			op.Value = []byte(value)
		}
		h = append(h, op)
	}
	const writers = 30
	for p := 0; p < writers; p++ {
		add(p, history.Invoke, "write", strconv.Itoa(1+p%3))
	}
	for r := 0; r < 21; r++ {
		add(writers, history.Invoke, "read", "")
		add(writers, history.OK, "read", strconv.Itoa(1+r%2))
	}
	for p := 0; p < writers; p++ {
		add(p, history.OK, "write", strconv.Itoa(1+p%3))
	}
	return h
}

func TestLinearizableTimeoutIsUnknownNeverValid(t *testing.T) {
	h := hardHistory()
	require.NoError(t, history.Validate(h))
	valid, d := checkLinearizable(t, h, LinearizableOptions{Timeout: 50 * time.Millisecond})
	assert.Equal(t, Unknown, valid)
	assert.Equal(t, []string{"k"}, d.UnknownKeys)
	assert.Equal(t, []string{"k"}, d.NotUnique, "its values are not unique: the write order cannot decide it")
	assert.Empty(t, d.DecidedBy)
	assert.Contains(t, d.Reason, "did not finish for 1 of 1 keys")
}

// A search that may not start because the deadline passed leaves its key
// unknown. The clock jumps an hour at every reading.
func TestLinearizableExpiredDeadlineIsUnknown(t *testing.T) {
	var mu sync.Mutex
	clock := time.Unix(0, 0)
	opts := LinearizableOptions{Timeout: time.Minute, Algorithm: AlgorithmSearch, now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Hour)
		return clock
	}}
	valid, d := checkLinearizable(t, load(t, "register/valid-concurrent-writes-either-order.jsonl"), opts)
	assert.Equal(t, Unknown, valid)
	assert.Equal(t, []string{"k1", "k2"}, d.UnknownKeys)

	// An anomaly a short argument proves is still found without a search.
	valid, d = checkLinearizable(t, load(t, "register/invalid-stale-read.jsonl"), opts)
	assert.Equal(t, Invalid, valid)
	assert.Equal(t, []string{"k3"}, d.InvalidKeys)
	assert.Equal(t, []string{"k1"}, d.UnknownKeys)
	require.Len(t, d.Failures, 1)
	assert.True(t, d.Failures[0].Proven)
	assert.Contains(t, d.Failures[0].Explanation, "this argument alone proves the anomaly")
}

func TestLinearizableCanceledContextIsUnknown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Linearizable(ctx, load(t, "register/valid-sequential.jsonl"), LinearizableOptions{})
	require.NoError(t, err)
	assert.Equal(t, Unknown, res.Valid)
}

func TestLinearizableEmptyHistoryIsValid(t *testing.T) {
	h := history.History{{Index: 0, Time: 1, Process: history.NemesisProcess, Type: history.Info, F: "kill"}}
	valid, d := checkLinearizable(t, h, LinearizableOptions{})
	assert.Equal(t, Valid, valid, "no operation, nothing can be wrong")
	assert.Equal(t, 0, d.Partitions)
}

func TestLinearizableExplainsAtMostMaxExplained(t *testing.T) {
	var h history.History
	for k := 0; k < 5; k++ { // five keys, each read 1 that nobody wrote
		key := "k" + strconv.Itoa(k)
		h = append(h,
			history.Op{Index: int64(len(h)), Time: int64(len(h)), Type: history.Invoke, F: "read", Key: key},
			history.Op{Index: int64(len(h) + 1), Time: int64(len(h) + 1), Type: history.OK, F: "read", Key: key, Value: []byte("1")})
	}
	valid, d := checkLinearizable(t, h, LinearizableOptions{MaxExplained: 2})
	assert.Equal(t, Invalid, valid)
	assert.Len(t, d.InvalidKeys, 5)
	assert.Len(t, d.Failures, 2)
}

// Porcupine only stops at its own timeout; a canceled context must stop a
// search that is already running, and leave its key unknown.
func TestLinearizableCancelStopsARunningSearch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := LinearizableOptions{onSearch: func(string) { cancel() }} // no timeout: only the cancel can stop it
	res, err := Linearizable(ctx, hardHistory(), opts)
	require.NoError(t, err)
	assert.Equal(t, Unknown, res.Valid)
	assert.Equal(t, []string{"k"}, res.Details.(*LinearizableDetails).UnknownKeys)
	assert.Contains(t, res.Details.(*LinearizableDetails).Reason, "before the check was canceled")
}

func TestLinearizableMemoryBudgetStopsASearch(t *testing.T) {
	valid, d := checkLinearizable(t, hardHistory(), LinearizableOptions{SearchMemory: 1})
	assert.Equal(t, Unknown, valid)
	assert.True(t, d.SearchMemoryExceeded)
	assert.Contains(t, d.Reason, "exceeded its memory budget")
}

// casArgs reads the recorder's shape directly and agrees with
// encoding/json on everything else.
func TestCasArgs(t *testing.T) {
	for _, c := range []struct {
		raw      string
		from, to int64
		err      string
	}{
		{raw: `[1,2]`, from: 1, to: 2},
		{raw: ` [ -3 , 0 ] `, from: -3, to: 0},
		{raw: `[9223372036854775807,-9223372036854775808]`, from: 1<<63 - 1, to: -1 << 63},
		{raw: `["1",2]`, from: 1, to: 2}, // encoding/json reads a quoted number into json.Number
		{raw: `[1,2,3]`, err: "[expected, new]"},
		{raw: `[1]`, err: "[expected, new]"},
		{raw: `{"a":1}`, err: "[expected, new]"},
		{raw: `[1,2] [3,4]`, err: "[expected, new]"},
		{raw: `[1.5,2]`, err: "two integers"},
		{raw: `[01,2]`, err: "[expected, new]"},
		{raw: `[9223372036854775808,1]`, err: "two integers"},
	} {
		from, to, err := casArgs([]byte(c.raw))
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("casArgs(%s) = %d, %d, %v, want error %q", c.raw, from, to, err, c.err)
			}
			continue
		}
		if err != nil || from != c.from || to != c.to {
			t.Errorf("casArgs(%s) = %d, %d, %v, want %d, %d", c.raw, from, to, err, c.from, c.to)
		}
	}
}
