package jsonline

// Interner shares equal short strings: the names that repeat across a
// log or a history (ops, keys, nodes, kinds) are then held once, not once
// a line. It keeps at most its bound of strings, each of at most 64
// bytes; the zero Interner shares nothing.
type Interner struct {
	strings map[string]string
	max     int
}

// NewInterner returns an Interner that keeps at most max strings.
func NewInterner(max int) *Interner {
	return &Interner{strings: make(map[string]string), max: max}
}

// String returns s, or the equal string kept before.
func (t *Interner) String(s string) string {
	if u, ok := t.strings[s]; ok {
		return u
	}
	if t.strings != nil && len(t.strings) < t.max && len(s) <= 64 {
		t.strings[s] = s
	}
	return s
}

// Bytes is String of b, without allocating when b was kept before.
func (t *Interner) Bytes(b []byte) string {
	if u, ok := t.strings[string(b)]; ok {
		return u
	}
	return t.String(string(b))
}
