package foreignlog

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// Stats counts the lines of one file.
type Stats struct {
	Lines    int `json:"lines"`    // all lines, blank ones included
	Parsed   int `json:"parsed"`   // lines the format recognised (with or without an event)
	Unparsed int `json:"unparsed"` // non-blank lines the format did not recognise
	// FirstUnparsed holds the numbers of the first few unparsed lines.
	FirstUnparsed []int `json:"first_unparsed,omitempty"`
}

// maxFirstUnparsed bounds Stats.FirstUnparsed.
const maxFirstUnparsed = 10

// unparsed records that line n was not recognised, keeping FirstUnparsed
// the lowest numbers in order (a table row is reported at its first line,
// after later lines may have been).
func (s *Stats) unparsed(n int) {
	s.Unparsed++
	i := sort.SearchInts(s.FirstUnparsed, n)
	if i >= maxFirstUnparsed {
		return
	}
	s.FirstUnparsed = slices.Insert(s.FirstUnparsed, i, n)
	if len(s.FirstUnparsed) > maxFirstUnparsed {
		s.FirstUnparsed = s.FirstUnparsed[:maxFirstUnparsed]
	}
}

// Parser reads one log format.
type Parser interface {
	// Name is the format's name, as --format takes it.
	Name() string
	// Detect reports, cheaply, whether the first lines of a file look like
	// this format.
	Detect(firstLines []string) bool
	// Parse reads a whole log. It fails only when the input cannot be read;
	// lines it does not recognise are counted in Stats.
	Parse(r io.Reader) ([]Event, Stats, error)
}

// Parsers returns every known format, most specific first (the order
// detection tries them in).
func Parsers() []Parser {
	return []Parser{chaosParser{}, tableParser{}, splayParser{}, etcdParser{}, courseParser{}, elibenParser{}}
}

// FormatNames returns the names of Parsers, in order.
func FormatNames() []string {
	var names []string
	for _, p := range Parsers() {
		names = append(names, p.Name())
	}
	return names
}

// ByName returns the parser of the named format.
func ByName(name string) (Parser, bool) {
	for _, p := range Parsers() {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}

// sniffLines is how many lines Detect is shown.
const sniffLines = 64

// Detect returns the first parser whose Detect accepts the first lines of
// data, or nil.
func Detect(data []byte) Parser {
	var first []string
	sc := newScanner(strings.NewReader(string(data)))
	for len(first) < sniffLines && sc.Scan() {
		first = append(first, sc.Text())
	}
	for _, p := range Parsers() {
		if p.Detect(first) {
			return p
		}
	}
	return nil
}

// newScanner returns a line scanner that accepts long lines (etcd's debug
// lines run to tens of kilobytes).
func newScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	return sc
}

// scanLines calls fn for each line of r with its 1-based number and counts
// the lines in st: blank lines are neither parsed nor unparsed; otherwise a
// line is parsed when fn returns true.
func scanLines(r io.Reader, st *Stats, fn func(n int, line string) bool) error {
	sc := newScanner(r)
	for sc.Scan() {
		st.Lines++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if fn(st.Lines, line) {
			st.Parsed++
		} else {
			st.unparsed(st.Lines)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", st.Lines+1, err)
	}
	return nil
}

// countMatches returns how many of lines satisfy ok.
func countMatches(lines []string, ok func(string) bool) int {
	n := 0
	for _, l := range lines {
		if ok(l) {
			n++
		}
	}
	return n
}
