package checker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"

	"chaos/internal/atomicfile"
	"chaos/internal/inputfile"
)

// WriteResults writes r into the results.json at path and returns the
// verdict the file now holds.
//
// A results.json already there (a run's, with fields such as name and seed
// and checks this package does not own, such as raft) is updated, not
// replaced: r's checks replace those of the same name, r's ops replace ops,
// every other field and check is kept, and valid is merged again over all
// checks (a check without a readable verdict counts as unknown). The file
// is replaced atomically. A results.json that is not a JSON object is an
// error wrapping ErrMalformed, and is left alone.
//
// Every results.json it writes gets its Summary, summary.json in the same
// directory, written atomically after it (see writeSummary); an error
// writing it comes after results.json was written.
func WriteResults(path string, r Report) (Validity, error) {
	fields, checks, err := readResults(path)
	if err != nil {
		return Unknown, err
	}
	for name, res := range r.Checks {
		raw, err := json.Marshal(res)
		if err != nil {
			return Unknown, fmt.Errorf("results: check %s: %w", name, err)
		}
		checks[name] = raw
	}
	verdicts := make([]Validity, 0, len(checks))
	for _, raw := range checks {
		var c struct {
			Valid Validity `json:"valid"`
		}
		if json.Unmarshal(raw, &c) != nil {
			c.Valid = Unknown
		}
		verdicts = append(verdicts, c.Valid)
	}
	valid := Merge(verdicts...)
	if fields["ops"], err = json.Marshal(r.Ops); err != nil {
		return Unknown, fmt.Errorf("results: %w", err)
	}
	if fields["checks"], err = json.Marshal(checks); err != nil {
		return Unknown, fmt.Errorf("results: %w", err)
	}
	fields["valid"], _ = valid.MarshalJSON()
	data := encodeResults(fields)
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return valid, fmt.Errorf("results: %w", err)
	}
	if err := writeSummary(path, data); err != nil {
		return valid, fmt.Errorf("results: %w", err)
	}
	return valid, nil
}

// maxResultsBytes bounds an existing results.json that WriteResults
// reads: far more than any run writes.
const maxResultsBytes = 256 << 20

// readResults returns the top-level fields and the checks of the
// results.json at path, empty when there is none.
func readResults(path string) (fields, checks map[string]json.RawMessage, err error) {
	fields = make(map[string]json.RawMessage)
	checks = make(map[string]json.RawMessage)
	b, err := inputfile.ReadFile(path, maxResultsBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return fields, checks, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("results: %w", err)
	}
	if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
		return nil, nil, fmt.Errorf("%w: %s exists but is not a JSON object; move it away to check again", ErrMalformed, path)
	}
	if raw, ok := fields["checks"]; ok && json.Unmarshal(raw, &checks) != nil {
		return nil, nil, fmt.Errorf("%w: %s: \"checks\" is not a JSON object; move the file away to check again", ErrMalformed, path)
	}
	if checks == nil { // "checks": null
		checks = make(map[string]json.RawMessage)
	}
	return fields, checks, nil
}

// encodeResults writes fields as an indented JSON object, "valid" first and
// the rest by name.
func encodeResults(fields map[string]json.RawMessage) []byte {
	names := make([]string, 0, len(fields))
	for name := range fields {
		if name != "valid" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var compact bytes.Buffer
	compact.WriteString(`{"valid":`)
	compact.Write(fields["valid"])
	for _, name := range names {
		key, _ := json.Marshal(name)
		compact.WriteByte(',')
		compact.Write(key)
		compact.WriteByte(':')
		compact.Write(fields[name])
	}
	compact.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return compact.Bytes() // every part is valid JSON, so this does not happen
	}
	out.WriteByte('\n')
	return out.Bytes()
}
