package snap

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncLog records the fsyncs Save asks for, in order, and performs them.
type syncLog struct{ calls []string }

func (l *syncLog) SyncFile(f *os.File) error {
	l.calls = append(l.calls, "file "+filepath.Base(f.Name()))
	return f.Sync()
}

func (l *syncLog) SyncDir(dir string) error {
	l.calls = append(l.calls, "dir")
	return osSyncer{}.SyncDir(dir)
}

func TestSaveFsyncsFileThenDirectoryUnlessNoDirSync(t *testing.T) {
	for name, bug := range map[string]bool{"correct": false, "no-dir-fsync": true} {
		t.Run(name, func(t *testing.T) {
			l := &syncLog{}
			opts := []Option{WithSyncer(l)}
			if bug {
				opts = append(opts, WithNoDirSync())
			}
			s, err := New(filepath.Join(t.TempDir(), "snap"), opts...)
			require.NoError(t, err)
			for i := uint64(1); i <= Keep+1; i++ {
				require.NoError(t, s.Save(1, i, []byte("state")))
			}
			file := "file " + fileName(1, 1) + tempSuffix
			if bug {
				assert.Equal(t, []string{file}, l.calls[:1])
				assert.NotContains(t, l.calls, "dir", "no-dir-fsync: renames and prunes without a directory fsync")
				return
			}
			// Each save: the temporary file, then the directory after the
			// rename; the last save prunes the oldest, another directory fsync.
			assert.Equal(t, []string{file, "dir"}, l.calls[:2])
			assert.Len(t, l.calls, 2*(Keep+1)+1)
			assert.Equal(t, "dir", l.calls[len(l.calls)-1])
		})
	}
}
