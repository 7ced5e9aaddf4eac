package checker

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"chaos/history"
)

// DefaultMaxExplained is how many failing keys get an explanation and a
// visualization when LinearizableOptions.MaxExplained is zero.
const DefaultMaxExplained = 20

// LinearizableOptions bound and shape the linearizability check.
type LinearizableOptions struct {
	// Timeout bounds the whole search. Keys not decided when it runs out
	// are unknown, and so is the verdict unless some key is invalid. Zero
	// means no bound. The deadline of ctx bounds the search too.
	Timeout time.Duration
	// VisualizationDir, if not empty, receives porcupine's HTML
	// visualization of each failing key, with the nemesis activity as
	// annotations. Files named key-*.html already there are removed first,
	// so the directory reflects this check only.
	VisualizationDir string
	// Parallelism is how many keys are searched at once; zero means
	// GOMAXPROCS.
	Parallelism int
	// SearchMemory bounds how many bytes the running searches may add to
	// the live heap; when they exceed it they are stopped and their keys
	// are unknown. Zero means DefaultSearchMemory.
	SearchMemory uint64
	// MaxExplained bounds how many failing keys are explained and
	// visualized; zero means DefaultMaxExplained. Every failing key is
	// listed regardless.
	MaxExplained int
	// Algorithm is AlgorithmAuto (or empty): each key whose written values
	// are unique is decided by writeOrder, in O(n log n), and the others
	// by porcupine's search; or AlgorithmSearch: porcupine's search for
	// every key, within Timeout and SearchMemory.
	Algorithm string

	now      func() time.Time // the clock deadlines are measured on; nil means time.Now
	onSearch func(key string) // called as each key's search starts; for tests
}

// AlgorithmAuto is LinearizableOptions.Algorithm's default: write order
// where a key's values are unique, search elsewhere.
const AlgorithmAuto = "auto"

// KnownAlgorithm reports whether a is a LinearizableOptions.Algorithm: auto,
// search, or empty (auto).
func KnownAlgorithm(a string) bool { return a == "" || a == AlgorithmAuto || a == AlgorithmSearch }

// LinearizableDetails is what Linearizable reports beside its verdict.
type LinearizableDetails struct {
	Algorithm  string `json:"algorithm"`  // the option: auto or search
	Partitions int    `json:"partitions"` // keys checked
	// DecidedBy counts the keys each algorithm decided (write-order,
	// search); keys left unknown count for neither.
	DecidedBy map[string]int `json:"decided_by"`
	// NotUnique lists the keys (sorted) some value of which was written by
	// two operations: the write order cannot decide them, the search did.
	NotUnique   []string     `json:"values_not_unique,omitempty"`
	Operations  int          `json:"operations"` // client operations in the history
	Searched    int          `json:"searched"`   // operations given to the search
	DroppedFail int          `json:"dropped_fail"`
	DroppedInfo int          `json:"dropped_info"`           // unknown reads, and unknown writes nobody observed
	Unbounded   int          `json:"info_unbounded"`         // unknown ops searched with no deadline
	InvalidKeys []string     `json:"invalid_keys,omitempty"` // sorted
	UnknownKeys []string     `json:"unknown_keys,omitempty"` // sorted; searches that timed out or never ran
	Failures    []KeyFailure `json:"failures,omitempty"`     // explanations, for at most MaxExplained keys
	Reason      string       `json:"reason,omitempty"`       // why the verdict is unknown
	// SearchMemoryExceeded is set when searches were stopped for using
	// more than SearchMemory.
	SearchMemoryExceeded bool    `json:"search_memory_exceeded,omitempty"`
	TimeoutS             float64 `json:"timeout_s"`  // 0: no bound
	DurationS            float64 `json:"duration_s"` // time the check took
}

// KeyFailure explains why one key is not linearizable.
type KeyFailure struct {
	Key         string `json:"key"`
	Explanation string `json:"explanation"`
	// Ops are the history indexes (of the invokes) of the ops the
	// explanation names.
	Ops []int64 `json:"ops"`
	// Visualization is the HTML file, relative to the parent of
	// VisualizationDir (where results.json lives).
	Visualization string `json:"visualization,omitempty"`
	// Proven is true when the search did not finish in time and the
	// anomaly was established from the explanation's argument alone.
	Proven bool `json:"proven_without_search,omitempty"`
	// DecidedBy is the algorithm that found the key not linearizable.
	DecidedBy string `json:"decided_by"`
}

// partition is the part of the history about one key.
type partition struct {
	key       string
	ops       []regOp  // every op kept by splitRegister
	search    []*regOp // the ops searched, after prepare
	dropped   int
	unbounded int
	result    porcupine.CheckResult // "" until decided
	decidedBy string                // AlgorithmWriteOrder or AlgorithmSearch; "" until decided
	witness   *woWitness            // why the write order found it invalid
}

// Linearizable checks a register workload history for linearizability, key
// by key (a key-value store is linearizable exactly when each key is: the
// P-compositionality porcupine exploits). Keys are searched in parallel,
// easiest first, within opts.Timeout; a key whose search does not finish is
// unknown, never valid. The error is non-nil for operations that are not
// register operations (ErrMalformed) and for visualizations that cannot be
// written.
func Linearizable(ctx context.Context, h history.History, opts LinearizableOptions) (Result, error) {
	rh, err := splitRegister(h)
	if err != nil {
		return Result{}, err
	}
	return linearizable(ctx, rh, opts)
}

// linearizable is Linearizable on a history already split by key.
func linearizable(ctx context.Context, rh *registerHistory, opts LinearizableOptions) (Result, error) {
	now := opts.now
	if now == nil {
		now = time.Now
	}
	start := now()
	algorithm := cmp.Or(opts.Algorithm, AlgorithmAuto)
	if !KnownAlgorithm(algorithm) {
		return Result{}, fmt.Errorf("linearizable: algorithm %q: want %s or %s", algorithm, AlgorithmAuto, AlgorithmSearch)
	}
	d := &LinearizableDetails{Algorithm: algorithm, DecidedBy: map[string]int{}, Operations: rh.operations,
		DroppedFail: rh.failed, DroppedInfo: rh.infoReads, TimeoutS: opts.Timeout.Seconds()}
	parts := partitionsOf(rh, d)
	toSearch := parts
	if algorithm == AlgorithmAuto {
		toSearch = decideByWriteOrder(ctx, parts, d)
	}

	deadline, bounded := searchDeadline(ctx, start, opts.Timeout)
	budget := func() (time.Duration, bool) {
		if !bounded {
			return 0, ctx.Err() == nil
		}
		left := deadline.Sub(now())
		return left, left > 0 && ctx.Err() == nil
	}
	memory := opts.SearchMemory
	if memory == 0 {
		memory = DefaultSearchMemory
	}
	s := newSearcher(ctx, budget, memory, opts.Parallelism)
	s.onSearch = opts.onSearch
	s.run(toSearch)
	for _, p := range toSearch {
		if p.result != porcupine.Unknown {
			p.decidedBy = AlgorithmSearch
		}
	}
	d.SearchMemoryExceeded = s.outOfMemory.Load()

	valid, err := judge(parts, rh, d, opts, s)
	d.DurationS = now().Sub(start).Seconds()
	return Result{Valid: valid, Details: d}, err
}

// partitionsOf prepares every key for the search and orders them easiest
// first: fewest unbounded info ops, then fewest ops. A tight timeout then
// decides as many keys as it can.
func partitionsOf(rh *registerHistory, d *LinearizableDetails) []*partition {
	parts := make([]*partition, 0, len(rh.keys))
	for _, key := range rh.sortedKeys() {
		p := &partition{key: key, ops: rh.keys[key]}
		p.search, p.dropped = prepare(p.ops)
		for _, op := range p.search {
			if op.unbounded() {
				p.unbounded++
			}
		}
		d.DroppedInfo += p.dropped
		d.Searched += len(p.search)
		d.Unbounded += p.unbounded
		parts = append(parts, p)
	}
	d.Partitions = len(parts)
	sort.SliceStable(parts, func(i, j int) bool {
		if parts[i].unbounded != parts[j].unbounded {
			return parts[i].unbounded < parts[j].unbounded
		}
		return len(parts[i].search) < len(parts[j].search)
	})
	return parts
}

// decideByWriteOrder decides every key whose values are unique by
// writeOrder, and returns the others, for the search. Keys are not decided
// once ctx is done; they are returned too, and the search, seeing ctx
// done, leaves them unknown.
func decideByWriteOrder(ctx context.Context, parts []*partition, d *LinearizableDetails) []*partition {
	var rest []*partition
	for _, p := range parts {
		if ctx.Err() != nil {
			rest = append(rest, p)
			continue
		}
		w, unique := writeOrder(p.search)
		if !unique {
			d.NotUnique = append(d.NotUnique, p.key)
			rest = append(rest, p)
			continue
		}
		p.decidedBy, p.witness, p.result = AlgorithmWriteOrder, w, porcupine.Ok
		if w != nil {
			p.result = porcupine.Illegal
		}
	}
	sort.Strings(d.NotUnique)
	return rest
}

// searchDeadline combines the timeout and ctx's deadline.
func searchDeadline(ctx context.Context, start time.Time, timeout time.Duration) (time.Time, bool) {
	deadline, bounded := ctx.Deadline()
	if timeout > 0 {
		if t := start.Add(timeout); !bounded || t.Before(deadline) {
			deadline = t
		}
		bounded = true
	}
	return deadline, bounded
}

// judge turns the per-key results into the verdict and details: it tries to
// prove the keys whose search did not finish, and explains (and visualizes)
// the failing keys.
func judge(parts []*partition, rh *registerHistory, d *LinearizableDetails, opts LinearizableOptions,
	s *searcher) (Validity, error) {
	sort.Slice(parts, func(i, j int) bool { return parts[i].key < parts[j].key })
	maxExplained := opts.MaxExplained
	if maxExplained <= 0 {
		maxExplained = DefaultMaxExplained
	}
	viz, err := newVisualizer(opts.VisualizationDir, rh)
	if err != nil {
		return Unknown, err
	}
	verdicts := make([]Validity, 0, len(parts)+1)
	verdicts = append(verdicts, Valid) // no keys at all: nothing can be wrong
	for _, p := range parts {
		var f KeyFailure
		switch p.result {
		case porcupine.Ok:
			d.DecidedBy[p.decidedBy]++
			verdicts = append(verdicts, Valid)
			continue
		case porcupine.Unknown:
			pr, proven := prove(p.search)
			if !proven {
				d.UnknownKeys = append(d.UnknownKeys, p.key)
				verdicts = append(verdicts, Unknown)
				continue
			}
			p.decidedBy = AlgorithmSearch
			f = pr.failure(p.key, true)
		default:
			explain := explainSearch
			if p.witness != nil {
				explain = explainWriteOrder
			}
			if len(d.Failures) < maxExplained {
				if f, err = explain(p, viz, s); err != nil {
					return Unknown, err
				}
			}
		}
		d.DecidedBy[p.decidedBy]++
		d.InvalidKeys = append(d.InvalidKeys, p.key)
		if len(d.Failures) < maxExplained {
			f.DecidedBy = p.decidedBy
			d.Failures = append(d.Failures, f)
		}
		verdicts = append(verdicts, Invalid)
	}
	valid := Merge(verdicts...)
	if valid == Unknown {
		d.Reason = unknownReason(len(d.UnknownKeys), len(parts), s)
	}
	return valid, nil
}

// unknownReason says why n of total keys were not decided.
func unknownReason(n, total int, s *searcher) string {
	why := "within the timeout"
	switch {
	case s.ctx.Err() != nil:
		why = "before the check was canceled"
	case s.outOfMemory.Load():
		why = "within the timeout and the memory budget (it exceeded its memory budget)"
	}
	return fmt.Sprintf("the search did not finish for %d of %d keys %s", n, total, why)
}

// minExplainTime is the least a failing key's second search gets, when it
// is re-run to collect partial linearizations for its explanation and
// visualization, even if the check's timeout is spent: the verdict is
// already decided, and a few seconds buy the user a picture of it.
const minExplainTime = time.Second

// explainSearch explains a key porcupine found not linearizable and writes
// its visualization. The search is run again, verbosely, when a
// visualization is wanted or prove has no short argument.
func explainSearch(p *partition, viz *visualizer, s *searcher) (KeyFailure, error) {
	pr, proven := prove(p.search)
	if proven && viz == nil {
		return pr.failure(p.key, false), nil
	}
	timeout, ok := s.budget()
	if !ok || timeout > 0 && timeout < minExplainTime {
		timeout = minExplainTime
	}
	info := s.verbose(p, timeout)
	if !proven {
		pr = explainPartial(p.search, info)
	}
	f := pr.failure(p.key, false)
	var err error
	f.Visualization, err = viz.write(p.key, info)
	return f, err
}

// maxWindow bounds the ops of the visualization of a key the write order
// found not linearizable.
const maxWindow = 100

// explainWriteOrder explains a key the write order found not linearizable,
// in prove's words where one of its arguments applies to the witness's ops
// (see woWitness.closure), in the witness's own otherwise, and writes a
// visualization of the ops around the witness: porcupine's search over them
// is short, whatever the size of the key.
func explainWriteOrder(p *partition, viz *visualizer, s *searcher) (KeyFailure, error) {
	core := p.witness.closure(p.search)
	pr, ok := prove(core)
	if !ok {
		pr = p.witness.proof()
	}
	f := pr.failure(p.key, false)
	if viz == nil {
		return f, nil
	}
	timeout, ok := s.budget()
	if !ok || timeout > 0 && timeout < minExplainTime {
		timeout = minExplainTime
	}
	info := s.verbose(&partition{key: p.key, search: window(core, p.search, p.witness.because)}, timeout)
	var err error
	f.Visualization, err = viz.write(p.key, info)
	return f, err
}

// window returns core, a set of ops that is not linearizable and closed
// under writers, with the ops of all that overlap it in time and their
// writers, if that makes at most maxWindow ops: a superset of core is not
// linearizable either, and the others show what happened around it.
func window(core, all []*regOp, because map[*regOp]*regOp) []*regOp {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, op := range core {
		lo = min(lo, op.call)
		hi = max(hi, op.call)
		if !op.unbounded() {
			hi = max(hi, op.deadline)
		}
	}
	var near []*regOp
	for _, op := range all {
		if op.call <= hi && (op.unbounded() || op.deadline >= lo) {
			if near = append(near, op); len(near) > maxWindow {
				return core
			}
		}
	}
	if w := closeUnder(append(near, core...), all, because); len(w) <= maxWindow {
		return w
	}
	return core
}
