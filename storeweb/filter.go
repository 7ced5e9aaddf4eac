package storeweb

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Filter picks the runs the listing shows, from its query parameters.
type Filter struct {
	// Verdict is one of Verdicts, or "" for every run.
	Verdict string
	// Name is a part of the test name, matched ignoring case; "" matches
	// every name.
	Name string
}

// Verdicts are the values ?verdict= takes.
func Verdicts() []string { return []string{Valid, Invalid, Unknown, Broken} }

// ParseFilter reads ?verdict= and ?name= from q. A verdict that is none
// of Verdicts is an error saying which are.
func ParseFilter(q url.Values) (Filter, error) {
	f := Filter{Verdict: q.Get("verdict"), Name: q.Get("name")}
	if f.Verdict != "" && !slices.Contains(Verdicts(), f.Verdict) {
		return Filter{}, fmt.Errorf("verdict %q: want one of %s, or none for every run", f.Verdict, strings.Join(Verdicts(), ", "))
	}
	return f, nil
}

// Match says whether r passes the filter.
func (f Filter) Match(r Run) bool {
	if f.Verdict != "" && r.Verdict != f.Verdict {
		return false
	}
	return strings.Contains(strings.ToLower(r.Name), strings.ToLower(f.Name))
}
