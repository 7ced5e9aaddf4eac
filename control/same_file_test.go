package control_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/control/remotetest"
)

// EnsureFile uploads only when the host's copy differs: a host whose
// sha256sum prints the local file's sum gets nothing, one that prints
// another sum or none (no file) gets the file.
func TestEnsureFileUploadsOnlyAChangedFile(t *testing.T) {
	local := filepath.Join(t.TempDir(), "chaos")
	require.NoError(t, os.WriteFile(local, []byte("binary"), 0o755))
	sum, err := control.FileSHA256(local)
	require.NoError(t, err)
	assert.Equal(t, "9a3a45d01531a20e89ac6ae10b0b0beb0492acd7216a368aa062d1a5fecaf9cd", sum)
	for _, tc := range []struct {
		name, printed string
		upload        bool
	}{
		{"same", sum + "  /opt/chaos/bin/chaos\n", false},
		{"other", "0000  /opt/chaos/bin/chaos\n", true},
		{"none", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec remotetest.Recorder
			r := rec.Remote("n1", func(c remotetest.Call) (control.Result, error) {
				return control.Result{Stdout: []byte(tc.printed)}, nil
			})
			uploaded, err := control.EnsureFile(context.Background(), r, local, "/opt/chaos/bin/chaos", sum, 0o755)
			require.NoError(t, err)
			assert.Equal(t, tc.upload, uploaded)
			want := []string{"run mkdir -p /opt/chaos/bin && { sha256sum /opt/chaos/bin/chaos 2>/dev/null || true; }"}
			if tc.upload {
				want = append(want, "upload "+local+" -> /opt/chaos/bin/chaos -rwxr-xr-x")
			}
			var got []string
			for _, c := range rec.Take() {
				got = append(got, c.String())
			}
			assert.Equal(t, want, got)
		})
	}
}
