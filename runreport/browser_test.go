package runreport

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/testbed/bedtest"
)

// artifactDir is where tests leave files for a person to look at:
// $CHAOS_ARTIFACTS, else chaos-artifacts in the temporary directory.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("CHAOS_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "chaos-artifacts")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// copyRun copies the stored run under testdata into a fresh directory, so
// that the report is written outside the source tree.
func copyRun(t *testing.T, src string) string {
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// consoleErrors collects what a page reports as errors: console.error,
// uncaught exceptions, and browser log entries of level error (a resource
// that failed to load).
type consoleErrors struct {
	mu   sync.Mutex
	msgs []string
}

func (c *consoleErrors) listen(ev any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, string(a.Value))
			}
			c.msgs = append(c.msgs, "console: "+strings.Join(parts, " "))
		}
	case *runtime.EventExceptionThrown:
		c.msgs = append(c.msgs, "exception: "+e.ExceptionDetails.Text)
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError {
			c.msgs = append(c.msgs, "log: "+e.Entry.Text+" "+e.Entry.URL)
		}
	}
}

func (c *consoleErrors) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.msgs...)
}

// domFacts is what the test reads from the rendered page.
type domFacts struct {
	Verdict        string `json:"verdict"`
	LatencyPoints  int    `json:"latencyPoints"`
	ThroughputLine int    `json:"throughputLines"`
	LatencyBands   int    `json:"latencyBands"`
	BandLabels     string `json:"bandLabels"`
	Shades         int    `json:"shades"`
	Lanes          int    `json:"lanes"`
	KilledLanes    int    `json:"killedLanes"`
	AvailRows      int    `json:"availRows"`
	Checks         int    `json:"checks"`
	Thinning       string `json:"thinning"`
	Faults         int    `json:"faultRows"`
	LatencyWidth   int    `json:"latencyWidth"`
}

const domScript = `(() => {
  const q = s => document.querySelectorAll(s);
  const text = s => Array.from(q(s)).map(e => e.textContent).join(" | ");
  return {
    verdict: document.getElementById("verdict").textContent,
    latencyPoints: q("svg#latency path.points").length,
    throughputLines: q("svg#throughput path.line").length,
    latencyBands: q("svg#latency g.band g.span").length,
    bandLabels: text("svg#latency g.band g.span text"),
    shades: q("svg#latency rect.shade").length,
    lanes: q("svg#node-timeline g.lane").length,
    killedLanes: q("svg#node-timeline g.span.kill").length,
    availRows: q("svg#availability g.row").length,
    checks: q("#checks tr.check").length,
    thinning: document.getElementById("thinning").textContent,
    faultRows: q("#faults tr.fault").length,
    latencyWidth: Math.round(document.getElementById("latency").getBoundingClientRect().width),
  };
})()`

// The report of a real stored run (a short local run with kills and
// partitions, under testdata) renders in headless Chromium without a
// console error, with the verdict, the latency and throughput charts, the
// fault bands labelled in words, the node timeline and the tables; a
// screenshot is left as an artifact.
func TestReportRendersInChromium(t *testing.T) {
	exe := bedtest.Chromium(t)
	dir := copyRun(t, "testdata/run")
	require.NoError(t, Write(dir))

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1200, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	// Open the tab first, so that the listener sees everything the page does.
	require.NoError(t, chromedp.Do(ctx))
	var errs consoleErrors
	require.NoError(t, chromedp.Listen(ctx, errs.listen))
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+filepath.Join(dir, ReportFile)),
		chromedp.WaitReady("#files")))
	facts, err := chromedp.Run(ctx, chromedp.Evaluate[domFacts](domScript))
	require.NoError(t, err)
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)

	assert.Empty(t, errs.list(), "console errors")
	assert.Equal(t, "true", facts.Verdict)
	assert.Equal(t, 4, facts.Checks, "availability, linearizable, raft, stats")
	assert.Positive(t, facts.LatencyPoints, "latency series")
	assert.Positive(t, facts.ThroughputLine, "throughput lines")
	assert.Equal(t, 4, facts.LatencyBands, "one kill, two partitions, one heal")
	assert.Contains(t, facts.BandLabels, "n2, n3, n4 killed")
	assert.Contains(t, facts.BandLabels, "n1, n3 cut off from n2, n4, n5")
	assert.Equal(t, 3, facts.Shades, "the kill and the partitions shade the plot")
	assert.Equal(t, 5, facts.Lanes, "a lane per node")
	assert.Equal(t, 3, facts.KilledLanes, "n2, n3, n4 killed, drawn over their lanes")
	assert.GreaterOrEqual(t, facts.AvailRows, 4)
	assert.Equal(t, 4, facts.Faults)
	assert.Contains(t, facts.Thinning, "Every operation is drawn")
	assert.Equal(t, 1100, facts.LatencyWidth)

	// The listener does hear errors: a page that logs one and misses an
	// image gives two.
	bad := filepath.Join(t.TempDir(), "bad.html")
	require.NoError(t, os.WriteFile(bad, []byte(`<img src="missing.png"><script>console.error("boom")</script>`), 0o644))
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+bad), chromedp.WaitReady("img")))
	assert.Eventually(t, func() bool { return len(errs.list()) >= 2 }, 5*time.Second, 50*time.Millisecond,
		"errors heard: %v", errs.list())

	path := filepath.Join(artifactDir(t), fmt.Sprintf("report-%s.png", time.Now().UTC().Format("20060102T150405")))
	require.NoError(t, os.WriteFile(path, shot, 0o644))
	t.Logf("screenshot of the report: %s", path)
}
