// Package golden compares what a test produces with a golden file, the
// expected output kept in the repository (under testdata), and rewrites
// the file on request. Like net/http/httptest it is meant for tests only:
// import it from _test.go files, never from the product.
package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// UpdateEnv names the environment variable that rewrites golden files:
// with UpdateEnv=1, Equal writes what the test produced into the file
// instead of comparing, for every package at once:
//
//	CHAOS_UPDATE_GOLDEN=1 go test ./...
//
// Review the diff before committing it. Any other non-empty value is a
// mistake, and fails the test.
const UpdateEnv = "CHAOS_UPDATE_GOLDEN"

// Equal reports whether got is the content of the golden file at path,
// and fails t with the difference when it is not; a missing file fails
// too. Both failures name UpdateEnv, which rewrites the file (making its
// directory) instead.
func Equal(t testing.TB, path, got string) bool {
	t.Helper()
	switch v := os.Getenv(UpdateEnv); v {
	case "":
	case "1":
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("rewrite golden file: %v", err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatalf("rewrite golden file: %v", err)
		}
		t.Logf("rewrote %s (%s=1)", path, UpdateEnv)
		return true
	default:
		t.Fatalf("%s=%q: set it to 1 to rewrite the golden files, or leave it unset", UpdateEnv, v)
		return false
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (%s=1 go test creates it)", err, UpdateEnv)
		return false
	}
	return assert.Equal(t, string(want), got, "differs from %s (%s=1 go test rewrites it)", path, UpdateEnv)
}
