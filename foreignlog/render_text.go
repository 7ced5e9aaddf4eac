package foreignlog

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// offset formats an offset from the start of a log.
func offset(d time.Duration) string {
	return fmt.Sprintf("+%.3fs", d.Seconds())
}

// termRanges writes terms compactly: "3, 5-9, 12".
func termRanges(terms []int) string {
	var parts []string
	for i := 0; i < len(terms); {
		j := i
		for j+1 < len(terms) && terms[j+1] == terms[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(terms[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", terms[i], terms[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// Summary writes the facts of a report for a person: the logs read, then
// leaders, leaderless windows, term churn, membership, faults and the
// test's own notes, each a section of its own.
func Summary(w io.Writer, r Report) {
	f := r.Facts
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	for _, l := range r.Logs {
		p("== %s: format %s, %d lines (%d parsed, %d not parsed)\n", l.Path, l.Format, l.Stats.Lines, l.Stats.Parsed, l.Stats.Unparsed)
		if u := l.Unparsed(); u != "" {
			p("   %s\n", u)
		}
	}
	if len(r.Events) == 0 {
		p("No Raft events (roles, votes, crashes) found.\n")
		return
	}
	p("Span %s from %s; nodes: %s\n", f.Span.Round(time.Millisecond), f.Start.Format("2006-01-02 15:04:05.000000"), strings.Join(f.Nodes, " "))
	leadersText(w, f)
	leaderlessText(w, f)
	churnText(w, f.Churn)
	membershipText(w, f.Membership)
	faultsText(w, f)
	if len(f.Notes) > 0 {
		p("\nTest output:\n")
		for _, n := range f.Notes {
			p("  line %d: %s\n", n.Line, n.Text)
		}
	}
}

// leadersText writes each term's leader, and the terms that had two.
func leadersText(w io.Writer, f Facts) {
	fmt.Fprintf(w, "\nLeaders per term:\n")
	if len(f.Leaders) == 0 {
		fmt.Fprintf(w, "  none: no node became leader\n")
	}
	for _, t := range f.Leaders {
		fmt.Fprintf(w, "  term %-4d node %-4s %s .. %s (%s, %s)\n", t.Term, t.Node, offset(t.Start), offset(t.End), (t.End - t.Start).Round(time.Millisecond), t.EndedBy)
	}
	if len(f.TwoLeaderTerms) == 0 {
		fmt.Fprintf(w, "Two leaders in one term: none\n")
	} else {
		fmt.Fprintf(w, "TWO LEADERS IN ONE TERM: terms %s\n", termRanges(f.TwoLeaderTerms))
	}
}

// leaderlessText writes the windows without a leader and their share of
// the log.
func leaderlessText(w io.Writer, f Facts) {
	var total time.Duration
	for _, l := range f.Leaderless {
		total += l.End - l.Start
	}
	fmt.Fprintf(w, "\nLeaderless windows: %d, %s in all", len(f.Leaderless), total.Round(time.Millisecond))
	if f.Span > 0 {
		fmt.Fprintf(w, " (%.0f%% of the log)", 100*total.Seconds()/f.Span.Seconds())
	}
	fmt.Fprintf(w, "\n")
	for _, l := range f.Leaderless {
		open := ""
		if l.Open {
			open = ", still none at the end"
		}
		fmt.Fprintf(w, "  %s .. %s (%s), terms %d..%d%s\n", offset(l.Start), offset(l.End), (l.End - l.Start).Round(time.Millisecond), l.FromTerm, l.ToTerm, open)
	}
}

// churnText writes how fast terms went by and which had no leader.
func churnText(w io.Writer, c Churn) {
	fmt.Fprintf(w, "\nTerm churn: terms %d..%d, %.2f terms/s\n", c.FirstTerm, c.LastTerm, c.TermsPerSecond)
	if len(c.LeaderlessTerms) == 0 {
		fmt.Fprintf(w, "  every term had a leader\n")
		return
	}
	run := c.LongestLeaderlessRun
	fmt.Fprintf(w, "  %d terms without a leader: %s; longest run %d terms (%d..%d)\n", len(c.LeaderlessTerms), termRanges(c.LeaderlessTerms), run[1]-run[0]+1, run[0], run[1])
}

// faultsText writes the fault counts, then each node's faults in order.
func faultsText(w io.Writer, f Facts) {
	fmt.Fprintf(w, "\nCrashes, stops, restarts and network faults: %s\n", faultCounts(f.Faults))
	for _, n := range f.Nodes {
		var parts []string
		for _, x := range f.Faults {
			if x.Node == n {
				k := x.Kind
				if x.Inferred {
					k += " (inferred)"
				}
				parts = append(parts, k+" "+offset(x.At))
			}
		}
		if parts != nil {
			fmt.Fprintf(w, "  node %s: %s\n", n, strings.Join(parts, ", "))
		}
	}
}

// faultCounts summarises faults by kind: "3 crash, 3 restart".
func faultCounts(faults []Fault) string {
	if len(faults) == 0 {
		return "none"
	}
	var kinds []string
	count := map[string]int{}
	for _, f := range faults {
		if count[f.Kind] == 0 {
			kinds = append(kinds, f.Kind)
		}
		count[f.Kind]++
	}
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", count[k], k))
	}
	return strings.Join(parts, ", ")
}

// membershipText writes the configurations of a log, when it has any.
func membershipText(w io.Writer, ms []Membership) {
	if len(ms) == 0 {
		return
	}
	fmt.Fprintf(w, "\nMembership over time: %d configurations\n", len(ms))
	for k, m := range ms {
		fmt.Fprintf(w, "  #%-3d %s %s", k+1, offset(m.At), m)
		if o := m.origin(); o != "" {
			fmt.Fprintf(w, " (%s)", o)
		}
		fmt.Fprintf(w, "; switched to by %s\n", strings.Join(m.Nodes, " "))
	}
}

// TimelineText writes the per-node timeline as a table, one column per
// node, and a last column, MEMBERS, with the configurations the cluster
// went to (when the log has any).
func TimelineText(w io.Writer, r Report) {
	rows := Timeline(r)
	width := 14
	fmt.Fprintf(w, "%-11s", "TIME")
	for _, n := range r.Facts.Nodes {
		fmt.Fprintf(w, " | %-*s", width, n)
	}
	members := len(r.Facts.Membership) > 0
	if members {
		fmt.Fprint(w, " | MEMBERS")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, strings.Repeat("-", 11+len(r.Facts.Nodes)*(width+3)))
	for _, row := range rows {
		fmt.Fprintf(w, "%-11s", offset(time.Duration(row.At)))
		for _, c := range row.Cells {
			fmt.Fprintf(w, " | %-*s", width, c.Text)
		}
		if members && row.Members != "" {
			fmt.Fprint(w, " | "+row.Members)
		}
		fmt.Fprintln(w)
	}
}
