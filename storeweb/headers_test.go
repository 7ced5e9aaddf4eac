package storeweb_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// planted is a file a node could leave in a run directory: markup that
// runs script if a browser renders it.
const planted = "<html><body><script>alert(1)</script></body></html>"

// policyOf splits a Content-Security-Policy into its directives, by name.
func policyOf(t *testing.T, header string) map[string]string {
	t.Helper()
	d := map[string]string{}
	for _, part := range strings.Split(header, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(part), " ")
		require.NotContains(t, d, name, "directive %s twice in %q", name, header)
		d[name] = value
	}
	return d
}

// hashSource is the CSP source that allows the inline element whose text
// is text.
func hashSource(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// response fetches path with method and returns the response, its body
// read and closed.
func response(t *testing.T, srv *httptest.Server, method, path string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	require.NoError(t, err)
	client := *srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

// Every response of every route, pages, files, zips, redirects and errors,
// says nosniff and has a policy that loads nothing from anywhere, runs no
// script but a visualization's own (by hash), takes no <base>, and lets
// no other site frame it. Each kind of response allows only what it needs;
// a run file that is not known text, JSON, the report or a visualization
// is a download, whatever it holds.
func TestEveryResponseIsSafeToOpen(t *testing.T) {
	f, srv := serve(t)
	run := "register-kill/" + validTime + "/"
	base := "/runs/" + run
	f.write(t, run+"nodes/n1/dump", planted)
	f.write(t, run+"nodes/n1/page.html", planted)
	f.write(t, run+"nodes/n1/node.log", planted)
	f.write(t, run+"linearizable/key-planted.html", "<!DOCTYPE html><style>b{}</style><!-- <script>no</script> -->\r\n"+
		"<SCRIPT type=\"text/javascript\" data-x='a>b'>render(\"a>b\")\r\n</SCRIPT><script>x()</script><script>x()</script>")
	f.write(t, run+"report.html", "<!DOCTYPE html><style>\nh1{}\n</style><script>nope()</script><h1 style=\"color:red\">report</h1>")

	const (
		page      = "page"      // the store's own pages
		file      = "file"      // a run's text or JSON
		download  = "download"  // an attachment
		report    = "report"    // report.html
		vis       = "vis"       // a visualization
		nothing   = "nothing"   // no page: a redirect, an error the mux answers, a zip
		campaign  = "campaign"  // a campaign's text or JSON
		formPage  = "form page" // the listing, with its filter
		framePage = "run page"  // a run's page, which frames its report
	)
	for _, c := range []struct {
		method, path string
		status       int
		kind, ctype  string
	}{
		{"GET", "/", 200, formPage, "text/html; charset=utf-8"},
		{"GET", "/?verdict=green", 400, page, "text/html; charset=utf-8"},
		{"GET", base, 200, framePage, "text/html; charset=utf-8"},
		{"GET", "/runs/register-kill/20990101T000000.000Z/", 404, page, "text/html; charset=utf-8"},
		{"GET", "/campaigns/smoke/20260108T000000.000Z/", 200, page, "text/html; charset=utf-8"},
		{"GET", "/campaigns/smoke/20990101T000000.000Z/", 404, page, "text/html; charset=utf-8"},
		{"GET", base + "report.html", 200, report, "text/html; charset=utf-8"},
		{"HEAD", base + "report.html", 200, report, "text/html; charset=utf-8"},
		{"GET", "/runs/register-kill/latest/report.html", 200, report, "text/html; charset=utf-8"},
		{"GET", base + "linearizable/key-planted.html", 200, vis, "text/html; charset=utf-8"},
		{"GET", base + "results.json", 200, file, "application/json"},
		{"GET", base + "test.json", 200, file, "application/json"},
		{"GET", base + "history.jsonl", 200, file, "text/plain; charset=utf-8"},
		{"GET", base + "nodes/n1/node.log", 200, file, "text/plain; charset=utf-8"},
		{"GET", base + "nodes/n1/dump", 200, download, "application/octet-stream"},
		{"HEAD", base + "nodes/n1/dump", 200, download, "application/octet-stream"},
		{"GET", base + "nodes/n1/page.html", 200, download, "application/octet-stream"},
		{"GET", base + "nodes/n1/report.html", 404, page, "text/html; charset=utf-8"},
		{"GET", base + "no-such-file", 404, page, "text/html; charset=utf-8"},
		{"GET", base + "escape.txt", 403, page, "text/html; charset=utf-8"},
		{"GET", base + "nodes", 302, nothing, ""},
		{"GET", "/zip/register-kill/" + validTime, 200, nothing, "application/zip"},
		{"GET", "/campaigns/smoke/20260108T000000.000Z/campaign.json", 200, campaign, "application/json"},
		{"GET", "/campaigns/smoke/20260108T000000.000Z/junit.xml", 200, campaign, "text/plain; charset=utf-8"},
		{"GET", "/no/such/route", 404, nothing, ""},
		{"POST", "/", 405, nothing, ""},
	} {
		name := c.method + " " + c.path
		resp := response(t, srv, c.method, c.path)
		require.Equal(t, c.status, resp.StatusCode, name)
		if c.ctype != "" {
			assert.Equal(t, c.ctype, resp.Header.Get("Content-Type"), name)
		}
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), name)
		p := policyOf(t, resp.Header.Get("Content-Security-Policy"))
		assert.Equal(t, "'none'", p["default-src"], name)
		assert.Equal(t, "'none'", p["base-uri"], name)
		for d, v := range p {
			for _, word := range []string{"*", "http", "data:", "blob:", "'unsafe-eval'", "'unsafe-hashes'"} {
				assert.NotContains(t, v, word, "%s: %s %s", name, d, v)
			}
		}
		assert.NotContains(t, p["script-src"], "'unsafe-inline'", name)
		switch {
		case c.kind == download:
			assert.Equal(t, `attachment; filename="`+filepath.Base(c.path)+`"`, resp.Header.Get("Content-Disposition"), name)
		case strings.HasPrefix(c.path, "/zip/"):
			assert.Contains(t, resp.Header.Get("Content-Disposition"), "attachment", name)
		default:
			assert.Empty(t, resp.Header.Get("Content-Disposition"), name)
		}
		assertPolicy(t, name, c.kind, p)
	}
}

// assertPolicy checks what a response of kind (see the test above) may do
// beyond the rules every response keeps.
func assertPolicy(t *testing.T, name, kind string, p map[string]string) {
	t.Helper()
	want := map[string]string{"default-src": "'none'", "base-uri": "'none'", "form-action": "'none'", "frame-ancestors": "'none'"}
	layout := p["style-src"]
	switch kind {
	case "page", "form page", "run page":
		assert.Regexp(t, `^'sha256-[A-Za-z0-9+/]{43}='$`, layout, "%s: the layout's <style>, by hash", name)
		want["style-src"] = layout
		if kind == "form page" {
			want["form-action"] = "'self'"
		}
		if kind == "run page" {
			want["frame-src"] = "'self'"
		}
	case "report":
		want["frame-ancestors"] = "'self'"
		want["style-src"] = hashSource("\nh1{}\n") // and no script-src: the report's <script> is refused
		want["style-src-attr"] = "'unsafe-inline'"
	case "vis":
		want["frame-ancestors"] = "'self'"
		want["script-src"] = hashSource("render(\"a>b\")\n") + " " + hashSource("x()")
		want["style-src"] = hashSource("b{}")
		want["style-src-attr"] = "'unsafe-inline'"
		want["sandbox"] = "allow-scripts"
	case "file", "download":
		want["frame-ancestors"] = "'self'"
	}
	assert.Equal(t, want, p, name)
}

// A page too large to read for its hashes is sent as a download, under
// the policy that allows nothing.
func TestAHugeVisualizationIsADownload(t *testing.T) {
	f, srv := serve(t)
	rel := "register-kill/" + validTime + "/linearizable/key-huge.html"
	p := filepath.Join(f.store, filepath.FromSlash(rel))
	file, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, file.Truncate(64<<20+1))
	require.NoError(t, file.Close())
	resp := response(t, srv, "HEAD", "/runs/"+rel)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, `attachment; filename="key-huge.html"`, resp.Header.Get("Content-Disposition"))
	assert.Equal(t, "application/octet-stream", resp.Header.Get("Content-Type"))
	assert.NotContains(t, resp.Header.Get("Content-Security-Policy"), "script-src")
}
