package watch

// Kind names one kind of anomaly. Each belongs to one property of etcd's
// watch guarantees (see [Kind.Property]); [BadInput] and [BadResume] are
// about the input rather than the server.
type Kind string

// The anomaly kinds, grouped by property.
const (
	// InconsistentRevision: two sources disagree on what one revision
	// holds for one key (two acknowledged writes, or two watch events when
	// no write was acknowledged, on the content or on the create revision
	// and version), so the store's history is not one history.
	InconsistentRevision Kind = "inconsistent-revision"

	// OutOfOrder: an event came after an event of a higher revision, in one
	// session or, for a session started "from now", after the watcher's
	// earlier sessions.
	OutOfOrder Kind = "out-of-order"
	// DuplicateEvent: one (revision, key) event delivered twice to one
	// watcher.
	DuplicateEvent Kind = "duplicate-event"
	// SplitRevision: the events of one revision in the watched range came
	// in more than one response.
	SplitRevision Kind = "split-revision"
	// LostEvent: a session reached a revision (by a later event or a
	// progress notification) without delivering an event in its range that
	// the reference knows at or below it.
	LostEvent Kind = "lost-event"
	// EventBeforeStart: a session delivered an event below its start
	// revision.
	EventBeforeStart Kind = "event-before-start"
	// LateStart: a session's first event came after an event in range at
	// or after its start revision, which it never delivered.
	LateStart Kind = "late-start"
	// NotRefusedAfterCompaction: a session asked, after a compaction at C
	// was acknowledged, to start below C, and was served instead of
	// refused.
	NotRefusedAfterCompaction Kind = "not-refused-after-compaction"
	// RefusedTooEarly: a session was canceled for compaction at C although
	// the next revision it needed was above C.
	RefusedTooEarly Kind = "refused-too-early"
	// ProgressAhead: a progress notification promised every event up to its
	// header, and an event at or below that header came later.
	ProgressAhead Kind = "progress-ahead"
	// ProgressBackwards: a progress notification's header is below an
	// earlier one's, or below an event the session already delivered.
	ProgressBackwards Kind = "progress-backwards"
	// WrongValue: a watch event disagrees with the acknowledged write of
	// its (revision, key).
	WrongValue Kind = "wrong-value"
	// WrongPrevValue: an event's previous value is not the key's value at
	// its previous revision.
	WrongPrevValue Kind = "wrong-prev-value"
	// WrongCreateRevision: an event's create revision contradicts the
	// key's history.
	WrongCreateRevision Kind = "wrong-create-revision"
	// WrongVersion: an event's version contradicts the key's history.
	WrongVersion Kind = "wrong-version"
	// OutOfRange: an event for a key the session does not watch.
	OutOfRange Kind = "out-of-range"
	// NotCaughtUp: a session open at the end had not reached the final
	// revision by the catch-up time.
	NotCaughtUp Kind = "not-caught-up"

	// BadInput: malformed input (a revision of 0 or below, an empty key,
	// responses out of time order, a response after a cancellation...). The
	// malformed part is left out of every check.
	BadInput Kind = "bad-input"
	// BadResume: the client resumed a watcher from another revision than
	// the one after what it had received; checks across those two sessions
	// are skipped.
	BadResume Kind = "bad-resume"
)

// Property returns the watch guarantee k breaks: "ordered", "unique",
// "atomic", "reliable", "resumable", "bookmarkable", "fields", "catch-up",
// "history" (the reference itself), or "input".
func (k Kind) Property() string {
	switch k {
	case InconsistentRevision:
		return "history"
	case OutOfOrder:
		return "ordered"
	case DuplicateEvent:
		return "unique"
	case SplitRevision:
		return "atomic"
	case LostEvent:
		return "reliable"
	case EventBeforeStart, LateStart, NotRefusedAfterCompaction, RefusedTooEarly:
		return "resumable"
	case ProgressAhead, ProgressBackwards:
		return "bookmarkable"
	case WrongValue, WrongPrevValue, WrongCreateRevision, WrongVersion, OutOfRange:
		return "fields"
	case NotCaughtUp:
		return "catch-up"
	default:
		return "input"
	}
}

// IsInput reports whether k is about the input rather than the server: such
// anomalies make the verdict Unknown, not Invalid, because what they
// concern could not be checked.
func (k Kind) IsInput() bool { return k.Property() == "input" }
