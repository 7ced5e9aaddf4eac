package checker

import (
	"fmt"
	"strings"
)

// Finder is implemented by the details of checks outside this package,
// so Findings can describe them too.
type Finder interface {
	Findings() []string
}

// Findings says in a few lines, for a person, what a check found: the
// anomalies in words, where to look, and why a verdict is unknown.
func Findings(details any) []string {
	var lines []string
	switch d := details.(type) {
	case Finder:
		return d.Findings()
	case *LinearizableDetails:
		lines = append(lines, fmt.Sprintf("%d keys (%d decided by the order of writes, %d by search), %d operations, checked in %.1f s",
			d.Partitions, d.DecidedBy[AlgorithmWriteOrder], d.DecidedBy[AlgorithmSearch], d.Searched, d.DurationS))
		if n := len(d.NotUnique); n > 0 {
			lines = append(lines, fmt.Sprintf("%d keys were searched because some value was written twice: %s", n, listSome(d.NotUnique, 5)))
		}
		for _, f := range d.Failures {
			lines = append(lines, f.Explanation)
			if f.Visualization != "" {
				lines = append(lines, "  see "+f.Visualization)
			}
		}
		if n := len(d.InvalidKeys) - len(d.Failures); n > 0 {
			lines = append(lines, fmt.Sprintf("and %d more keys that are not linearizable (see results.json)", n))
		}
		if d.Reason != "" {
			lines = append(lines, d.Reason)
		}
	case *SetDetails:
		lines = append(lines, fmt.Sprintf("%d lost, %d unexpected, %d duplicated, %d recovered of %d acknowledged adds",
			len(d.Lost), len(d.Unexpected), len(d.Duplicates), len(d.Recovered), d.Acknowledged))
		if d.Reason != "" {
			lines = append(lines, d.Reason)
		}
	case *StatsDetails:
		if len(d.NeverSucceeded) > 0 {
			lines = append(lines, fmt.Sprintf("never succeeded: %v", d.NeverSucceeded))
		}
		if d.Reason != "" {
			lines = append(lines, d.Reason)
		}
	}
	return lines
}

// listSome joins the first n of items, saying how many more there are.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
