package storeweb_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/storeweb"
)

// serve serves a new fixture over HTTP on a loopback listener.
func serve(t *testing.T) (fixture, *httptest.Server) {
	t.Helper()
	f := newFixture(t)
	s, err := storeweb.Open(f.store)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(storeweb.NewHandler(s))
	t.Cleanup(srv.Close)
	return f, srv
}

// get fetches path from srv; it returns the status, the content type and
// the body.
func get(t *testing.T, srv *httptest.Server, path string) (int, string, []byte) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

// rawGet sends target as the request line's target byte for byte, as an
// attacker would, with no client cleaning it first.
func rawGet(t *testing.T, srv *httptest.Server, target string) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: chaos\r\nConnection: close\r\n\r\n", target)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

var runRow = regexp.MustCompile(`<tr class="run" data-run="([^"]*)" data-verdict="([^"]*)">`)

// listed returns the runs of a listing page as "name/time verdict", in
// page order.
func listed(body []byte) []string {
	var out []string
	for _, m := range runRow.FindAllSubmatch(body, -1) {
		out = append(out, string(m[1])+" "+string(m[2]))
	}
	return out
}

// The listing: every run directory once, newest first, with its verdict,
// op counts, duration and faults; broken runs with their reason; nothing
// from outside the store.
func TestListing(t *testing.T) {
	_, srv := serve(t)
	code, ctype, body := get(t, srv, "/")
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, "text/html; charset=utf-8", ctype)
	assert.Equal(t, []string{
		"register-kill/" + leakTime + " broken",
		"register-kill/" + corruptTime + " broken",
		"register-kill/" + missingTime + " broken",
		"set-pause/" + unknownTime + " unknown",
		"register-partition-bug/" + invalidTime + " invalid",
		"register-kill/" + validTime + " valid",
	}, listed(body), "newest first; the latest links and the symlinked run leaving the store are not listed")
	page := string(body)
	assert.Contains(t, page, "6 of 6 runs")
	assert.Contains(t, page, "10: 7 ok, 2 fail, 1 info")
	assert.Contains(t, page, "12.5 s")
	assert.Contains(t, page, "partition ×2")
	assert.Contains(t, page, "kill ×1")
	assert.Contains(t, page, "2026-01-02 00:00:00 UTC")
	assert.Contains(t, page, `<span class="verdict invalid">invalid</span>`, "verdicts are coloured by class")
	assert.Contains(t, page, `href="/runs/register-kill/`+validTime+`/report.html"`)
	assert.Contains(t, page, `href="/zip/register-kill/`+validTime+`"`)
	assert.NotContains(t, page, secret)
}

// A run whose results.json is missing, corrupt or outside the store is
// listed as broken with the reason, and its page and files still serve.
func TestBrokenRunsListedWithTheReason(t *testing.T) {
	_, srv := serve(t)
	_, _, body := get(t, srv, "/?verdict=broken")
	page := string(body)
	assert.Len(t, listed(body), 3)
	assert.Contains(t, page, "no results.json: the run is still going, or stopped before it was checked")
	assert.Contains(t, page, "results.json is corrupt: invalid character")
	assert.Contains(t, page, "results.json: refused: register-kill/"+leakTime+"/results.json: path escapes from parent")
	assert.NotContains(t, page, secret)

	code, _, body := get(t, srv, "/runs/register-kill/"+corruptTime+"/")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, string(body), "results.json is corrupt")
	code, _, body = get(t, srv, "/runs/register-kill/"+corruptTime+"/results.json")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, `{"valid": tru`, string(body))
}

func TestFilters(t *testing.T) {
	_, srv := serve(t)
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"verdict=valid", []string{"register-kill/" + validTime + " valid"}},
		{"verdict=invalid", []string{"register-partition-bug/" + invalidTime + " invalid"}},
		{"verdict=unknown", []string{"set-pause/" + unknownTime + " unknown"}},
		{"name=PARTITION", []string{"register-partition-bug/" + invalidTime + " invalid"}},
		{"name=register&verdict=valid", []string{"register-kill/" + validTime + " valid"}},
		{"name=set&verdict=invalid", nil},
		{"name=&verdict=", nil}, // every run: checked by length below
	} {
		code, _, body := get(t, srv, "/?"+c.query)
		require.Equal(t, http.StatusOK, code, c.query)
		if c.want == nil && c.query == "name=&verdict=" {
			assert.Len(t, listed(body), 6, c.query)
			continue
		}
		assert.Equal(t, c.want, listed(body), c.query)
	}
	_, _, body := get(t, srv, "/?name=set&verdict=invalid")
	assert.Contains(t, string(body), "no runs match the filter")
	_, _, body = get(t, srv, "/?verdict=unknown")
	assert.Contains(t, string(body), `<option value="unknown" selected>`, "the form shows the filter")

	code, _, body := get(t, srv, "/?verdict=green")
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, string(body), `verdict &#34;green&#34;: want one of valid, invalid, unknown, broken, or none for every run`)
}

// A run's page lists its files and shows its report; the report and every
// file are served byte for byte, so the report's relative links work.
func TestRunPageReportAndFiles(t *testing.T) {
	f, srv := serve(t)
	base := "/runs/register-kill/" + validTime + "/"
	code, _, body := get(t, srv, base)
	require.Equal(t, http.StatusOK, code, "%s", body)
	page := string(body)
	for _, file := range []string{"test.json", "results.json", "history.jsonl", "report.html", "nodes/n1/events.jsonl", "linearizable/key-k%201.html"} {
		assert.Contains(t, page, `href="`+base+file+`"`, file)
	}
	assert.Contains(t, page, `<iframe src="report.html"`)
	assert.Contains(t, page, "chaos run --name register-kill", "the command line from test.json")
	assert.NotContains(t, page, "escape.txt", "symlinks are not listed")
	assert.NotContains(t, page, "nodes/away")

	dir := filepath.Join(f.store, "register-kill", validTime)
	for file, ctype := range map[string]string{
		"report.html":                 "text/html; charset=utf-8",
		"history.jsonl":               "text/plain; charset=utf-8",
		"nodes/n1/events.jsonl":       "text/plain; charset=utf-8",
		"results.json":                "application/json",
		"linearizable/key-k%201.html": "text/html; charset=utf-8",
	} {
		code, got, body := get(t, srv, base+file)
		require.Equal(t, http.StatusOK, code, file)
		assert.Equal(t, ctype, got, file)
		want, err := os.ReadFile(filepath.Join(dir, strings.ReplaceAll(file, "%20", " ")))
		require.NoError(t, err)
		assert.Equal(t, want, body, file)
	}
	// The latest link stays in the store, so it serves.
	code, _, body = get(t, srv, "/runs/register-kill/latest/report.html")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, string(body), "report of register-kill")

	code, _, _ = get(t, srv, "/runs/register-kill/20990101T000000.000Z/")
	assert.Equal(t, http.StatusNotFound, code)
	code, _, _ = get(t, srv, base+"no-such-file")
	assert.Equal(t, http.StatusNotFound, code)
}

// The zip of a run holds exactly the regular files of its directory, by
// relative path, with their contents.
func TestZipMatchesTheRunDirectory(t *testing.T) {
	f, srv := serve(t)
	for _, run := range []string{"register-kill/" + validTime, "register-kill/" + corruptTime} {
		code, ctype, body := get(t, srv, "/zip/"+run)
		require.Equal(t, http.StatusOK, code, run)
		assert.Equal(t, "application/zip", ctype)
		zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
		require.NoError(t, err, run)
		got := map[string]string{}
		for _, e := range zr.File {
			rc, err := e.Open()
			require.NoError(t, err)
			b, err := io.ReadAll(rc)
			require.NoError(t, err)
			rc.Close()
			got[e.Name] = string(b)
		}
		want := regularFiles(t, filepath.Join(f.store, filepath.FromSlash(run)))
		assert.Equal(t, want, got, run)
		assert.NotContains(t, string(body), secret)
	}
	assert.Len(t, regularFiles(t, filepath.Join(f.store, "register-kill", validTime)), 6, "the valid run's zip holds all its files")
	resp, err := srv.Client().Get(srv.URL + "/zip/register-kill/" + validTime)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, `attachment; filename="register-kill-`+validTime+`.zip"`, resp.Header.Get("Content-Disposition"))
}

// regularFiles reads the regular files under dir by slash path.
func regularFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	}))
	return files
}

// Nothing outside the store is served: not through "..", plain or
// encoded, and not through a symlink leaving the store.
func TestTraversalRefused(t *testing.T) {
	_, srv := serve(t)
	run := "/runs/register-kill/" + validTime + "/"
	for _, c := range []struct {
		target string
		want   int // 0: any refusal (not 200)
	}{
		{run + "escape.txt", http.StatusForbidden},
		{run + "nodes/away/secret.txt", http.StatusForbidden},
		{"/runs/register-kill/20260107T000000.000Z/", http.StatusForbidden},
		{"/runs/register-kill/20260107T000000.000Z/secret.txt", http.StatusForbidden},
		{"/zip/register-kill/20260107T000000.000Z", http.StatusForbidden},
		{"/runs/register-kill/" + leakTime + "/results.json", http.StatusForbidden},
		{"/runs/%2e%2e/%2e%2e/etc/passwd", http.StatusForbidden},
		{"/runs/register-kill/..%2f..%2f..%2f/passwd", http.StatusForbidden},
		{run + "..%2f..%2f..%2fsecret.txt", http.StatusForbidden},
		{run + "%2e%2e/%2e%2e/%2e%2e/secret.txt", 0},
		{"/zip/%2e%2e/%2e%2e", http.StatusForbidden},
		{"/campaigns/%2e%2e/%2e%2e/register-kill/" + validTime + "/escape.txt", 0},
		{run + "../../../../../../../../etc/passwd", 0},
	} {
		code, body := rawGet(t, srv, c.target)
		if c.want != 0 {
			assert.Equal(t, c.want, code, c.target)
		}
		assert.NotEqual(t, http.StatusOK, code, c.target)
		assert.NotContains(t, body, secret, c.target)
		assert.NotContains(t, body, "root:x:0:0", c.target)
	}
}

// Campaigns are a group on the listing with their table, whose runs link
// to the runs' pages; a campaign's page and files serve too.
func TestCampaignGroup(t *testing.T) {
	_, srv := serve(t)
	_, _, body := get(t, srv, "/")
	page := string(body)
	require.Contains(t, page, "<h2>Campaigns</h2>")
	assert.Contains(t, page, `href="/campaigns/smoke/20260109T000000.000Z/"`, "the newest, broken, record leads its group")
	assert.Contains(t, page, "campaign.json is corrupt: json: cannot unmarshal array")
	assert.Contains(t, page, "earlier: ")
	assert.Contains(t, page, `href="/campaigns/smoke/20260108T000000.000Z/"`)

	code, _, body := get(t, srv, "/campaigns/smoke/20260108T000000.000Z/")
	require.Equal(t, http.StatusOK, code, "%s", body)
	page = string(body)
	assert.Contains(t, page, `<tr class="test" data-test="kill">`)
	assert.Contains(t, page, `<tr class="test" data-test="partition">`)
	assert.Contains(t, page, `<a class="verdict valid" href="/runs/register-kill/`+validTime+`/"`)
	assert.Contains(t, page, `<a class="verdict invalid" href="/runs/register-partition-bug/`+invalidTime+`/"`)
	assert.Contains(t, page, `<span class="verdict crashed" title="seed 9: crashed`, "a crashed run has no directory to link")
	assert.Contains(t, page, `<span class="verdict fail">fail</span>`)
	assert.Contains(t, page, `<td class="num">500</td>`, "ops/s")

	code, ctype, body := get(t, srv, "/campaigns/smoke/20260108T000000.000Z/junit.xml")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "text/plain; charset=utf-8", ctype, "shown as text: an XML document may hold XHTML")
	assert.Contains(t, string(body), "<testsuite")
}

func TestOpenRefusesAMissingStore(t *testing.T) {
	dir := t.TempDir()
	_, err := storeweb.Open(filepath.Join(dir, "nope"))
	var missing *storeweb.NoStoreError
	require.ErrorAs(t, err, &missing)
	assert.Equal(t, "store "+filepath.Join(dir, "nope")+" does not exist", err.Error())

	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = storeweb.Open(file)
	require.ErrorAs(t, err, &missing)
	assert.Equal(t, "store "+file+" is not a directory", err.Error())
}

// An empty store lists no runs and no campaigns.
func TestEmptyStore(t *testing.T) {
	s, err := storeweb.Open(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	srv := httptest.NewServer(storeweb.NewHandler(s))
	defer srv.Close()
	code, _, body := get(t, srv, "/")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, string(body), "no runs")
	assert.NotContains(t, string(body), "Campaigns")
}
