package storeweb

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"

	"chaos/campaign"
	"chaos/checker"
	"chaos/testrun/runrecord"
)

// The data each template of templates/ is executed with.
type (
	indexPage struct {
		Store     string
		Filter    Filter
		Verdicts  []string
		Rows      template.HTML // the table rows of the runs that pass Filter (rowCache)
		Shown     int           // the runs that pass Filter
		Total     int           // every run of the store
		Campaigns []campaignGroup
	}
	runPage struct {
		Run
		Test    *runrecord.TestRecord // nil when test.json cannot be read
		Files   []File
		Missing string // why the files cannot be listed; "" when they can
	}
	campaignPage struct {
		campaignView
		Files []File
	}
	errorPage struct {
		Status  int
		Message string
	}
)

// campaignGroup is a campaign's newest record, with links to the older.
type campaignGroup struct {
	Latest  campaignView
	Earlier []Campaign
}

// campaignView is a campaign with its table's rows.
type campaignView struct {
	Campaign
	Rows []testRow
}

// testRow is a test of a campaign's table, with links to its runs.
type testRow struct {
	campaign.TestResult
	Result string // Outcome, or "skipped"
	Runs   []runLink
}

// runLink is a run of a campaign's test; Href is "" when the run is not in
// this store (it was written elsewhere, or it crashed before making one).
type runLink struct {
	Verdict, Title, Href string
}

// groupCampaigns groups campaigns (newest first) by name, in the order of
// their newest records, and links their runs to runs.
func groupCampaigns(camps []Campaign, runs map[string]Run) []campaignGroup {
	var groups []campaignGroup
	at := map[string]int{}
	for _, c := range camps {
		if i, ok := at[c.Name]; ok {
			groups[i].Earlier = append(groups[i].Earlier, c)
			continue
		}
		at[c.Name] = len(groups)
		groups = append(groups, campaignGroup{Latest: viewCampaign(c, runs)})
	}
	return groups
}

// viewCampaign makes c's table rows, linking its runs to runs.
func viewCampaign(c Campaign, runs map[string]Run) campaignView {
	v := campaignView{Campaign: c}
	for _, t := range c.Record.Tests {
		row := testRow{TestResult: t, Result: t.Outcome}
		if t.Skipped != "" {
			row.Result = "skipped"
		}
		for _, r := range t.Runs {
			link := runLink{Verdict: r.Verdict, Title: fmt.Sprintf("seed %d: %s", r.Seed, r.Verdict)}
			if r.Summary != "" {
				link.Title += "\n" + r.Summary
			}
			if run, ok := runOf(r.Dir, runs); ok {
				link.Href = run.Href()
			}
			row.Runs = append(row.Runs, link)
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// byPath indexes runs by "<name>/<time>".
func byPath(runs []Run) map[string]Run {
	m := make(map[string]Run, len(runs))
	for _, r := range runs {
		m[r.Name+"/"+r.Time] = r
	}
	return m
}

// templateFuncs format the figures the pages show.
func templateFuncs() map[string]any {
	return map[string]any{
		"when": formatWhen,
		"secs": formatSecs,
		"maybeSecs": func(s *float64) string {
			if s == nil {
				return "-"
			}
			return formatSecs(*s)
		},
		"rate":   func(r float64) string { return fmt.Sprintf("%.0f", r) },
		"ops":    formatOps,
		"faults": formatFaults,
		"fileHref": func(dir, p string) string {
			segs := strings.Split(p, "/")
			for i, s := range segs {
				segs[i] = url.PathEscape(s)
			}
			return dir + strings.Join(segs, "/")
		},
		"size": func(n int64) string {
			switch {
			case n >= 1<<20:
				return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
			case n >= 1<<10:
				return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
			}
			return fmt.Sprintf("%d B", n)
		},
	}
}

// formatWhen is a time as the pages show it, "-" for none.
func formatWhen(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// formatSecs is a duration in seconds as the pages show it.
func formatSecs(s float64) string { return fmt.Sprintf("%.1f s", s) }

// formatOps is a run's op counts as the pages show them.
func formatOps(c checker.Counts) string {
	return fmt.Sprintf("%d: %d ok, %d fail, %d info", c.Invoke, c.OK, c.Fail, c.Info)
}

// formatFaults is a run's faults by family as the pages show them.
func formatFaults(fcs []checker.FaultCount) string {
	if len(fcs) == 0 {
		return "none"
	}
	parts := make([]string, len(fcs))
	for i, fc := range fcs {
		parts[i] = fmt.Sprintf("%s ×%d", fc.Family, fc.Count)
	}
	return strings.Join(parts, ", ")
}
