package foreignlog

import (
	"io"
	"regexp"
	"time"
)

// elibenParser reads the plain log of github.com/eliben/raft's tests
// (seed 004): "13:43:33.422806 [2] becomes Candidate (currentTerm=1); log={}".
type elibenParser struct{}

var elibenLine = regexp.MustCompile(`^(\d\d:\d\d:\d\d\.\d+) \[(\d+)\] (.*)$`)

// Name implements Parser.
func (elibenParser) Name() string { return "eliben" }

// Detect implements Parser: some of the first lines carry a time of day and
// a bracketed node number.
func (elibenParser) Detect(first []string) bool {
	return countMatches(first, elibenLine.MatchString) > 0
}

// Parse implements Parser. `go test` framing is recognised; anything else
// (notes, shell prompts, markdown) is counted as unparsed.
func (elibenParser) Parse(r io.Reader) ([]Event, Stats, error) {
	var evs []Event
	var st Stats
	var last time.Time
	err := scanLines(r, &st, func(n int, line string) bool {
		m := elibenLine.FindStringSubmatch(line)
		if m == nil {
			note, ok := goTestLine(line)
			if note != "" {
				evs = append(evs, Event{Kind: KindNote, Text: note, Line: n, Time: last})
			}
			return ok
		}
		t, err := time.Parse("15:04:05.999999999", m[1])
		if err != nil {
			return false
		}
		last = t
		if ev, ok := elibenEvent(m[2], m[3]); ok {
			ev.Time, ev.Line = t, n
			evs = append(evs, ev)
		}
		return true
	})
	return evs, st, err
}
