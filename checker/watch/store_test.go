package watch_test

import "chaos/checker/watch"

// This file and sim_test.go are the test double: an in-memory model of an
// etcd store and its watch server, driven by a seeded random source, that
// writes a correct history for the checker to accept, or a history with
// one known violation planted by a switch (see fault and plant_test.go).

// op is one change of a transaction: a put of value, or a delete.
type op struct {
	key, value string
	del        bool
}

// kvState is a live key's value, create revision and version.
type kvState struct {
	value           string
	create, version int64
}

// store is the model key-value store: one revision per transaction, every
// revision's events kept forever (compaction only changes compacted, the
// revision below which watches are refused).
type store struct {
	rev       int64
	log       map[int64][]watch.Event
	kv        map[string]kvState
	compacted int64
}

func newStore() *store {
	return &store{log: map[int64][]watch.Event{}, kv: map[string]kvState{}}
}

// apply commits ops, on distinct keys, at the next revision and returns
// their events, with create revision, version and previous value filled
// as etcd fills them (a delete carries neither create revision nor
// version).
func (s *store) apply(ops []op) []watch.Event {
	s.rev++
	evs := make([]watch.Event, 0, len(ops))
	for _, o := range ops {
		old, existed := s.kv[o.key]
		ev := watch.Event{Revision: s.rev, Key: o.key, Delete: o.del}
		if existed {
			v := old.value
			ev.PrevValue = &v
		}
		if o.del {
			delete(s.kv, o.key)
		} else {
			st := kvState{value: o.value, create: s.rev, version: 1}
			if existed {
				st.create, st.version = old.create, old.version+1
			}
			s.kv[o.key] = st
			ev.Value, ev.CreateRevision, ev.Version = o.value, st.create, st.version
		}
		evs = append(evs, ev)
	}
	s.log[s.rev] = evs
	return evs
}
