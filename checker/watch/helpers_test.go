package watch_test

import "chaos/checker/watch"

// Builders for hand-made histories. Times are the response's index in
// its session times 10 unless given.

func put(rev int64, key, value string) watch.Event {
	return watch.Event{Revision: rev, Key: key, Value: value}
}

func del(rev int64, key string) watch.Event {
	return watch.Event{Revision: rev, Key: key, Delete: true}
}

// withMeta returns e with a create revision and version.
func withMeta(e watch.Event, create, version int64) watch.Event {
	e.CreateRevision, e.Version = create, version
	return e
}

// withPrev returns e with a previous value.
func withPrev(e watch.Event, prev string) watch.Event {
	e.PrevValue = &prev
	return e
}

func ack(rev int64, key, value string) watch.Write {
	return watch.Write{Revision: rev, Key: key, Value: value}
}

// batch is a response carrying events; its header is its last event's
// revision.
func batch(evs ...watch.Event) watch.Response {
	return watch.Response{Header: evs[len(evs)-1].Revision, Events: evs}
}

func progressAt(rev int64) watch.Response {
	return watch.Response{Header: rev, ProgressNotify: true}
}

func compacted(rev, header int64) watch.Response {
	return watch.Response{Header: header, Canceled: true, CompactRevision: rev}
}

// sess is session id of watcher w on key alone from start, its responses
// timed 10, 20, 30... after Opened 1.
func sess(w, id int, key string, start int64, rs ...watch.Response) watch.Session {
	for i := range rs {
		rs[i].Time = int64(10 * (i + 1))
	}
	return watch.Session{ID: id, Watcher: w, Key: key, StartRevision: start, Opened: 1, Responses: rs, Ended: "closed", EndedAt: int64(10 * (len(rs) + 1))}
}

// ranged returns s watching [s.Key, end).
func ranged(s watch.Session, end string) watch.Session {
	s.RangeEnd = end
	return s
}
