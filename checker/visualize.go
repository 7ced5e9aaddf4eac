package checker

import (
	"fmt"
	"hash/fnv"
	"html"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"

	"chaos/history"
	"chaos/history/faultrec"
)

// visualizer writes porcupine's HTML visualizations of failing keys.
type visualizer struct {
	dir         string
	annotations []porcupine.Annotation
}

// newVisualizer prepares dir for this check's visualizations: it removes
// key-*.html files an earlier check left. The directory is created with the
// first visualization. A nil visualizer (dir empty) writes nothing.
func newVisualizer(dir string, rh *registerHistory) (*visualizer, error) {
	if dir == "" {
		return nil, nil
	}
	old, err := filepath.Glob(filepath.Join(dir, "key-*.html"))
	if err != nil {
		return nil, fmt.Errorf("visualizations: %w", err)
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return nil, fmt.Errorf("visualizations: %w", err)
		}
	}
	return &visualizer{dir: dir, annotations: nemesisAnnotations(rh.nemesis, rh.infinity)}, nil
}

// write visualizes one key and returns the file's path relative to the
// parent of the visualization directory.
func (v *visualizer) write(key string, info porcupine.LinearizationInfo) (string, error) {
	if v == nil {
		return "", nil
	}
	info.AddAnnotations(v.annotations)
	if err := os.MkdirAll(v.dir, 0o755); err != nil {
		return "", fmt.Errorf("visualize key %q: %w", key, err)
	}
	name := visualizationFile(key)
	if err := porcupine.VisualizePath(visualModel(registerModel()), info, filepath.Join(v.dir, name)); err != nil {
		return "", fmt.Errorf("visualize key %q: %w", key, err)
	}
	return filepath.Join(filepath.Base(v.dir), name), nil
}

// visualModel is m for porcupine's visualizer, whose page (porcupine
// v1.3.1, visualization/index.js) shows the history in two ways: an op's
// description, an annotation's description and details as text
// (textContent), but an op's metadata and the states in its tooltip as
// markup (innerHTML). Those two are HTML-escaped here, so that a node name
// or any other value of the history shows as the text it is and never
// becomes markup; the others are left as they are, or the page would show
// "&lt;". Upgrading porcupine means reading index.js again (the browser
// test in cmd/chaos plants markup in a history and hovers over every box).
func visualModel(m porcupine.Model) porcupine.Model {
	metadata, state := m.DescribeOperationMetadata, m.DescribeState
	m.DescribeOperationMetadata = func(info any) string { return html.EscapeString(metadata(info)) }
	m.DescribeState = func(s any) string { return html.EscapeString(state(s)) }
	return m
}

// visualizationFile names the file for key: "key-" and the key with every
// byte outside [A-Za-z0-9.-] written as _XX, so distinct keys get distinct
// names; very long keys are cut and given a hash instead.
func visualizationFile(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "_%02X", c)
		}
	}
	name := b.String()
	if len(name) > 150 {
		h := fnv.New64a()
		h.Write([]byte(key))
		name = fmt.Sprintf("%s_%016x", name[:128], h.Sum64())
	}
	return "key-" + name + ".html"
}

// faultEnd returns the f of the nemesis op that ends the fault f starts, or
// "" when f starts no fault: a family's stop op for its start op, as the
// fault records' table names them (kill ... start), and stop-X for any
// other start-X.
func faultEnd(f string) string {
	if fam, _, ok := faultrec.OpFamily(f); ok && f == fam.StartOp {
		return fam.StopOp
	}
	if rest, ok := strings.CutPrefix(f, "start-"); ok {
		return "stop-" + rest
	}
	return ""
}

// nemesisAnnotations turns nemesis ops into annotations on a "nemesis" row:
// a fault and the op that ends it (start-partition ... stop-partition, kill
// ... start, pause ... resume, clock-bump ... clock-reset) become one span,
// paired first in first out; a fault still active at the end spans to end;
// any other op is a point.
func nemesisAnnotations(ops []history.Op, end int64) []porcupine.Annotation {
	var out []porcupine.Annotation
	active := make(map[string][]history.Op) // end f -> faults waiting for it
	for _, op := range ops {
		if waiting := active[op.F]; len(waiting) > 0 {
			start := waiting[0]
			active[op.F] = waiting[1:]
			out = append(out, annotation(start, op.Time, fmt.Sprintf("%s %s, until %s %s", start.F, start.Value, op.F, op.Value)))
			continue
		}
		if e := faultEnd(op.F); e != "" {
			active[e] = append(active[e], op)
			continue
		}
		out = append(out, annotation(op, op.Time, fmt.Sprintf("%s %s", op.F, op.Value)))
	}
	var unhealed []history.Op
	for _, waiting := range active {
		unhealed = append(unhealed, waiting...)
	}
	sort.Slice(unhealed, func(i, j int) bool { return unhealed[i].Index < unhealed[j].Index })
	for _, start := range unhealed {
		out = append(out, annotation(start, end, fmt.Sprintf("%s %s, not healed before the end", start.F, start.Value)))
	}
	return out
}

// annotation shows op from its time to end; short targets go in the label,
// everything in the tooltip.
func annotation(op history.Op, end int64, details string) porcupine.Annotation {
	desc := op.F
	if op.HasValue() && len(op.Value) <= 40 {
		desc += " " + string(op.Value)
	}
	return porcupine.Annotation{Tag: "nemesis", Start: op.Time, End: end, Description: desc, Details: details,
		BackgroundColor: "#f8d7da"}
}
