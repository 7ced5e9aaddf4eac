package watch_test

import (
	"fmt"
	"math/rand/v2"

	"chaos/checker/watch"
)

// fault is a violation the watch server of the double commits on purpose.
// Violations that only rewrite what a watcher received are planted after
// the run instead (plant_test.go).
type fault int

const (
	noFault       fault = iota
	skipRefusal         // serve one watch that starts below the compacted revision
	refuseEarly         // refuse one watch that starts above the compacted revision
	progressAhead       // send one progress notification while an event in range is pending
	stopEarly           // stop serving watcher 0 halfway, leaving its session open
)

// planted names where a violation was planted; ok is false when the run
// offered no place for it.
type planted struct {
	ok      bool
	watcher int
	session int
	rev     int64
	key     string
}

// watcher is one watching client and the server's side of its open
// session.
type watcher struct {
	id       int
	key, end string
	prevKV   bool
	sess     *watch.Session // the open session, nil when disconnected
	next     int64          // server: the next revision to deliver
	resume   int64          // client: the revision to ask for next, 0 = from now
	sessions int            // client: session IDs issued
	stuck    bool           // server: stopped serving (stopEarly)
}

// sim runs the double: writers, compactions and watchers, one step per
// tick, every action on one logical clock that advances by 1 ns per
// action.
type sim struct {
	rng   *rand.Rand
	fault fault
	ticks int
	clock int64
	st    *store
	ws    []*watcher
	h     watch.History
	plant planted
}

// simulate runs the double for ticks ticks from seed and returns the
// history, the options to check it with, and where f was planted.
func simulate(seed uint64, ticks int, f fault) (watch.History, watch.Options, planted) {
	s := &sim{rng: rand.New(rand.NewPCG(seed, 0x5eed)), fault: f, ticks: ticks, st: newStore()}
	ranges := []struct {
		key, end string
		prevKV   bool
	}{{"k1", "", true}, {"k2", "k5", false}, {"k", "\x00", true}, {"k6", "", false}, {"k0", "k4", true}}
	for i, r := range ranges {
		w := &watcher{id: i, key: r.key, end: r.end, prevKV: r.prevKV}
		if s.rng.IntN(2) == 0 {
			w.resume = 1
		}
		s.ws = append(s.ws, w)
	}
	for t := 0; t < ticks; t++ {
		s.tick(t)
	}
	opts := s.finish()
	return s.h, opts, s.plant
}

func (s *sim) now() int64 {
	s.clock++
	return s.clock
}

// tick runs one step: maybe a write, maybe a compaction, then each
// watcher's step.
func (s *sim) tick(t int) {
	if s.rng.Float64() < 0.6 {
		s.write()
	}
	if s.rng.Float64() < 0.04 {
		s.compact()
	}
	for _, w := range s.ws {
		if s.fault == stopEarly && !s.plant.ok && w.id == 0 && w.sess != nil && t >= s.ticks/2 {
			w.stuck = true
			s.plant = planted{ok: true, watcher: w.id, session: w.sess.ID}
		}
		s.step(w)
	}
}

// write commits a transaction of one to three distinct keys; the client
// hears back with probability 0.85.
func (s *sim) write() {
	n := 1 + s.rng.IntN(3)
	ops := make([]op, 0, n)
	for _, i := range s.rng.Perm(8)[:n] {
		key := fmt.Sprintf("k%d", i)
		if _, ok := s.st.kv[key]; ok && s.rng.Float64() < 0.3 {
			ops = append(ops, op{key: key, del: true})
			continue
		}
		ops = append(ops, op{key: key, value: fmt.Sprintf("v%d.%s", s.st.rev+1, key)})
	}
	evs := s.st.apply(ops)
	if s.rng.Float64() >= 0.85 {
		return
	}
	for _, e := range evs {
		s.h.Writes = append(s.h.Writes, watch.Write{Revision: e.Revision, Key: e.Key, Value: e.Value, Delete: e.Delete})
	}
}

// compact compacts at a revision at least two below the current one, and
// cancels every open session still behind it, as etcd cancels unsynced
// watchers.
func (s *sim) compact() {
	room := s.st.rev - 2 - s.st.compacted
	if room <= 0 {
		return
	}
	c := s.st.compacted + 1 + s.rng.Int64N(room)
	s.st.compacted = c
	s.h.Compactions = append(s.h.Compactions, watch.Compaction{Revision: c, Time: s.now()})
	for _, w := range s.ws {
		if w.sess != nil && !w.stuck && w.next < c {
			s.refuse(w, c)
		}
	}
}

// step runs one watcher: connect, disconnect, receive events, receive a
// progress notification.
func (s *sim) step(w *watcher) {
	switch {
	case w.stuck:
	case w.sess == nil:
		if s.rng.Float64() < 0.3 {
			s.open(w)
		}
	case s.rng.Float64() < 0.04:
		reason := "closed"
		if s.rng.IntN(2) == 0 {
			reason = "error: connection reset"
		}
		s.end(w, reason)
	case s.fault == progressAhead && !s.plant.ok && s.pending(w) != nil:
		e := s.pending(w)
		s.plant = planted{ok: true, watcher: w.id, session: w.sess.ID, rev: e.Revision, key: e.Key}
		s.progress(w)
		s.deliver(w, int(s.st.rev-w.next+1))
	default:
		if s.rng.Float64() < 0.5 {
			s.deliver(w, 1+s.rng.IntN(3))
		}
		if w.next > s.st.rev && s.rng.Float64() < 0.2 {
			s.progress(w)
		}
	}
}
