package watch

import "fmt"

// Write is one event of the store's history as the checker is told it: at
// Revision, Key was put with Value, or deleted (Delete, Value ""). A
// transaction that changed several keys gives several Writes at one
// Revision; etcd never changes one key twice in one revision, so a
// (Revision, Key) pair names at most one event.
//
// History.Writes holds the acknowledged writes only: the client sent the
// put or delete and the server answered with Revision. The client knows the
// key and value it wrote, so an acknowledged write is the authority on what
// its (Revision, Key) holds. Writes whose outcome the client does not know
// (timeouts) must not be given here; watchers may still show them, and the
// reference learns them from the watch events.
type Write struct {
	Revision int64
	Key      string
	Value    string
	Delete   bool
}

// Compaction is a compaction the workload requested and the server
// acknowledged at Time (ns, the same clock as Response.Time and
// Session.Opened). After it, a watch from a revision below Revision must be
// refused with a compact revision (see [Session]). Time orders the
// compaction against sessions: a compaction is known to precede a session
// only when Time < Session.Opened.
//
// Contract: at Time the compaction must be in effect on every member that
// serves watches. With one member, its acknowledgement time is enough; in
// a cluster a lagging member may still serve the old revisions, so give
// the time the harness knew every member had applied it (or leave the
// compaction out). A Time too early makes false
// [NotRefusedAfterCompaction] anomalies; a later one only checks less.
type Compaction struct {
	Revision int64
	Time     int64
}

// Event is one event a watcher delivered: Key was put with Value at
// Revision (the event's mod revision), or deleted (Delete).
//
// CreateRevision and Version are the key's create revision and version as
// the event carries them; 0 means not known and they are then not checked
// (etcd sends 0 for both in delete events). PrevValue is the key's value
// before this event, when the watch asked for previous values; nil means
// not given (not "no previous value"), and is then not checked.
type Event struct {
	Revision       int64
	Key            string
	Value          string
	Delete         bool
	CreateRevision int64
	Version        int64
	PrevValue      *string
}

// Response is one watch response, in the order the session received it.
//
// Header is the response header's revision. A ProgressNotify response has
// no events and promises that every event in range up to Header was already
// delivered. Canceled means the server ended the watch; with
// CompactRevision > 0 it ended it because the revision the watch needed was
// compacted (the "compacted" error). A response that is none of these and
// carries no events is the watch's creation confirmation: its Header is the
// store's revision when the watch began. Time is when the client received
// the response (ns); responses are expected in Time order.
type Response struct {
	Header          int64
	Events          []Event
	ProgressNotify  bool
	CompactRevision int64
	Canceled        bool
	Time            int64
}

// Session is one watch stream of a watcher, from its creation to its end.
//
// The range is etcd's: RangeEnd "" watches Key alone, "\x00" every key >=
// Key, anything else [Key, RangeEnd). StartRevision is the first revision
// asked for; 0 means "from now" (the store's revision at creation, plus
// one). Opened is when the client asked for the watch (ns); Ended says why
// the session ended ("canceled", "compacted", "closed" by the client,
// "error: ..."), "" when it was still open when recording stopped, and
// EndedAt when it ended (ns, 0 = not known).
//
// Watcher names the client that opened the session. A watcher opens its
// sessions one after another, in increasing ID order, and resumes each from
// the revision after the last event or progress notification it had
// received, as an etcd client does across reconnects. A session with
// StartRevision 0 is a fresh start, not a resume; after a session ended for
// compaction the watcher may restart anywhere, having accepted the loss.
type Session struct {
	ID            int
	Watcher       int
	Key           string
	RangeEnd      string
	StartRevision int64
	Opened        int64
	Responses     []Response
	Ended         string
	EndedAt       int64
}

// Watches reports whether key is in the session's range.
func (s *Session) Watches(key string) bool {
	switch s.RangeEnd {
	case "":
		return key == s.Key
	case "\x00":
		return key >= s.Key
	default:
		return key >= s.Key && key < s.RangeEnd
	}
}

// History is everything the checker is told: acknowledged writes, the
// compactions the workload requested, and every watch session.
type History struct {
	Writes      []Write
	Compactions []Compaction
	Sessions    []Session
}

// Options are facts about the run beyond the history.
type Options struct {
	// FinalRevision is the store's revision after the last write, as read
	// at the end of the run; 0 means not known.
	FinalRevision int64
	// CatchUpBy is a time (ns) by which every session still open at the
	// end must have reached FinalRevision, by events or by a progress
	// notification; 0 means the catch-up is not checked. A session counts
	// as open at the end when Ended is "", or "closed" with EndedAt after
	// CatchUpBy. The workload should ask for a progress notification after
	// its last write: a watcher of a quiet key reaches FinalRevision in no
	// other way.
	CatchUpBy int64
}

// rangeText describes the range s watches.
func rangeText(s *Session) string {
	switch s.RangeEnd {
	case "":
		return fmt.Sprintf("key %q", s.Key)
	case "\x00":
		return fmt.Sprintf("keys from %q on", s.Key)
	default:
		return fmt.Sprintf("keys [%q, %q)", s.Key, s.RangeEnd)
	}
}
