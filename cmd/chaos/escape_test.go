package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// esc is an ANSI sequence that would clear the screen; a history, a log or
// an error may carry one.
const esc = "\x1b[2J"

// A key holding an ANSI sequence is printed escaped in chaos check's
// findings: the terminal sees \x1b, never ESC.
func TestCheckEscapesAKeysControlCharacters(t *testing.T) {
	dir := runDir(t, strings.ReplaceAll(staleRead, `"k3"`, `"k\u001b[2J"`))
	code, out, _ := execute(t, "check", dir)
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, out, `key k\x1b[2J: process 2 read 7`)
	assert.NotContains(t, out, "\x1b")
}

// Node names from a log are printed escaped by chaos logs.
func TestLogsEscapesNodeNames(t *testing.T) {
	log, err := os.ReadFile(filepath.Join("..", "..", "foreignlog", "testdata", "chaos.jsonl"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "events.jsonl")
	require.NoError(t, os.WriteFile(path, bytes.ReplaceAll(log, []byte(`"n1"`), []byte(`"n1\u001b[2J"`)), 0o644))
	code, out, _ := execute(t, "logs", path)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, `n1\x1b[2J`)
	assert.NotContains(t, out, "\x1b")
}

// The error line main prints is escaped: here an error naming a file whose
// name holds an ANSI sequence.
func TestErrorLineIsEscaped(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "log"+esc)
	var stderr bytes.Buffer
	assert.Equal(t, exitUsage, runWith([]string{"logs", missing}, &stderr))
	assert.Equal(t, "chaos: open "+filepath.Dir(missing)+`/log\x1b[2J: no such file or directory`+"\n", stderr.String())
}
