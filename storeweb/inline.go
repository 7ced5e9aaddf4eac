package storeweb

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"slices"
)

// inlineHashes returns the CSP hash sources of the inline <tag> elements
// of the HTML document doc (tag is "script" or "style", in lower case), in
// document order, without repeats. Each is "'sha256-" and the base64 of
// the SHA-256 of the element's text as a browser hashes it: the raw text
// from the end of the start tag to the first "</tag" in any case, with
// "\r\n" and "\r" read as "\n".
//
// Comments are skipped; nothing else of the markup is parsed. A hash the
// browser would not compute (text in a comment's look-alike, say) allows
// nothing that is in the page; a missed element is refused, which breaks
// only that page. Either way no markup that is not in doc is allowed.
func inlineHashes(doc []byte, tag string) []string {
	var out []string
	open, end := "<"+tag, "</"+tag
	for i := 0; i < len(doc); {
		j := bytes.IndexByte(doc[i:], '<')
		if j < 0 {
			break
		}
		i += j
		if bytes.HasPrefix(doc[i:], []byte("<!--")) {
			k := bytes.Index(doc[i+4:], []byte("-->"))
			if k < 0 {
				break
			}
			i += 4 + k + 3
			continue
		}
		if !isStartTag(doc[i:], open) {
			i++
			continue
		}
		body := startTagEnd(doc, i+len(open))
		stop := indexFold(doc, body, end)
		if h := hashSource(doc[body:stop]); !slices.Contains(out, h) {
			out = append(out, h)
		}
		i = stop
	}
	return out
}

// isStartTag reports whether b begins with the start tag open ("<script"),
// in any case, followed by what ends a tag name.
func isStartTag(b []byte, open string) bool {
	if len(b) <= len(open) || !bytes.EqualFold(b[:len(open)], []byte(open)) {
		return false
	}
	switch b[len(open)] {
	case ' ', '\t', '\n', '\r', '\f', '/', '>':
		return true
	}
	return false
}

// startTagEnd returns the index after the '>' that ends the start tag
// whose attributes begin at b[from], skipping quoted attribute values; or
// len(b).
func startTagEnd(b []byte, from int) int {
	var quote byte
	afterEquals := false
	for i := from; i < len(b); i++ {
		c := b[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			continue
		case c == '>':
			return i + 1
		case (c == '"' || c == '\'') && afterEquals:
			quote = c
			continue
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' {
			afterEquals = c == '='
		}
	}
	return len(b)
}

// indexFold returns the index of the first s in b[from:], in any case,
// as an index of b; or len(b).
func indexFold(b []byte, from int, s string) int {
	for i := from; i+len(s) <= len(b); i++ {
		k := bytes.IndexByte(b[i:], s[0])
		if k < 0 || i+k+len(s) > len(b) {
			break
		}
		i += k
		if bytes.EqualFold(b[i:i+len(s)], []byte(s)) {
			return i
		}
	}
	return len(b)
}

// hashSource is the CSP source allowing the inline element whose raw text
// is text.
func hashSource(text []byte) string {
	if bytes.IndexByte(text, '\r') >= 0 {
		text = bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n"))
		text = bytes.ReplaceAll(text, []byte("\r"), []byte("\n"))
	}
	sum := sha256.Sum256(text)
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}
