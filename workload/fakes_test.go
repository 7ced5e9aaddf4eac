package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"

	"chaos/history"
)

// memStore is a linearizable key-value store in memory: every operation
// takes effect atomically under one lock, at some point between the
// client's invoke and its completion.
type memStore struct {
	mu     sync.Mutex
	values map[string]int64
}

func newMemStore() *memStore { return &memStore{values: map[string]int64{}} }

// apply performs op at this instant and returns its true outcome.
func (s *memStore) apply(op Op) history.Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch op.F {
	case history.FRead:
		if op.Key == "" {
			present := make([]int64, 0)
			for _, e := range op.Attempted {
				if _, ok := s.values["s"+strconv.FormatInt(e, 10)]; ok {
					present = append(present, e)
				}
			}
			return history.Outcome{Type: history.OK, Value: present}
		}
		if v, ok := s.values[op.Key]; ok {
			return history.Outcome{Type: history.OK, Value: &v}
		}
		return history.Outcome{Type: history.OK, Value: (*int64)(nil)}
	case history.FWrite:
		s.values[op.Key] = op.Value.(int64)
	case history.FAdd:
		s.values["s"+strconv.FormatInt(op.Value.(int64), 10)] = 1
	case history.FCAS:
		pair := op.Value.([2]int64)
		if v, ok := s.values[op.Key]; !ok || v != pair[0] {
			return history.Outcome{Type: history.Fail, Error: "cas mismatch"}
		}
		s.values[op.Key] = pair[1]
	default:
		panic(fmt.Sprintf("memStore: unknown f %q", op.F))
	}
	return history.Outcome{Type: history.OK}
}

// flakyClient is one node's client of a memStore, with random latency and
// random faults drawn from its own seeded rng (a Client is used by one
// worker at a time, so the rng needs no lock). Latency is a random number
// of scheduler yields before and after the operation takes effect, so
// operations of different workers overlap without any sleep.
type flakyClient struct {
	node  string
	store *memStore
	rng   *rand.Rand
	// pFail: the request is refused and not applied. pInfo: the answer is
	// lost; the operation was applied or not, at random.
	pFail, pInfo float64
	closed       bool
}

func (c *flakyClient) yield() {
	for range c.rng.IntN(20) {
		runtime.Gosched()
	}
}

func (c *flakyClient) Do(ctx context.Context, op Op) history.Outcome {
	c.yield()
	var out history.Outcome
	switch roll := c.rng.Float64(); {
	case ctx.Err() != nil:
		out = history.Outcome{Type: history.Info, Error: ctx.Err().Error()}
	case roll < c.pFail:
		out = history.Outcome{Type: history.Fail, Error: "refused"}
	case roll < c.pFail+c.pInfo:
		if c.rng.IntN(2) == 0 {
			c.store.apply(op)
		}
		out = history.Outcome{Type: history.Info, Error: "answer lost"}
	default:
		out = c.store.apply(op)
	}
	c.yield()
	out.Node = c.node
	return out
}

func (c *flakyClient) Close() error {
	c.closed = true
	return nil
}

// flakyClients returns n clients of one store, bound round-robin to nodes
// n1..n<nodes>, each with its own seeded rng.
func flakyClients(store *memStore, n, nodes int, seed uint64, pFail, pInfo float64) []Client {
	clients := make([]Client, n)
	for i := range clients {
		clients[i] = &flakyClient{node: "n" + strconv.Itoa(i%nodes+1), store: store,
			rng: rand.New(rand.NewPCG(seed, uint64(i))), pFail: pFail, pInfo: pInfo}
	}
	return clients
}
