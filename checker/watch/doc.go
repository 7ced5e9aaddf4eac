// Package watch checks etcd-style watch streams against the key-value
// store's history, in the manner of etcd's robustness tests: it judges
// what watchers received against the guarantees etcd documents for its
// watch API (ordered, unique, atomic, reliable, resumable, bookmarkable)
// and the history that the run itself reveals. It is a pure function of
// its input: no I/O, no etcd client, no goroutines.
//
// # Input
//
// A [History] holds the acknowledged writes ([Write]: the client knows the
// revision the server gave them), the compactions the workload requested
// ([Compaction]), and every watch [Session] with its [Response]s and
// [Event]s in the order received. [Options] add the store's final revision
// and a time by which watchers open at the end must have caught up.
//
// # Reference
//
// The reference is the store's history as far as anyone showed it: every
// (revision, key) event named by an acknowledged write or by any watch
// event (reference.go). etcd changes a key at most once per revision, so a
// (revision, key) pair names one event. Conflicts are anomalies: two
// acknowledged writes, or two watch events with no acknowledged write to
// rank them, that disagree are [InconsistentRevision]; a watch event that
// disagrees with an acknowledged write is [WrongValue] (the client knows
// what it wrote). A revision the reference does not hold, or a key at a
// revision it does not hold, is a gap in knowledge (a write whose
// acknowledgement was lost and that no watcher showed) and never an
// anomaly. Which keys a revision holds is not checked across sources: a
// revision a watcher showed without an acknowledged write's key is that
// watcher's lost event, decided per session.
//
// # Properties
//
// Each property is a group of anomaly kinds ([Kind.Property]):
//
//   - ordered ([OutOfOrder]): within a session, an event's revision never
//     goes below one already delivered. Across a watcher's sessions, a
//     correctly resumed session starts after everything it had, so an
//     older event there is [EventBeforeStart]; a "from now" session must
//     deliver only events above all the watcher's earlier sessions reached.
//   - unique ([DuplicateEvent]): no (revision, key) twice in a session, nor
//     in a "from now" session after an earlier one.
//   - atomic ([SplitRevision]): one revision's events in range come in one
//     response.
//   - reliable ([LostEvent]): every reference event in range with revision
//     in [start, reached] was delivered, where reached is the session's
//     highest event or progress header. Decided only for events the
//     reference knows.
//   - resumable ([EventBeforeStart], [LateStart],
//     [NotRefusedAfterCompaction], [RefusedTooEarly]): nothing below the
//     start; nothing in range missed before the first event; a start below
//     a compaction acknowledged before the session opened is refused; a
//     cancellation for compaction at C only when the next revision needed
//     is at or below C. A start exactly at C is accepted served or refused.
//     See [Compaction] for what its Time must mean in a cluster.
//   - bookmarkable ([ProgressAhead], [ProgressBackwards]): a progress
//     notification at H comes after every event in range at or below H;
//     headers never go below an earlier header or a delivered event.
//   - fields ([WrongValue], [WrongPrevValue], [WrongCreateRevision],
//     [WrongVersion], [OutOfRange]): event content as above; previous
//     value, create revision and version, when given, against the key's
//     previous event where the reference provably knows it (see fields.go);
//     no event outside the watched range.
//   - catch-up ([NotCaughtUp]): with [Options.FinalRevision] and
//     [Options.CatchUpBy], every session open at the end reached the final
//     revision by that time.
//
// A "from now" session (StartRevision 0) has no known start; the checker
// uses a bound at or above the true one (stream.go), so it may demand less
// than the server promised, never more. The client's own resume mistakes
// are [BadResume] (each session is still checked on its own), and
// malformed input is [BadInput] (left out of every other check).
//
// Not checked: the header revision of responses that carry events, which
// etcd sets to the store's revision at sending and promises nothing about;
// which keys a revision holds beyond what some session was bound to show;
// deletes of keys that did not exist; compact revisions no compaction
// asked for.
//
// # Verdict
//
// [Check] returns [Invalid] when it found an anomaly against the server.
// Otherwise it returns [Unknown] when nothing could be checked (no session
// received an event, progress notification or cancellation) or when some
// input was malformed or a resume was wrong, since what they concern was
// not checked; and [Valid] only when something was checked and everything
// checked held. Unknown never means valid. Valid is bounded by the
// reference: an event lost by every watcher and never acknowledged is
// invisible.
package watch
