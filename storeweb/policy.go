package storeweb

import (
	"net/http"
	"strings"
)

// policy is the Content-Security-Policy of one response: what the page it
// holds may run, load and do. The zero policy allows nothing: no script,
// no style, no image, font or connection, no frame, no form submission, no
// <base>, and no page may frame the response. Every field allows one thing
// more, only of this server's own or the page's own; nothing is ever
// loaded from another origin.
type policy struct {
	// scripts and styles are CSP hash sources ('sha256-...') of the page's
	// own inline <script> and <style> elements (inlineHashes). Hashes, not
	// 'unsafe-inline': markup that the page's script inserts (an
	// onerror="..." handler) stays refused.
	scripts, styles []string
	// styleAttrs allows style="..." attributes, which the page's markup
	// holds or its script sets. They cannot run script, and with nothing
	// loadable they cannot send anything anywhere.
	styleAttrs bool
	// frames: the page frames this server's pages (a run's page, its report).
	frames bool
	// form: the page has a form that submits to this server (the filter).
	form bool
	// framed: this server's pages may frame the response (a run's files,
	// which the report's links open inside the run page's frame).
	framed bool
	// sandboxScripts runs the page in a sandbox with scripts allowed: an
	// origin of its own, so that even script it should not run cannot
	// read the store's other files.
	sandboxScripts bool
}

// String is the policy as the header's value.
func (p policy) String() string {
	d := []string{"default-src 'none'", "base-uri 'none'"}
	if len(p.scripts) > 0 {
		d = append(d, "script-src "+strings.Join(p.scripts, " "))
	}
	if len(p.styles) > 0 {
		d = append(d, "style-src "+strings.Join(p.styles, " "))
	}
	if p.styleAttrs {
		d = append(d, "style-src-attr 'unsafe-inline'")
	}
	if p.frames {
		d = append(d, "frame-src 'self'")
	}
	d = append(d, "form-action "+selfOrNone(p.form), "frame-ancestors "+selfOrNone(p.framed))
	if p.sandboxScripts {
		d = append(d, "sandbox allow-scripts")
	}
	return strings.Join(d, "; ")
}

func selfOrNone(self bool) string {
	if self {
		return "'self'"
	}
	return "'none'"
}

// setPolicy sets p as w's Content-Security-Policy.
func setPolicy(w http.ResponseWriter, p policy) {
	w.Header().Set("Content-Security-Policy", p.String())
}

// secured gives every response of next the headers that make it safe to
// open: X-Content-Type-Options: nosniff, so that no browser takes a file
// for HTML that is not sent as HTML, and the zero policy, which a page
// replaces with its own before it writes. Redirects, zips and the errors
// of the mux itself (404, 405) keep the zero policy.
func secured(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		setPolicy(w, policy{})
		next.ServeHTTP(w, r)
	})
}
