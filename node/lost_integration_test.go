//go:build linux

package node_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/node/wal"
)

const baseLost = 230

// A follower whose WAL lost fsynced records (cut at a record boundary,
// which leaves nothing torn to see) starts abstaining, is caught up by
// the leader, forgets the loss and votes again; the writes it lost are
// served by it again.
func TestIntegrationNodeThatLostRecordsIsCaughtUpBeforeItVotes(t *testing.T) {
	c := newCluster(t, baseLost, 3)
	leader, _ := c.waitLeader()
	for i := range 30 {
		c.eventually(leader, http.MethodPut, fmt.Sprintf("/kv/k%d", i), putBody(fmt.Sprint(i), 1, uint64(i+1)))
	}
	f := c.followers(leader)[0]
	f.kill()
	cutLastRecords(t, filepath.Join(f.dataDir, "wal"), 10)

	f.start()
	c.waitUp(f)
	waitFor(t, 20e9, f.name+" caught up and voting again", func() error {
		st, err := c.status(f)
		switch {
		case err != nil:
			return err
		case st.Abstaining:
			return errors.New("still abstaining")
		}
		return nil
	})
	log := f.logText()
	require.Contains(t, log, "storage lost records it had made durable")
	require.Contains(t, log, "caught up by the leader")
	require.NoFileExists(t, filepath.Join(f.dataDir, "wal", "LOST"))
	for i := range 30 {
		r := c.eventually(f, http.MethodGet, fmt.Sprintf("/kv/k%d", i), nil)
		v, _ := r.str("value")
		require.Equal(t, fmt.Sprint(i), v, "k%d read through %s", i, f.name)
	}
}

// cutLastRecords truncates the newest segment in dir before its last n
// records, at a record boundary.
func cutLastRecords(t *testing.T, dir string, n int) {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	seg := segs[len(segs)-1]
	data, err := os.ReadFile(seg)
	require.NoError(t, err)
	var starts []int
	for off := wal.SyncBlockBytes; off+17 <= len(data) && data[off+8] != 0; {
		starts = append(starts, off)
		off += 17 + int(binary.LittleEndian.Uint32(data[off:]))
	}
	require.Greater(t, len(starts), n, "%s holds too few records", seg)
	require.NoError(t, os.Truncate(seg, int64(starts[len(starts)-n])))
	t.Logf("cut %s at byte %d, before its last %d of %d records", strings.TrimPrefix(seg, dir+"/"), starts[len(starts)-n], n, len(starts))
}
