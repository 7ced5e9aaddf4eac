package faultfs

import (
	"fmt"
	"syscall"
	"time"
)

// What injected errors refuse (ErrorMode.On).
const (
	OnWrites = "writes" // writes, truncates, fallocate, and names made (create, mkdir, link, symlink, rename)
	OnFsyncs = "fsyncs" // fsync and fdatasync of files and directories
	OnBoth   = "both"
)

// The errors injected (ErrorMode.Kind).
const (
	KindENOSPC = "enospc"
	KindEIO    = "eio"
)

// ErrorMode is the error injection in force: the operations On refuse
// with Kind, until Until (zero: until cleared). A refused operation
// changes nothing, and a refused fsync makes nothing durable.
type ErrorMode struct {
	Kind  string     `json:"kind"`
	On    string     `json:"on"`
	Until *time.Time `json:"until,omitempty"`
}

// Validate says what is wrong with m.
func (m ErrorMode) Validate() error {
	if m.Kind != KindENOSPC && m.Kind != KindEIO {
		return fmt.Errorf("error kind %q: want %s or %s", m.Kind, KindENOSPC, KindEIO)
	}
	if m.On != OnWrites && m.On != OnFsyncs && m.On != OnBoth {
		return fmt.Errorf("errors on %q: want %s, %s or %s", m.On, OnWrites, OnFsyncs, OnBoth)
	}
	return nil
}

func (m ErrorMode) errno() syscall.Errno {
	if m.Kind == KindENOSPC {
		return syscall.ENOSPC
	}
	return syscall.EIO
}

// SetErrors makes operations fail as m says, replacing the mode in force.
func (t *Tracker) SetErrors(m ErrorMode) error {
	if err := m.Validate(); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.errs = &m
	return nil
}

// ClearErrors ends the error injection.
func (t *Tracker) ClearErrors() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.errs = nil
}

// injected is the errno an operation of class on (OnWrites or OnFsyncs)
// fails with now, or 0. An expired mode is dropped. Callers hold t.mu.
func (t *Tracker) injected(on string) syscall.Errno {
	m := t.errs
	if m == nil {
		return 0
	}
	if m.Until != nil && !t.now().Before(*m.Until) {
		t.errs = nil
		return 0
	}
	if m.On != on && m.On != OnBoth {
		return 0
	}
	return m.errno()
}
