package jsonline

import "encoding/json"

// AppendString appends s as a JSON string. Plain printable ASCII, by far
// the common case for names, keys and hashes, is copied directly; anything
// else goes through encoding/json, so escaping follows the standard library.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, _ := json.Marshal(s) // a string always marshals
			return append(b, quoted...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
