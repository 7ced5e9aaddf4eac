package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"chaos/foreignlog"
	"chaos/internal/atomicfile"
	"chaos/internal/termsafe"
)

// logsOptions are the flags of `chaos logs`.
type logsOptions struct {
	format string
	html   string
	json   bool
}

func newLogsCmd() *cobra.Command {
	var o logsOptions
	cmd := &cobra.Command{
		Use:   "logs FILE...",
		Short: "Read Raft logs and explain them: leaders per term, leaderless windows, churn, crashes, membership",
		Long: `logs reads Raft logs and prints, for a person, who led which term and when,
the windows in which the cluster had no leader, how fast terms went by and the
longest run of terms without a leader, the crashes, stops and restarts of each
node, the membership over time (the configurations nodes switched to, from
chaos-node's conf events and etcd's "switched to configuration" lines), any
term with two leaders, and a timeline with one column per node (and one for
the membership, when the logs have configurations).

Formats (detected from the first lines; --format forces one): ` + strings.Join(foreignlog.FormatNames(), ", ") + `.
chaos is chaos-node's events.jsonl; the event logs of several nodes of one run
are analysed together, other files one by one. Lines a format does not
recognise are counted and reported on stderr.

Exit status: 0 the logs were read and no term had two leaders; 1 some term had
two leaders (an anomaly: the report says which), so CI can gate on it; 254 a
file could not be read, is empty or is in no known format; 255 the --html page
could not be written.`,
		Example: `  chaos logs runs/latest/nodes/*/events.jsonl
  chaos logs --html page.html raft.log
  chaos logs --json --format course test.log`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runLogs(cmd, o, args) },
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "", "force the format: "+strings.Join(foreignlog.FormatNames(), ", "))
	f.StringVar(&o.html, "html", "", "also write a page with the timeline coloured by role to this file (- for stdout)")
	f.BoolVar(&o.json, "json", false, "print the facts as JSON instead of text")
	return cmd
}

// runLogs reads every file, then prints the reports.
func runLogs(cmd *cobra.Command, o logsOptions, paths []string) error {
	if o.format != "" {
		if _, ok := foreignlog.ByName(o.format); !ok {
			return usageErrorf("--format %q: want one of %s", o.format, strings.Join(foreignlog.FormatNames(), ", "))
		}
	}
	var logs []foreignlog.Log
	for _, p := range paths {
		l, err := foreignlog.ReadFile(p, o.format)
		if err != nil {
			return usageErrorf("%v", err)
		}
		if u := l.Unparsed(); u != "" {
			fmt.Fprintln(termsafe.NewWriter(cmd.ErrOrStderr()), "chaos logs: warning:", u)
		}
		logs = append(logs, l)
	}
	reports := groupReports(logs)
	out := cmd.OutOrStdout()
	if o.html != "" {
		if err := writeHTML(out, o.html, reports); err != nil {
			return setupError(err)
		}
		if o.html == "-" {
			return verdict(reports)
		}
	}
	if o.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(reports); err != nil {
			return err
		}
		return verdict(reports)
	}
	// The text holds node names, terms and lines from the logs: escaped, so
	// that no log can act on the terminal (the JSON and HTML are encoded).
	text := termsafe.NewWriter(out)
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(text)
		}
		foreignlog.Summary(text, r)
		fmt.Fprintln(text, "\nTimeline:")
		foreignlog.TimelineText(text, r)
	}
	return verdict(reports)
}

// verdict is the exit status of reports already printed: invalid (1,
// silently) when some report has a term with two leaders, else nil.
func verdict(reports []foreignlog.Report) error {
	for _, r := range reports {
		if len(r.Facts.TwoLeaderTerms) > 0 {
			return &exitError{code: exitInvalid}
		}
	}
	return nil
}

// groupReports analyses the chaos event logs together (they are the nodes of
// one run) and every other file on its own, in the order given.
func groupReports(logs []foreignlog.Log) []foreignlog.Report {
	var reports []foreignlog.Report
	var events []foreignlog.Log
	for _, l := range logs {
		if l.Format == "chaos" {
			events = append(events, l)
			continue
		}
		reports = append(reports, foreignlog.NewReport(l))
	}
	if events != nil {
		reports = append([]foreignlog.Report{foreignlog.NewReport(events...)}, reports...)
	}
	return reports
}

// writeHTML writes the page to path, or to out for "-".
func writeHTML(out io.Writer, path string, reports []foreignlog.Report) error {
	if path == "-" {
		return foreignlog.HTML(out, reports)
	}
	return atomicfile.WriteFunc(path, 0o644, func(w io.Writer) error { return foreignlog.HTML(w, reports) })
}
