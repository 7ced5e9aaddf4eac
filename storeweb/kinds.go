package storeweb

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// fileKind is how a file of the store is sent: which content type, and
// with what policy. Only the pages chaos itself writes, at the places it
// writes them, are sent as HTML; a node's files, pulled back into the run
// directory under their own names, never are.
type fileKind int

const (
	// download is any file not below: application/octet-stream, as an
	// attachment, so that a browser saves it instead of showing it.
	download fileKind = iota
	// text is .txt, .log, .jsonl and .xml: text/plain.
	text
	// jsonFile is .json: application/json.
	jsonFile
	// reportPage is a run's report.html (runreport): styles of its own,
	// style attributes, no script.
	reportPage
	// visualizationPage is a run's linearizable/key-*.html: porcupine's
	// page, which runs its own inline script, sandboxed.
	visualizationPage
)

// maxPageBytes bounds the pages read whole to hash their inline elements;
// a larger page is a download. A report stays well under 2 MB.
const maxPageBytes = 64 << 20

// kindOf is the kind of the file rest (a path checked by join) of a run
// directory, or of a campaign directory when run is false.
func kindOf(rest string, run bool) fileKind {
	if run && rest == "report.html" {
		return reportPage
	}
	if ok, _ := path.Match("linearizable/key-*.html", rest); run && ok {
		return visualizationPage
	}
	switch path.Ext(rest) {
	case ".txt", ".log", ".jsonl", ".xml":
		return text
	case ".json":
		return jsonFile
	}
	return download
}

// sendFile answers with the store file f, whose Stat is st, of kind k;
// framed says whether the server's own pages may frame it.
func sendFile(w http.ResponseWriter, r *http.Request, f io.ReadSeeker, st fs.FileInfo, k fileKind, framed bool) {
	p := policy{framed: framed}
	switch k {
	case reportPage, visualizationPage:
		if doc, ok := readPage(f, st); ok {
			p = pagePolicy(doc, k, framed)
			setPolicy(w, p)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			http.ServeContent(w, r, st.Name(), st.ModTime(), bytes.NewReader(doc))
			return
		}
		k = download
	case text:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	case jsonFile:
		w.Header().Set("Content-Type", "application/json")
	}
	if k == download {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", headerSafe(st.Name())))
	}
	setPolicy(w, p)
	http.ServeContent(w, r, st.Name(), st.ModTime(), f)
}

// readPage reads the page f whole, or says it is larger than maxPageBytes
// (or cannot be read), and rewinds f for sending it as it is.
func readPage(f io.ReadSeeker, st fs.FileInfo) ([]byte, bool) {
	if st.Size() > maxPageBytes {
		return nil, false
	}
	doc, err := io.ReadAll(io.LimitReader(f, maxPageBytes+1))
	if err == nil && len(doc) <= maxPageBytes {
		return doc, true
	}
	_, _ = f.Seek(0, io.SeekStart)
	return nil, false
}

// pagePolicy is the policy of a page chaos wrote, doc, of kind k: its own
// inline styles and style attributes, and, for porcupine's visualization,
// its own inline scripts in a sandbox.
func pagePolicy(doc []byte, k fileKind, framed bool) policy {
	p := policy{styles: inlineHashes(doc, "style"), styleAttrs: true, framed: framed}
	if k == visualizationPage {
		p.scripts, p.sandboxScripts = inlineHashes(doc, "script"), true
	}
	return p
}

// headerSafe is name with '_' for every byte a quoted header value or a
// file system would mind.
func headerSafe(name string) string {
	return strings.Map(func(c rune) rune {
		if c < ' ' || c == '"' || c == '\\' || c == '/' || c > '~' {
			return '_'
		}
		return c
	}, name)
}
