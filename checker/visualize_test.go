package checker

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history"
)

func TestVisualizationOfAFailingKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "linearizable")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	stale := filepath.Join(dir, "key-old.html")
	require.NoError(t, os.WriteFile(stale, []byte("from an earlier check"), 0o644))
	keep := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(keep, nil, 0o644))

	valid, d := checkLinearizable(t, load(t, "register/invalid-stale-read.jsonl"), LinearizableOptions{VisualizationDir: dir})
	assert.Equal(t, Invalid, valid)
	require.Len(t, d.Failures, 1)
	assert.Equal(t, filepath.Join("linearizable", "key-k3.html"), d.Failures[0].Visualization)

	html, err := os.ReadFile(filepath.Join(dir, "key-k3.html"))
	require.NoError(t, err)
	page := string(html)
	assert.Contains(t, page, "<html")
	assert.Contains(t, page, `"Tag":"nemesis"`)
	assert.Contains(t, page, `start-partition {\"n1\":[\"n2\",\"n3\"]}, until stop-partition null`)
	assert.Contains(t, page, "read → 7")
	assert.Contains(t, page, "process 2, history index 7")
	assert.NoFileExists(t, stale, "an earlier check's visualization is removed")
	assert.FileExists(t, keep, "other files are left alone")
	assert.NoFileExists(t, filepath.Join(dir, "key-k1.html"), "valid keys are not visualized")
}

// What porcupine's page writes as markup (an op's metadata, the states) is
// HTML-escaped; what it writes as text (descriptions, annotations) is left
// as it is, so that both show the history's own characters.
func TestVisualizationEscapesWhatThePageTakesAsMarkup(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "linearizable")
	h := load(t, "register/invalid-stale-read.jsonl")
	for i := range h {
		if h[i].Type == history.OK {
			h[i].Node = `<img src=x onerror=alert(1)>`
		}
		if h[i].F == "start-partition" {
			h[i].Value = []byte(`{"<b>n1</b>":["n2"]}`)
		}
	}
	valid, _ := checkLinearizable(t, h, LinearizableOptions{VisualizationDir: dir})
	require.Equal(t, Invalid, valid)
	page, err := os.ReadFile(filepath.Join(dir, "key-k3.html"))
	require.NoError(t, err)
	_, data, found := strings.Cut(string(page), "const data = ")
	require.True(t, found, "porcupine's page holds its data")
	data, _, _ = strings.Cut(data, "\n")
	var got struct {
		Partitions []struct {
			History []struct{ Description, Metadata string }
		}
		Annotations []struct{ Description, Details string }
	}
	require.NoError(t, json.Unmarshal([]byte(data), &got))
	require.NotEmpty(t, got.Partitions)
	var metadata []string
	for _, op := range got.Partitions[0].History {
		metadata = append(metadata, op.Metadata)
		assert.NotContains(t, op.Description, "&", "descriptions are text")
	}
	assert.Contains(t, metadata, "process 2, history index 7, node &lt;img src=x onerror=alert(1)&gt;")
	require.NotEmpty(t, got.Annotations)
	assert.Equal(t, `start-partition {"<b>n1</b>":["n2"]}, until stop-partition null`, got.Annotations[0].Details,
		"annotations are text")
	assert.NotContains(t, string(page), "<img", "the data escapes <, so nothing in it ends the page's script")
}

func TestVisualizationFileNames(t *testing.T) {
	assert.Equal(t, "key-k3.html", visualizationFile("k3"))
	assert.Equal(t, "key-a_2Fb_20c_5F.html", visualizationFile("a/b c_"))
	assert.Equal(t, "key-.html", visualizationFile(""))
	assert.NotEqual(t, visualizationFile("a_2F"), visualizationFile("a/"), "distinct keys, distinct files")
	long := visualizationFile(strings.Repeat("x", 1000))
	assert.Less(t, len(long), 200)
	assert.NotEqual(t, long, visualizationFile(strings.Repeat("x", 999)))
}

func TestNemesisAnnotations(t *testing.T) {
	ops := []history.Op{
		{Index: 0, Time: 10, Process: history.NemesisProcess, Type: history.Info, F: "kill", Value: []byte(`["n1"]`)},
		{Index: 1, Time: 20, Process: history.NemesisProcess, Type: history.Info, F: "start-partition", Value: []byte(`"halves"`)},
		{Index: 2, Time: 30, Process: history.NemesisProcess, Type: history.Info, F: "start", Value: []byte(`["n1"]`)},
		{Index: 3, Time: 40, Process: history.NemesisProcess, Type: history.Info, F: "noise"},
		{Index: 4, Time: 50, Process: history.NemesisProcess, Type: history.Info, F: "pause", Value: []byte(`["n2"]`)},
	}
	a := nemesisAnnotations(ops, 99)
	require.Len(t, a, 4)
	assert.Equal(t, [3]any{"kill [\"n1\"]", int64(10), int64(30)}, [3]any{a[0].Description, a[0].Start, a[0].End})
	assert.Equal(t, [3]any{"noise", int64(40), int64(40)}, [3]any{a[1].Description, a[1].Start, a[1].End})
	assert.Equal(t, [3]any{`start-partition "halves"`, int64(20), int64(99)}, [3]any{a[2].Description, a[2].Start, a[2].End})
	assert.Equal(t, [3]any{`pause ["n2"]`, int64(50), int64(99)}, [3]any{a[3].Description, a[3].Start, a[3].End})
	assert.Contains(t, a[2].Details, "not healed before the end")
	for _, x := range a {
		assert.Equal(t, "nemesis", x.Tag)
	}
}

func TestNoVisualizationDirectoryWhenNothingFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "linearizable")
	valid, _ := checkLinearizable(t, load(t, "register/valid-sequential.jsonl"), LinearizableOptions{VisualizationDir: dir})
	assert.Equal(t, Valid, valid)
	assert.NoDirExists(t, dir)
}
