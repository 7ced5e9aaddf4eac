package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
	"chaos/storeweb"
	"chaos/testbed/bedtest"
)

// xssMarker is what the planted markup logs, and says in the alert it
// opens, if it ever runs.
const xssMarker = "chaos-xss-ran"

// xssPayload is markup a hostile system's client could put in a history:
// an image whose error handler runs, and a script. It has no double
// quote, so it reads the same inside the JSON of a nemesis value.
const xssPayload = `<img src=x onerror=console.log('` + xssMarker + `');alert('` + xssMarker + `')>` +
	`<script>console.log('` + xssMarker + `');alert('` + xssMarker + `')</script>`

// The values of the planted history: a node name, an error and a key.
const (
	xssNode  = "n1" + xssPayload
	xssError = "refused" + xssPayload
	xssKey   = "k" + xssPayload
)

// xssHistory is a register history that is not linearizable (a stale read)
// on a key named with the payload, whose ops a node named with it served,
// with a fault that failed with it as its error, an info write with it as
// its error, and a kill of that node.
func xssHistory(t *testing.T) string {
	t.Helper()
	nemesisValue := func(v any) json.RawMessage {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // the payload stays as it is in the history
		require.NoError(t, enc.Encode(v))
		return bytes.TrimSpace(b.Bytes())
	}
	nemesis := history.NemesisProcess
	ops := []history.Op{
		{Time: 100, Process: 0, Type: history.Invoke, F: "write", Key: xssKey, Value: json.RawMessage("7")},
		{Time: 110, Process: 0, Type: history.OK, F: "write", Key: xssKey, Node: xssNode},
		{Time: 120, Process: 1, Type: history.Invoke, F: "write", Key: xssKey, Value: json.RawMessage("9")},
		{Time: 130, Process: 1, Type: history.OK, F: "write", Key: xssKey, Node: xssNode},
		{Time: 135, Process: nemesis, Type: history.Info, F: "start-partition", Value: nemesisValue(map[string]string{"error": xssError})},
		{Time: 140, Process: 2, Type: history.Invoke, F: "read", Key: xssKey},
		{Time: 150, Process: 2, Type: history.OK, F: "read", Key: xssKey, Value: json.RawMessage("7"), Node: xssNode},
		{Time: 160, Process: 3, Type: history.Invoke, F: "write", Key: xssKey, Value: json.RawMessage("11")},
		{Time: 170, Process: 3, Type: history.Info, F: "write", Key: xssKey, Node: xssNode, Error: xssError},
		{Time: 180, Process: nemesis, Type: history.Info, F: "kill", Value: nemesisValue(map[string][]string{"nodes": {xssNode}})},
		{Time: 190, Process: nemesis, Type: history.Info, F: "start", Value: nemesisValue(map[string][]string{"nodes": {xssNode}})},
	}
	var b strings.Builder
	for i, op := range ops {
		op.Index, op.Time = int64(i), op.Time*int64(time.Millisecond)
		line, err := op.MarshalJSON() // as chaos writes it: json.Marshal would escape <, > and & in values
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// pageWatch records what the pages do that they must not: dialogs opened,
// console calls that carry the marker, exceptions, and Content Security
// Policy refusals (a policy that blocks a page's own script or style).
type pageWatch struct {
	mu                         sync.Mutex
	dialogs, marked, exception []string
	refusals                   []string
}

func (w *pageWatch) listen(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		w.dialogs = append(w.dialogs, string(e.Type)+": "+e.Message)
	case *runtime.EventConsoleAPICalled:
		for _, a := range e.Args {
			if strings.Contains(string(a.Value), xssMarker) {
				w.marked = append(w.marked, "console."+string(e.Type)+" "+string(a.Value))
			}
		}
	case *runtime.EventExceptionThrown:
		w.exception = append(w.exception, e.ExceptionDetails.Text)
	case *log.EventEntryAdded:
		if strings.Contains(e.Entry.Text, "Content Security Policy") {
			w.refusals = append(w.refusals, e.Entry.Text+" "+e.Entry.URL)
		}
	}
}

// closeDialogs accepts every dialog a page opens, so that a payload that
// runs shows up as a dialog instead of blocking the page.
func closeDialogs(ctx context.Context) {
	for _, err := range chromedp.Events(ctx, page.JavascriptDialogOpening) {
		if err != nil {
			return
		}
		_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
	}
}

// hoverScript hovers over every box of porcupine's visualization, as a
// reader does, waiting each time until the images in the tooltip have
// loaded or failed (their error handlers have run then), and returns the
// tooltips' texts and how many elements the tooltips held.
const hoverScript = `(async () => {
  const targets = [...document.querySelectorAll("rect.target-rect")];
  const tip = document.querySelector("#canvas .tooltip");
  const settled = img => img.complete ? null : new Promise(r => { img.addEventListener("load", r); img.addEventListener("error", r); });
  const out = {targets: targets.length, tooltips: [], elements: 0};
  for (const t of targets) {
    const b = t.getBoundingClientRect();
    const at = {bubbles: true, clientX: b.x + 1, clientY: b.y + 1};
    t.dispatchEvent(new MouseEvent("mouseover", at));
    t.dispatchEvent(new MouseEvent("mousemove", at));
    out.tooltips.push(tip.textContent);
    out.elements += tip.querySelectorAll("img, script").length;
    await Promise.all([...tip.querySelectorAll("img")].map(settled));
    await new Promise(r => setTimeout(r, 0));
    t.dispatchEvent(new MouseEvent("mouseout", at));
  }
  return out;
})()`

// hovered is what hoverScript returns.
type hovered struct {
	Targets  int      `json:"targets"`
	Tooltips []string `json:"tooltips"`
	Elements int      `json:"elements"`
}

// A history whose node name, error and key hold markup that would run
// script (an <img onerror> and a <script> that log a marker and open an
// alert) is checked by chaos check, which writes results.json, porcupine's
// visualization of the key and report.html, and served by chaos serve's
// handler. Every page, opened in headless Chromium and hovered over where
// porcupine writes its tooltips, runs none of it: no dialog, no marker in
// the console; the planted text is shown as text; and the pages' own
// policies refuse none of their own scripts and styles.
func TestServedPagesRunNoPlantedScript(t *testing.T) {
	exe := bedtest.Chromium(t)
	store := t.TempDir()
	const stamp = "20260101T000000.000Z"
	dir := filepath.Join(store, "xss", stamp)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "history.jsonl"), []byte(xssHistory(t)), 0o644))
	code, _, stderr := execute(t, "check", dir)
	require.Equal(t, exitInvalid, code, stderr)
	vis, err := filepath.Glob(filepath.Join(dir, "linearizable", "key-*.html"))
	require.NoError(t, err)
	require.Len(t, vis, 1, "the key is visualized")

	s, err := storeweb.Open(store)
	require.NoError(t, err)
	defer s.Close()
	srv := httptest.NewServer(storeweb.NewHandler(s))
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1200, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx))
	var watch pageWatch
	require.NoError(t, chromedp.Listen(ctx, watch.listen))
	go closeDialogs(ctx)
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	run := srv.URL + "/runs/xss/" + stamp + "/"
	visualization := "linearizable/" + filepath.Base(vis[0])
	text := func(url string) string {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady("body")), url)
		body, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body.innerText"))
		require.NoError(t, err, url)
		return body
	}
	for _, p := range []string{srv.URL + "/", run, run + "results.json", run + "history.jsonl"} {
		text(p)
	}
	report := text(run + "report.html")
	assert.Contains(t, report, xssError, "the failed fault's error, as text")
	assert.Contains(t, report, xssNode+" killed", "the killed node, as text")
	assert.Contains(t, report, xssKey, "the key, as text")
	assert.Contains(t, text(run+url.PathEscape(xssPayload)), xssPayload, "the 404 names the missing file, as text")

	text(run + url.PathEscape(visualization))
	h, err := chromedp.Run(ctx, chromedp.Evaluate[hovered](hoverScript, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Positive(t, h.Targets, "porcupine drew the history: its own script ran")
	assert.Zero(t, h.Elements, "the tooltips hold text, not markup")
	tooltips := strings.Join(h.Tooltips, "\n")
	assert.Contains(t, tooltips, "node "+xssNode, "the node, as text in the op's tooltip")
	assert.Contains(t, tooltips, xssError, "the failed fault's error, as text in its tooltip")
	assert.NotContains(t, tooltips, "&lt;", "escaped once, not twice")

	watch.mu.Lock()
	assert.Empty(t, watch.dialogs, "dialogs opened")
	assert.Empty(t, watch.marked, "console calls of the planted script")
	assert.Empty(t, watch.exception, "exceptions")
	assert.Empty(t, watch.refusals, "the pages' policies refuse nothing of their own")
	watch.mu.Unlock()

	// The policy alone stops the payload too: a visualization whose own
	// script inserts it as markup, as porcupine did before its input was
	// escaped, runs none of it, and the listener hears the refusals.
	js, err := json.Marshal(xssPayload)
	require.NoError(t, err)
	injected := filepath.Join(dir, "linearizable", "key-injected.html")
	require.NoError(t, os.WriteFile(injected, []byte(`<!DOCTYPE html><body><div id="tip"></div>`+
		`<script>document.getElementById("tip").innerHTML = `+string(js)+`</script></body>`), 0o644))
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(run+"linearizable/key-injected.html"), chromedp.WaitReady("#tip img")))
	assert.Eventually(t, func() bool {
		watch.mu.Lock()
		defer watch.mu.Unlock()
		return len(watch.refusals) > 0
	}, 10*time.Second, 50*time.Millisecond, "the policy refuses the inserted handler")
	watch.mu.Lock()
	defer watch.mu.Unlock()
	assert.Empty(t, watch.dialogs, "dialogs opened")
	assert.Empty(t, watch.marked, "console calls of the planted script")
	t.Logf("refused: %v", watch.refusals)
}
