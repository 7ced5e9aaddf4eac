package faultfs

// Status is what the file system holds that is not durable, and the error
// injection in force (docs/FORMATS.md, "faultfs control").
type Status struct {
	// PendingFiles is how many files changed since their last fsync.
	PendingFiles int `json:"pending_files"`
	// UndoBytes is how many old bytes of durable ranges are kept to undo
	// overwrites and truncations.
	UndoBytes int64 `json:"undo_bytes"`
	// UndoMemoryBytes is how many of UndoBytes are held in memory: at
	// most the bound (Options.UndoMemory).
	UndoMemoryBytes int64 `json:"undo_memory_bytes,omitempty"`
	// UndoSpilledBytes is how many of UndoBytes are held in spill files
	// in the backing store, past the bound.
	UndoSpilledBytes int64 `json:"undo_spilled_bytes,omitempty"`
	// UndoRefused is how many changes were refused, since the file
	// system started, because their old bytes could be neither read nor
	// spilled (the backing store full or failing): errors of chaos's
	// making, not the system's.
	UndoRefused int64 `json:"undo_refused,omitempty"`
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
	s := Status{PendingNames: t.names.pending(), Errors: t.errs,
		UndoMemoryBytes: t.undo.mem, UndoSpilledBytes: t.undo.spilled, UndoRefused: t.undo.refused}
	for _, st := range t.files {
		if st.pending {
			s.PendingFiles++
			all, _, _ := st.undo.bytes()
			s.UndoBytes += all
		}
	}
	return s
}
