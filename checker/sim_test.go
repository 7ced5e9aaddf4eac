package checker

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"

	"chaos/history"
)

// simConfig shapes a simulated register workload.
type simConfig struct {
	seed     uint64
	ops      int     // client operations to invoke
	keys     int     // keys they spread over
	clients  int     // concurrent workers
	infoRate float64 // fraction of ops whose outcome the client never learns
	failRate float64 // fraction of ops refused without effect (besides cas mismatches)
	casRate  float64 // fraction of cas; the rest is split between writes and reads
	nemesis  bool    // sprinkle kill/start nemesis ops
}

// simulate runs a workload against a single-threaded in-memory register:
// every operation takes effect atomically at one instant inside [invoke,
// completion], or, when its outcome is unknown (info), at some instant after
// its invoke, possibly after the client gave up, or never. Every history it
// returns is linearizable by construction. Write and cas values are unique.
func simulate(cfg simConfig) history.History {
	s := &sim{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.seed, cfg.seed^0x5eed)), state: make(map[string]int64)}
	for c := 0; c < cfg.clients; c++ {
		s.schedule(int64(s.rng.IntN(1000)), &simEvent{kind: evStart, client: &simClient{process: c}})
	}
	for s.events.Len() > 0 {
		s.handle(heap.Pop(&s.events).(*simEvent))
	}
	return s.h
}

type sim struct {
	cfg     simConfig
	rng     *rand.Rand
	h       history.History
	events  eventQueue
	seq     int64
	invoked int
	next    int64            // last write or cas value handed out
	state   map[string]int64 // key -> value; a missing key was never written
	nemesis int
}

type simClient struct {
	process int
}

// simOp is an operation in flight.
type simOp struct {
	client   *simClient
	f, key   string
	arg      int64 // write value, cas expected
	arg2     int64 // cas new value
	outcome  history.Type
	result   json.RawMessage // what the completion carries
	canceled bool            // an info op that will never take effect
}

type evKind uint8

const (
	evStart    evKind = iota // a client invokes its next op
	evEffect                 // an op takes effect on the register
	evComplete               // the client learns the outcome
)

type simEvent struct {
	at     int64
	seq    int64
	kind   evKind
	client *simClient
	op     *simOp
}

func (s *sim) schedule(at int64, e *simEvent) {
	s.seq++
	e.at, e.seq = at, s.seq
	heap.Push(&s.events, e)
}

func (s *sim) emit(at int64, process history.Process, t history.Type, f, key string, value json.RawMessage) {
	s.h = append(s.h, history.Op{Index: int64(len(s.h)), Time: at, Process: process, Type: t, F: f, Key: key, Value: value})
}

func (s *sim) handle(e *simEvent) {
	switch e.kind {
	case evStart:
		if s.invoked == s.cfg.ops {
			return
		}
		s.invoked++
		s.maybeNemesis(e.at)
		s.start(e.at, e.client)
	case evEffect:
		s.effect(e.op)
	case evComplete:
		op := e.op
		s.emit(e.at, history.Process(op.client.process), op.outcome, op.f, op.key, op.result)
		if op.outcome == history.Info {
			op.client.process += s.cfg.clients // retired: the worker goes on as a new process
		}
		s.schedule(e.at+int64(s.rng.IntN(2000)), &simEvent{kind: evStart, client: op.client})
	}
}

// start invokes a random operation and schedules its effect and completion.
func (s *sim) start(at int64, c *simClient) {
	op := &simOp{client: c, key: "k" + strconv.Itoa(s.rng.IntN(s.cfg.keys)), outcome: history.OK}
	var value json.RawMessage
	switch r := s.rng.Float64(); {
	case r < s.cfg.casRate:
		op.f = "cas"
		op.arg = s.guess(op.key)
		s.next++
		op.arg2 = s.next
		value = json.RawMessage(fmt.Sprintf("[%d,%d]", op.arg, op.arg2))
	case r < s.cfg.casRate+(1-s.cfg.casRate)/2:
		op.f = "write"
		s.next++
		op.arg = s.next
		value = json.RawMessage(strconv.FormatInt(op.arg, 10))
	default:
		op.f = "read"
	}
	s.emit(at, history.Process(c.process), history.Invoke, op.f, op.key, value)

	effectAt := at + int64(s.rng.IntN(5000))
	completeAt := effectAt + int64(s.rng.IntN(5000))
	switch r := s.rng.Float64(); {
	case r < s.cfg.infoRate:
		op.outcome = history.Info
		op.canceled = s.rng.IntN(2) == 0
		effectAt = at + int64(s.rng.IntN(20000)) // may land after the client gave up
	case r < s.cfg.infoRate+s.cfg.failRate:
		op.outcome = history.Fail
		op.canceled = true
	}
	if !op.canceled {
		s.schedule(effectAt, &simEvent{kind: evEffect, op: op})
	}
	if op.outcome != history.OK {
		s.schedule(completeAt, &simEvent{kind: evComplete, op: op})
	}
	// An ok op completes after its effect: effect schedules the completion.
}

// guess picks what a cas expects: usually the current value, sometimes an
// older one (and, on a key never written, any value).
func (s *sim) guess(key string) int64 {
	if v, ok := s.state[key]; ok && s.rng.IntN(10) < 7 {
		return v
	}
	return 1 + s.rng.Int64N(s.next+1)
}

// effect applies op to the register, atomically, now.
func (s *sim) effect(op *simOp) {
	at := s.events.now
	v, present := s.state[op.key]
	switch op.f {
	case "read":
		op.result = json.RawMessage("null")
		if present {
			op.result = json.RawMessage(strconv.FormatInt(v, 10))
		}
	case "write":
		s.state[op.key] = op.arg
		op.result = json.RawMessage(strconv.FormatInt(op.arg, 10))
	case "cas":
		if present && v == op.arg {
			s.state[op.key] = op.arg2
		} else if op.outcome == history.OK {
			op.outcome = history.Fail // mismatch: the cas fails, nothing changes
		}
		op.result = nil
	}
	if op.outcome == history.Info {
		return // its completion is scheduled independently
	}
	s.schedule(at+int64(s.rng.IntN(5000)), &simEvent{kind: evComplete, op: op})
}

func (s *sim) maybeNemesis(at int64) {
	if !s.cfg.nemesis || s.invoked%500 != 0 {
		return
	}
	f := "kill"
	if s.nemesis%2 == 1 {
		f = "start"
	}
	s.nemesis++
	s.emit(at, history.NemesisProcess, history.Info, f, "", json.RawMessage(`["n2"]`))
}

// eventQueue orders events by time, then by when they were scheduled.
type eventQueue struct {
	items []*simEvent
	now   int64
}

func (q *eventQueue) Len() int { return len(q.items) }
func (q *eventQueue) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}
func (q *eventQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *eventQueue) Push(x any)    { q.items = append(q.items, x.(*simEvent)) }
func (q *eventQueue) Pop() any {
	e := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	q.now = e.at
	return e
}
