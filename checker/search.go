package checker

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"chaos/history"
)

// DefaultSearchMemory is how much the searches may add to the live heap
// when LinearizableOptions.SearchMemory is zero.
const DefaultSearchMemory = 1 << 30

// watchInterval is how often the watchdog looks at the context and the heap.
const watchInterval = 50 * time.Millisecond

// searcher runs one porcupine search per partition on a pool of workers.
//
// Porcupine could partition the history itself (Model.Partition) and search
// the parts in parallel, but it starts one goroutine per part at once, and
// without a visualization it stops at the first failure without saying
// which part failed. A bounded pool over per-key searches keeps memory to a
// few keys' search state and yields a verdict for every key.
//
// Porcupine stops a search only at its own timeout, and its memory grows
// with the search. So that a search also stops when the context is
// canceled or when it has used up its memory budget, every search runs
// with an abort flag its model consults: once set, every step fails, and
// the search unwinds in moments. A failure found after that proves nothing
// and counts as unknown. A success is always genuine: the linearization
// porcupine found is made only of steps the model allowed.
type searcher struct {
	ctx         context.Context
	budget      func() (time.Duration, bool) // how long a search may still run (0: no bound), and whether it may start
	memoryLimit uint64                       // heap bytes beyond which running searches are aborted
	parallelism int
	onSearch    func(key string) // test hook: called as each search starts

	aborts      []atomic.Bool // one per worker
	outOfMemory atomic.Bool
}

func newSearcher(ctx context.Context, budget func() (time.Duration, bool), memory uint64, parallelism int) *searcher {
	if parallelism <= 0 {
		parallelism = runtime.GOMAXPROCS(0)
	}
	return &searcher{ctx: ctx, budget: budget, memoryLimit: liveHeap() + memory, parallelism: parallelism,
		aborts: make([]atomic.Bool, parallelism)}
}

// run searches every partition and sets its result.
func (s *searcher) run(parts []*partition) {
	s.watched(true, func() {
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := range s.parallelism {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < len(parts); i = int(next.Add(1)) - 1 {
					parts[i].result = s.search(parts[i], &s.aborts[w])
				}
			})
		}
		wg.Wait()
	})
}

// search runs porcupine on one partition.
func (s *searcher) search(p *partition, abort *atomic.Bool) porcupine.CheckResult {
	abort.Store(false)
	timeout, ok := s.budget()
	if !ok {
		return porcupine.Unknown
	}
	if s.onSearch != nil {
		s.onSearch(p.key)
	}
	res := porcupine.CheckOperationsTimeout(abortableModel(abort), porcupineOps(p.search, false), timeout)
	if res == porcupine.Illegal && abort.Load() {
		return porcupine.Unknown
	}
	return res
}

// verbose searches a partition again, collecting the partial
// linearizations that explanations and visualizations need, for at most
// timeout (0: no bound). The deadline of the check does not stop it, the
// context and the memory budget do; what it found until then is returned.
func (s *searcher) verbose(p *partition, timeout time.Duration) porcupine.LinearizationInfo {
	var info porcupine.LinearizationInfo
	s.watched(false, func() {
		s.aborts[0].Store(s.ctx.Err() != nil)
		_, info = porcupine.CheckOperationsVerbose(abortableModel(&s.aborts[0]), porcupineOps(p.search, true), timeout)
	})
	return info
}

// abortableModel is the register model with every step failing once abort
// is set.
func abortableModel(abort *atomic.Bool) porcupine.Model {
	model := registerModel()
	model.Step = func(state, input, _ any) (bool, any) {
		if abort.Load() {
			return false, state
		}
		return step(state.(regValue), input.(*regOp))
	}
	return model
}

// watched runs searches under a watchdog that aborts them when the context
// is done, the heap exceeds the memory limit, or (if deadline is set) the
// budget has run out. The heap counts garbage until the next collection, so
// before aborting for memory the watchdog collects and looks again: it
// judges what is really live, and keeps the heap itself, not only its live
// part, near the limit.
func (s *searcher) watched(deadline bool, searches func()) {
	stop := make(chan struct{})
	var watchdog sync.WaitGroup
	watchdog.Go(func() {
		tick := time.NewTicker(watchInterval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-s.ctx.Done():
				s.abortAll() // and no search starts any more: budget says so
				<-stop
				return
			case <-tick.C:
				if _, ok := s.budget(); deadline && !ok {
					s.abortAll()
				} else if heapBytes() > s.memoryLimit {
					runtime.GC()
					if heapBytes() > s.memoryLimit {
						s.outOfMemory.Store(true)
						s.abortAll()
					}
				}
			}
		}
	})
	searches()
	close(stop)
	watchdog.Wait()
}

func (s *searcher) abortAll() {
	for i := range s.aborts {
		s.aborts[i].Store(true)
	}
}

// liveHeap returns the live heap as of the last garbage collection.
func liveHeap() uint64 { return readMetric("/gc/heap/live:bytes") }

// heapBytes returns the heap's objects, live or not yet collected.
func heapBytes() uint64 { return readMetric("/memory/classes/heap/objects:bytes") }

func readMetric(name string) uint64 {
	sample := []metrics.Sample{{Name: name}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

// porcupineOps converts ops for porcupine. With rows set, each process gets
// its own row (ClientId) in the visualization.
func porcupineOps(ops []*regOp, rows bool) []porcupine.Operation {
	out := make([]porcupine.Operation, len(ops))
	row := make(map[history.Process]int)
	if rows {
		procs := make([]history.Process, 0)
		for _, op := range ops {
			if _, seen := row[op.process]; !seen {
				row[op.process] = 0
				procs = append(procs, op.process)
			}
		}
		sort.Slice(procs, func(i, j int) bool { return procs[i] < procs[j] })
		for i, p := range procs {
			row[p] = i
		}
	}
	for i, op := range ops {
		out[i] = porcupine.Operation{ClientId: row[op.process], Input: op, Call: op.call, Return: op.deadline, Metadata: op}
	}
	return out
}
