package node

import (
	"log/slog"
	"time"

	"chaos/internal/fakeclock"
)

// clockFile makes the node honour a fake clock's control file (package
// fakeclock; Config.ClockFile), as libfaketime does for programs that read
// the time through libc: chaos's faketime clock strategy rewrites the
// file, and the node's clock (skewClock, which its raft ticker runs on)
// follows. The event loop polls it every quarter of a heartbeat.
//
// When the file's spec changes, its offset applies at once (from the true
// clock, as libfaketime's does) and its rate from that moment: the clock
// goes on from where it was, so a rate needs no start recorded in the
// file. Two changes between polls count as the last one. A missing file is
// no change; a spec the node cannot read is logged once and ignored. The
// clock hook and the file both set the clock: the last change wins.
type clockFile struct {
	path  string
	read  func(name string) ([]byte, error)
	clock *skewClock
	log   *slog.Logger
	last  fakeclock.Spec // the spec applied last; the true clock at first
	bad   string         // the last content refused, so that it is logged once
}

func newClockFile(path string, read func(string) ([]byte, error), clock *skewClock, log *slog.Logger) *clockFile {
	return &clockFile{path: path, read: read, clock: clock, log: log, last: fakeclock.Spec{Rate: 1}}
}

// poll reads the file and applies its spec if it changed.
func (f *clockFile) poll() {
	b, err := f.read(f.path)
	if err != nil {
		return
	}
	file, err := fakeclock.Parse(b)
	if err != nil {
		if string(b) != f.bad {
			f.bad = string(b)
			f.log.Warn("fake clock: spec ignored", "file", f.path, "err", err)
		}
		return
	}
	spec := fakeclock.Spec{Offset: file.Offset, Rate: file.Rate}
	if spec == f.last {
		return
	}
	f.last = spec
	f.clock.setTo(spec.Rate, spec.Offset)
	f.log.Warn("fake clock", "file", f.path, "spec", spec.String())
}

// setTo makes the clock rate times true time from now on, offset away
// from the clock without offsets (which goes on from where it was).
func (c *skewClock) setTo(rate float64, offset time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.virtBase = c.elapsedLocked() - c.offset
	c.base = c.now()
	c.rate = rate
	c.offset = offset
}
