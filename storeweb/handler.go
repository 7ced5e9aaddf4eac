package storeweb

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
)

//go:embed templates/*.html
var templateFiles embed.FS

// handler serves a Store; see the package doc for its routes.
type handler struct {
	store *Store
	pages *template.Template
	rows  rowCache
}

// NewHandler serves s as web pages (the routes are in the package doc).
// It answers GET (and HEAD) only. Every response says nosniff and carries
// a Content-Security-Policy that allows only what the page needs (see
// policy and fileKind).
func NewHandler(s *Store) http.Handler {
	h := &handler{store: s,
		pages: template.Must(template.New("").Funcs(templateFuncs()).ParseFS(templateFiles, "templates/*.html"))}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.index)
	mux.HandleFunc("GET /runs/{name}/{time}/{$}", h.run)
	mux.HandleFunc("GET /runs/{name}/{time}/{file...}", h.runFile)
	mux.HandleFunc("GET /zip/{name}/{time}", h.zip)
	mux.HandleFunc("GET /campaigns/{campaign}/{time}/{$}", h.campaign)
	mux.HandleFunc("GET /campaigns/{campaign}/{time}/{file...}", h.campaignFile)
	return secured(mux)
}

// index lists the runs that pass the query's filter, and the campaigns.
func (h *handler) index(w http.ResponseWriter, r *http.Request) {
	f, err := ParseFilter(r.URL.Query())
	if err != nil {
		h.fail(w, err, http.StatusBadRequest)
		return
	}
	runs, err := h.store.Runs()
	if err != nil {
		h.fail(w, err, http.StatusInternalServerError)
		return
	}
	camps, err := h.store.Campaigns()
	if err != nil {
		h.fail(w, err, http.StatusInternalServerError)
		return
	}
	shown := 0
	table, err := h.rows.table(h.pages, runs, func(r Run) bool {
		if f.Match(r) {
			shown++
			return true
		}
		return false
	})
	if err != nil {
		h.fail(w, fmt.Errorf("template runRow: %w", err), http.StatusInternalServerError)
		return
	}
	h.render(w, "index", indexPage{Store: h.store.Dir(), Filter: f, Verdicts: Verdicts(), Rows: table, Shown: shown,
		Total: len(runs), Campaigns: groupCampaigns(camps, byPath(runs))})
}

// run shows a run: its facts, its files and its report.
func (h *handler) run(w http.ResponseWriter, r *http.Request) {
	run, err := h.store.Run(r.PathValue("name"), r.PathValue("time"))
	if err != nil {
		h.fail(w, err, 0)
		return
	}
	p := runPage{Run: run}
	rel := path.Join(run.Name, run.Time)
	if test, err := h.store.readTest(rel); err == nil {
		p.Test = &test
	}
	if p.Files, err = h.store.Files(rel); err != nil {
		p.Missing = err.Error()
	}
	h.render(w, "run", p)
}

// runFile serves a file of a run as it is; a directory of the run
// redirects to the run's page.
func (h *handler) runFile(w http.ResponseWriter, r *http.Request) {
	name, t := r.PathValue("name"), r.PathValue("time")
	h.serveFile(w, r, []string{name, t}, r.PathValue("file"), Run{Name: name, Time: t}.Href(), true)
}

// zip sends the run directory as a .zip named <name>-<time>.zip.
func (h *handler) zip(w http.ResponseWriter, r *http.Request) {
	run, err := h.store.Run(r.PathValue("name"), r.PathValue("time"))
	if err != nil {
		h.fail(w, err, 0)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", zipName(run)))
	// Headers are gone once the archive streams: an error can only cut it,
	// which the client sees as a corrupt archive.
	if err := h.store.WriteZip(w, path.Join(run.Name, run.Time)); err != nil {
		panic(http.ErrAbortHandler)
	}
}

// zipName is the download's file name: the run's path with "-" for "/",
// and nothing a header or a file system would mind.
func zipName(r Run) string { return headerSafe(r.Name+"-"+r.Time) + ".zip" }

// campaign shows a campaign's table, linking to its runs.
func (h *handler) campaign(w http.ResponseWriter, r *http.Request) {
	c, err := h.store.Campaign(r.PathValue("campaign"), r.PathValue("time"))
	if err != nil {
		h.fail(w, err, 0)
		return
	}
	runs, err := h.store.Runs()
	if err != nil {
		h.fail(w, err, http.StatusInternalServerError)
		return
	}
	p := campaignPage{campaignView: viewCampaign(c, byPath(runs))}
	p.Files, _ = h.store.Files(path.Join(campaignsDir, c.Name, c.Time))
	h.render(w, "campaign", p)
}

// campaignFile serves a file of a campaign directory as it is.
func (h *handler) campaignFile(w http.ResponseWriter, r *http.Request) {
	name, t := r.PathValue("campaign"), r.PathValue("time")
	h.serveFile(w, r, []string{campaignsDir, name, t}, r.PathValue("file"), Campaign{Name: name, Time: t}.Href(), false)
}

// serveFile serves the store file dir/rest, dir's elements being single
// names, as its kind says; run says dir is a run directory, not a
// campaign's. A directory redirects to page.
func (h *handler) serveFile(w http.ResponseWriter, r *http.Request, dir []string, rest, page string, run bool) {
	rel, err := join(dir, rest)
	if err != nil {
		h.fail(w, err, 0)
		return
	}
	f, err := h.store.open(rel)
	if err != nil {
		h.fail(w, err, 0)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		h.fail(w, err, http.StatusInternalServerError)
		return
	}
	if st.IsDir() {
		http.Redirect(w, r, page, http.StatusFound)
		return
	}
	sendFile(w, r, f, st, kindOf(rest, run), run)
}

// render executes the page template name with data, so that a template
// error is a clean 500 instead of half a page.
func (h *handler) render(w http.ResponseWriter, name string, data any) {
	var b bytes.Buffer
	if err := h.pages.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "template "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	setPolicy(w, ownPagePolicy(name, b.Bytes()))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	b.WriteTo(w)
}

// ownPagePolicy is the policy of the server's page doc, rendered from the
// template name: the layout's <style> by hash, the filter's form on the
// listing, the report's frame on a run's page; no script.
func ownPagePolicy(name string, doc []byte) policy {
	return policy{styles: inlineHashes(doc, "style"), form: name == "index", frames: name == "run"}
}

// fail answers with a page saying err in one line. Status 0 means: from
// err, 403 for ErrRefused, 404 for a missing file, else 500.
func (h *handler) fail(w http.ResponseWriter, err error, status int) {
	if status == 0 {
		switch {
		case errors.Is(err, ErrRefused):
			status = http.StatusForbidden
		case errors.Is(err, fs.ErrNotExist):
			status = http.StatusNotFound
		default:
			status = http.StatusInternalServerError
		}
	}
	var b bytes.Buffer
	if h.pages.ExecuteTemplate(&b, "error", errorPage{Status: status, Message: err.Error()}) != nil {
		http.Error(w, err.Error(), status)
		return
	}
	setPolicy(w, ownPagePolicy("error", b.Bytes()))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	b.WriteTo(w)
}
