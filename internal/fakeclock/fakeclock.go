// Package fakeclock is the control file of a fake clock: the file that
// libfaketime (Debian's libfaketime, preloaded into a node's processes)
// and chaos-node (natively) read a node's time from, and that chaos's
// clock faults rewrite. It is the one place that knows the file's syntax.
//
// The file holds comment lines (starting with #) and one spec line, the
// first line that is no comment: an offset of the true clock in seconds
// ("+2", "-1.5", "+0.25s") and, optionally, a rate ("x0.5": the clock
// runs at half speed). chaos always writes both ("+0 x1" is the true
// clock): a spec without a rate keeps the rate libfaketime had before.
//
// The two readers anchor a rate differently. libfaketime computes
//
//	fake(t) = S + offset + rate*(t - S)
//
// where S is when the node's first process loaded it (libfaketime shares
// S with the processes that process starts): a new rate bends the whole
// time since S, and the clock jumps. So chaos records S in the file (the
// "# started" line, written when the node starts) and, when it changes
// the rate, changes the offset so that the clock goes on from where it
// was (WithRate). chaos-node anchors a new rate at the moment it sees the
// file change, and needs no such compensation.
package fakeclock

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Mechanisms: who reads a node's control file.
const (
	// Libfaketime is Debian's libfaketime, preloaded (LD_PRELOAD) into
	// programs that read the time through libc: it rewrites what
	// clock_gettime, time and gettimeofday answer, and scales sleeps.
	Libfaketime = "libfaketime"
	// Native is chaos-node reading the file itself.
	Native = "native"
)

// EnvFile is the environment variable that names the control file, to
// libfaketime and to chaos-node alike.
const EnvFile = "FAKETIME_TIMESTAMP_FILE"

// startedPrefix starts the comment line that records S.
const startedPrefix = "# started "

// File is a control file's content.
type File struct {
	// Started is S, when the node's processes began reading the file (see
	// the package doc); zero when the file does not say (chaos-node's).
	Started time.Time
	// Offset is added to the true clock.
	Offset time.Duration
	// Rate is how fast the clock runs against the true clock (> 0).
	Rate float64
}

// Reset is the file of the true clock.
func Reset() File { return File{Rate: 1} }

// IsReset reports whether f's clock is the true clock.
func (f File) IsReset() bool { return f.Offset == 0 && f.Rate == 1 }

// Parse reads a control file. Its spec is the first line that is no
// comment; an empty file, or one of comments only, is the true clock (as
// libfaketime reads it). A spec chaos cannot read is an error.
func Parse(b []byte) (File, error) {
	f := Reset()
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(line, startedPrefix) {
			t, err := parseUnix(strings.TrimSpace(strings.TrimPrefix(line, startedPrefix)))
			if err != nil {
				return f, fmt.Errorf("fake clock: %q: %w", line, err)
			}
			f.Started = t
			continue
		}
		// libfaketime skips these lines too: comments, blank lines, and
		// lines that begin with a space.
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == ' ' {
			continue
		}
		spec, err := ParseSpec(line)
		if err != nil {
			return f, err
		}
		f.Offset, f.Rate = spec.Offset, spec.Rate
		return f, nil
	}
	return f, nil
}

// Spec is one spec line: an offset and a rate.
type Spec struct {
	Offset time.Duration
	Rate   float64
}

// ParseSpec reads a spec line: "+N" or "-N" seconds (a fraction allowed,
// an "s" after it too), then optionally " xR" with R > 0. Without a rate
// the rate is 1. libfaketime takes more (minutes, days, absolute dates);
// chaos neither writes nor reads them.
func ParseSpec(line string) (Spec, error) {
	fields := strings.Fields(line)
	bad := func(why string) (Spec, error) {
		return Spec{}, fmt.Errorf("fake clock spec %q: %s; want an offset in seconds and a rate, such as \"+1.5 x1\" or \"-0.2 x0.5\"", line, why)
	}
	if len(fields) == 0 || len(fields) > 2 {
		return bad("want one or two fields")
	}
	off := strings.TrimSuffix(fields[0], "s")
	if off == "" || (off[0] != '+' && off[0] != '-') {
		return bad("the offset must start with + or -")
	}
	secs, err := strconv.ParseFloat(off, 64)
	if err != nil || math.IsInf(secs, 0) || math.IsNaN(secs) || math.Abs(secs) > maxOffsetSeconds {
		return bad("the offset is no number of seconds")
	}
	s := Spec{Offset: time.Duration(math.Round(secs * 1e9)), Rate: 1}
	if len(fields) == 2 {
		r, ok := strings.CutPrefix(fields[1], "x")
		rate, err := strconv.ParseFloat(r, 64)
		if !ok || err != nil || !(rate > 0) || math.IsInf(rate, 0) {
			return bad("the rate must be x followed by a positive number")
		}
		s.Rate = rate
	}
	return s, nil
}

// maxOffsetSeconds bounds an offset (ten years): past it a Duration
// overflows.
const maxOffsetSeconds = 10 * 365 * 24 * 3600

// Format is the file's content: the started line when S is known, then
// the spec.
func (f File) Format() []byte {
	var b bytes.Buffer
	if !f.Started.IsZero() {
		fmt.Fprintf(&b, "%s%d.%09d\n", startedPrefix, f.Started.Unix(), f.Started.Nanosecond())
	}
	b.WriteString(Spec{Offset: f.Offset, Rate: f.Rate}.String())
	b.WriteByte('\n')
	return b.Bytes()
}

// String is the spec line: the offset in seconds, to the microsecond,
// and the rate, such as "+1.5 x1" or "-0.25 x0.05".
func (s Spec) String() string {
	us := s.Offset.Round(time.Microsecond)
	secs := strconv.FormatFloat(us.Seconds(), 'f', -1, 64)
	if us >= 0 {
		secs = "+" + secs
	}
	return secs + " x" + strconv.FormatFloat(s.Rate, 'f', -1, 64)
}

// Bump moves the clock by d, whatever its rate.
func (f File) Bump(d time.Duration) File {
	f.Offset += d
	return f
}

// WithRate makes the clock run at rate from now on, going on from where
// it is at now. For libfaketime (mechanism Libfaketime) that takes the
// offset that makes S + offset + rate*(now - S) the clock it shows at
// now, and needs S; chaos-node anchors the rate itself.
func (f File) WithRate(rate float64, now time.Time, mechanism string) (File, error) {
	if !(rate > 0) {
		return f, fmt.Errorf("fake clock rate %v: want a positive rate", rate)
	}
	if mechanism == Libfaketime {
		if f.Started.IsZero() {
			return f, errNoStart
		}
		since := now.Sub(f.Started)
		f.Offset += time.Duration((f.Rate - rate) * float64(since))
	}
	f.Rate = rate
	return f, nil
}

// errNoStart is why a rate cannot be set for libfaketime.
var errNoStart = errors.New("the control file records no start (\"# started\"), so a new rate would make libfaketime's clock jump; restart the node under the fake clock")

// parseUnix reads "SECONDS.NANOSECONDS" (date +%s.%N).
func parseUnix(s string) (time.Time, error) {
	sec, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}, errors.New("want seconds since 1970 with a fraction, such as 1700000000.123456789")
	}
	var ns int64
	if frac != "" {
		if len(frac) > 9 {
			frac = frac[:9]
		}
		ns, err = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
		if err != nil || ns < 0 {
			return time.Time{}, errors.New("want seconds since 1970 with a fraction, such as 1700000000.123456789")
		}
	}
	return time.Unix(n, ns), nil
}

// ParseUnix reads the time `date +%s.%N` prints.
func ParseUnix(s string) (time.Time, error) { return parseUnix(strings.TrimSpace(s)) }
