package foreignlog

import (
	"bytes"
	"fmt"
	"strings"

	"chaos/internal/inputfile"
)

// Log is one file, read.
type Log struct {
	Path   string  `json:"path"`
	Format string  `json:"format"`
	Stats  Stats   `json:"stats"`
	Events []Event `json:"-"`
}

// MaxFileBytes bounds one log file: the file is held in memory whole with
// its events. A long run's events.jsonl holds a few hundred bytes per log
// entry per node, a few hundred MiB for millions of operations.
const MaxFileBytes = 1 << 30

// ReadFile reads and parses one file. format names the parser; "" detects
// it. Errors name the file and, for unknown input, the formats tried. A
// path that is not a regular file (a device, a pipe) or holds more than
// MaxFileBytes is refused before it is read (inputfile.ErrNotRegular,
// inputfile.ErrTooLarge).
func ReadFile(path, format string) (Log, error) {
	data, err := inputfile.ReadFile(path, MaxFileBytes)
	if err != nil {
		return Log{}, err
	}
	return ReadBytes(path, data, format)
}

// ReadBytes is ReadFile on data already read; path is only used in messages
// and events.
func ReadBytes(path string, data []byte, format string) (Log, error) {
	tried := strings.Join(FormatNames(), ", ")
	if len(bytes.TrimSpace(data)) == 0 {
		return Log{}, fmt.Errorf("%s: empty file (nothing to read in any format: %s)", path, tried)
	}
	var p Parser
	if format == "" {
		if p = Detect(data); p == nil {
			return Log{}, fmt.Errorf("%s: not in any known format (tried %s on the first %d lines; force one with --format)", path, tried, sniffLines)
		}
	} else {
		var ok bool
		if p, ok = ByName(format); !ok {
			return Log{}, fmt.Errorf("unknown format %q (known: %s)", format, tried)
		}
		tried = format
	}
	evs, st, err := p.Parse(bytes.NewReader(data))
	if err != nil {
		return Log{}, fmt.Errorf("%s: format %s: %w", path, p.Name(), err)
	}
	if st.Parsed == 0 {
		return Log{}, fmt.Errorf("%s: no line is in format %s (tried %s)", path, p.Name(), tried)
	}
	for i := range evs {
		evs[i].File = path
	}
	return Log{Path: path, Format: p.Name(), Stats: st, Events: evs}, nil
}

// Unparsed describes a log's unrecognised lines for a person, or "" when
// there are none.
func (l Log) Unparsed() string {
	if l.Stats.Unparsed == 0 {
		return ""
	}
	var nums []string
	for _, n := range l.Stats.FirstUnparsed {
		nums = append(nums, fmt.Sprint(n))
	}
	more := ""
	if l.Stats.Unparsed > len(nums) {
		more = ", ..."
	}
	return fmt.Sprintf("%s: %d of %d non-blank lines are not in format %s (lines %s%s)",
		l.Path, l.Stats.Unparsed, l.Stats.Parsed+l.Stats.Unparsed, l.Format, strings.Join(nums, ", "), more)
}

// Report is the analysis of one or more logs of one run.
type Report struct {
	Logs   []Log   `json:"files"`
	Facts  Facts   `json:"facts"`
	Events []Event `json:"-"`
}

// NewReport analyses logs together (the event logs of one run's nodes, or a
// single file).
func NewReport(logs ...Log) Report {
	var evs []Event
	for _, l := range logs {
		evs = append(evs, l.Events...)
	}
	f := Analyze(evs)
	return Report{Logs: logs, Facts: f, Events: evs}
}
