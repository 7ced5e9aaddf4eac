package faultfs

// Status is what the file system holds that is not durable, and the error
// injection in force (docs/FORMATS.md, "faultfs control").
type Status struct {
	// PendingFiles is how many files changed since their last fsync.
	PendingFiles int `json:"pending_files"`
	// UndoBytes is how many old bytes of durable ranges are kept to undo
	// overwrites and truncations.
	UndoBytes int64 `json:"undo_bytes"`
	// PendingNames is how many names changed since their directory's
	// last fsync.
	PendingNames int `json:"pending_names"`
	// Errors is the error injection in force; absent when none.
	Errors *ErrorMode `json:"errors,omitempty"`
}

// Status is what t holds now.
func (t *Tracker) Status() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.injected("") // drops an expired mode
	return t.status()
}

func (t *Tracker) status() Status {
	s := Status{PendingNames: t.names.pending(), Errors: t.errs}
	for _, st := range t.files {
		if st.pending {
			s.PendingFiles++
			s.UndoBytes += st.undo.bytes()
		}
	}
	return s
}
