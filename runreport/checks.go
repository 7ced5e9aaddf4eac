package runreport

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"chaos/checker"
	"chaos/raftcheck"
)

// Check is one check of results.json as the page shows it.
type Check struct {
	Name, Verdict, Class string
	Findings             []Finding
}

// Finding is a line of what a check found, in words, and the
// visualization it points to (relative to the run directory), if any.
type Finding struct{ Text, Link string }

// detailsOf decodes a check's details from results.json into the type its
// check writes, as the summary of `chaos run` does; nil for a check it
// does not know. Details that do not decode are an error, which the
// report shows (never a check with its findings silently blank).
func detailsOf(name string, raw json.RawMessage) (any, error) {
	var d any
	switch name {
	case "linearizable":
		d = &checker.LinearizableDetails{}
	case "set":
		d = &checker.SetDetails{}
	case "list-append":
		d = &checker.ListAppendDetails{}
	case "stats":
		d = &checker.StatsDetails{}
	case "raft":
		d = &raftcheck.RaftDetails{}
	case "availability":
		d = &raftcheck.AvailabilityDetails{}
	default:
		return nil, nil
	}
	if err := json.Unmarshal(raw, d); err != nil {
		return nil, fmt.Errorf("the %s check's details do not decode: %w", name, err)
	}
	return d, nil
}

// verdictOf is the verdict in a check's JSON: unknown, with why, when it
// does not decode.
func verdictOf(name string, raw json.RawMessage) (checker.Validity, error) {
	var c struct {
		Valid checker.Validity `json:"valid"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return checker.Unknown, fmt.Errorf("the %s check's verdict does not decode: %w", name, err)
	}
	return c.Valid, nil
}

// verdictClass is the CSS class of a verdict.
func verdictClass(v checker.Validity) string {
	switch v {
	case checker.Valid:
		return "valid"
	case checker.Invalid:
		return "invalid"
	}
	return "unknown"
}

// checks are the checks of results.json in name order, each with its
// findings; a line "  see FILE" becomes the link of the finding before it.
func checks(results map[string]json.RawMessage) []Check {
	var out []Check
	for _, name := range slices.Sorted(maps.Keys(results)) {
		v, verr := verdictOf(name, results[name])
		c := Check{Name: name, Verdict: v.String(), Class: verdictClass(v)}
		details, derr := detailsOf(name, results[name])
		for _, err := range []error{verr, derr} {
			if err != nil {
				c.Findings = append(c.Findings, Finding{Text: err.Error()})
			}
		}
		for _, l := range checker.Findings(details) {
			if file, ok := strings.CutPrefix(l, "  see "); ok {
				if n := len(c.Findings); n > 0 && c.Findings[n-1].Link == "" {
					c.Findings[n-1].Link = file
				} else {
					c.Findings = append(c.Findings, Finding{Link: file})
				}
				continue
			}
			c.Findings = append(c.Findings, Finding{Text: l})
		}
		out = append(out, c)
	}
	return out
}
