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
// The history is read once, op by op, into a Digest whose size does not
// grow with the operations (see Digest); `chaos check` hands the Digest
// the ops as its check reads them (WriteDigested), so the file is not read
// twice. Above maxSampled operations of a kind (ok, or fail and info) the
// latency chart draws an even sample of them, and besides the slowest of
// each type and outcome in every pixel column, and says so (Thinning):
// the report of a long run stays small and cheap.
package runreport
