package control

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A private key file that group or others can read (explicit or one of
// the defaults) gets one warning line naming it and the fix, and is still
// used; a 0600 key gets none.
func TestCredentialsWarnOfKeysOthersCanRead(t *testing.T) {
	home := t.TempDir()
	sshDir := filepath.Join(home, ".ssh")
	require.NoError(t, os.Mkdir(sshDir, 0o700))
	def, _ := newKey(t, sshDir, "id_ed25519")
	explicit, _ := newKey(t, home, "explicit key")
	for _, c := range []struct {
		name     string
		cfg      SSHConfig
		path     string
		mode     os.FileMode
		warnings int
	}{
		{"default key, private", SSHConfig{}, def, 0o600, 0},
		{"default key, readable by all", SSHConfig{}, def, 0o644, 1},
		{"explicit key, readable by group", SSHConfig{KeyFiles: []string{explicit}}, explicit, 0o640, 1},
		{"explicit key, owner read-only", SSHConfig{KeyFiles: []string{explicit}}, explicit, 0o400, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, os.Chmod(c.path, c.mode))
			var warn bytes.Buffer
			c.cfg.Warn = &warn
			creds, err := loadCredentials(c.cfg, home)
			require.NoError(t, err)
			assert.Equal(t, []string{c.path}, creds.keyFiles, "the key is still used")
			lines := strings.Count(warn.String(), "\n")
			assert.Equal(t, c.warnings, lines, "%q", warn.String())
			if c.warnings > 0 {
				assert.Equal(t, "chaos: warning: private key "+c.path+" has mode "+fmt.Sprintf("%04o", c.mode.Perm())+
					", open to group or others, which OpenSSH refuses; fix it with chmod 600 "+ShellQuote(c.path)+"\n", warn.String())
			}
		})
	}
}
