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

// run searches every partition and sets its result.
func (s *searcher) run(parts []*partition) {
	if s.parallelism <= 0 {
		s.parallelism = runtime.GOMAXPROCS(0)
	}
	s.aborts = make([]atomic.Bool, s.parallelism)
	stop := make(chan struct{})
	var watchdog sync.WaitGroup
	watchdog.Go(func() { s.watch(stop) })

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
	close(stop)
	watchdog.Wait()
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
	model := registerModel()
	model.Step = func(state, input, _ any) (bool, any) {
		if abort.Load() {
			return false, state
		}
		return step(state.(regValue), input.(*regOp))
	}
	res := porcupine.CheckOperationsTimeout(model, porcupineOps(p.search, false), timeout)
	if res == porcupine.Illegal && abort.Load() {
		return porcupine.Unknown
	}
	return res
}

// watch aborts the running searches when the context is done, the deadline
// has passed, or the heap exceeds the memory limit. The heap counts garbage
// until the next collection, so before aborting the watchdog collects and
// looks again: it judges what is really live, and it keeps the heap itself,
// not only the live part, near the limit.
func (s *searcher) watch(stop <-chan struct{}) {
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
			if _, ok := s.budget(); !ok {
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
