package foreignlog

import (
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// tableParser reads eliben/raft's test log rendered as a box-drawn table
// with a TIME column and one column per node (seed 001). A row's cells wrap
// over several lines; the parser joins them and reads each cell as the
// node's log message.
type tableParser struct{}

// Name implements Parser.
func (tableParser) Name() string { return "table" }

// Detect implements Parser: a box-drawn header whose first column is TIME.
func (tableParser) Detect(first []string) bool {
	return countMatches(first, func(l string) bool {
		return strings.HasPrefix(l, "│") && len(tableCells(l)) > 1 && strings.TrimSpace(tableCells(l)[0]) == "TIME"
	}) > 0
}

// tableCells splits a "│ a │ b │" line into its cells, padding included.
// It returns nil for a line that is not a row line.
func tableCells(line string) []string {
	line = strings.TrimRight(line, " ")
	if !strings.HasPrefix(line, "│") || !strings.HasSuffix(line, "│") || utf8.RuneCountInString(line) < 2 {
		return nil
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(line, "│"), "│")
	return strings.Split(inner, "│")
}

// cellText removes the one-character padding either side of a cell line.
func cellText(cell string) string {
	r := []rune(cell)
	if len(r) < 2 {
		return strings.TrimSpace(cell)
	}
	return string(r[1 : len(r)-1])
}

// tableRow is a row being assembled from its lines.
type tableRow struct {
	line  int
	time  string
	cells []string
}

// Parse implements Parser.
func (tableParser) Parse(r io.Reader) ([]Event, Stats, error) {
	var (
		evs   []Event
		st    Stats
		nodes []string
		row   *tableRow
		last  time.Time
	)
	flush := func() {
		if row == nil {
			return
		}
		defer func() { row = nil }()
		if nodes == nil {
			for _, c := range row.cells {
				nodes = append(nodes, strings.TrimSpace(c))
			}
			return
		}
		t, err := time.Parse("15:04:05.999999999", strings.TrimSpace(row.time))
		if err != nil || len(row.cells) != len(nodes) {
			st.Parsed--
			st.unparsed(row.line)
			return
		}
		last = t
		for i, c := range row.cells {
			if ev, ok := elibenEvent(nodes[i], strings.TrimSpace(c)); ok {
				ev.Time, ev.Line = t, row.line
				evs = append(evs, ev)
			}
		}
	}
	err := scanLines(r, &st, func(n int, line string) bool {
		switch {
		case strings.HasPrefix(line, "┌"):
			return true
		case strings.HasPrefix(line, "├"), strings.HasPrefix(line, "└"):
			flush()
			return true
		case strings.HasPrefix(line, "│"):
			cells := tableCells(line)
			if len(cells) < 2 {
				return false
			}
			if row == nil {
				row = &tableRow{line: n, time: cells[0], cells: make([]string, len(cells)-1)}
			} else if len(cells)-1 != len(row.cells) {
				return false
			}
			for i, c := range cells[1:] {
				row.cells[i] += cellText(c)
			}
			return true
		}
		note, ok := goTestLine(line)
		if note == "" && (strings.HasPrefix(line, "PASS ") || strings.HasPrefix(line, "FAIL ")) {
			note, ok = strings.TrimSpace(line), true
		}
		if note != "" {
			evs = append(evs, Event{Kind: KindNote, Text: note, Line: n, Time: last})
		}
		return ok
	})
	flush()
	return evs, st, err
}
