// Package runreport renders a run's report.html from what the run
// directory holds: results.json and test.json (campaign's records),
// history.jsonl (package history) and nodes/*/events.jsonl (package
// eventlog). The page is self-contained: styles and charts are inline
// (SVG drawn by svgplot), it loads nothing and runs no script, so it opens
// from disk anywhere.
//
// It shows, top to bottom: the verdict and each check with its anomalies
// in words and links to Porcupine's visualizations; latency of every
// operation over time and throughput per operation type and outcome, with
// the faults as bands behind them, a row per fault family labelled with
// its targets in words; availability (windows without a successful
// operation, leaderless windows, recovery after each heal) and each node's
// role and term on the same time axis; latency quantiles; the faults as a
// table; and links to every file of the run.
//
// Above DefaultMaxOKPoints successful operations the latency chart draws a
// sample of them (every fail and info operation is always drawn) and says
// so, which keeps the report of a long run small.
package runreport
