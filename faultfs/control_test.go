package faultfs

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/testbed/bedtest"
)

// runTest runs Run over fresh directories, and returns the mount point,
// the client, and a stop that ends Run and returns its error.
func runTest(t *testing.T) (mnt string, c Client, stop func() error) {
	t.Helper()
	bedtest.RequireFUSE(t)
	dir := t.TempDir()
	backing, mnt := filepath.Join(dir, "backing"), filepath.Join(dir, "mnt")
	require.NoError(t, os.Mkdir(backing, 0o755))
	require.NoError(t, os.Mkdir(mnt, 0o755))
	c = Client{Socket: filepath.Join(dir, "control.sock")}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, backing, mnt, c.Socket, Options{}, slog.New(slog.DiscardHandler)) }()
	var once bool
	var err error
	stop = func() error {
		if !once {
			once = true
			cancel()
			err = <-done
		}
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return mnt, c, stop
}

// mounted says whether mnt is a mount point now.
func mounted(t *testing.T, mnt string) bool {
	b, err := os.ReadFile("/proc/self/mounts")
	require.NoError(t, err)
	return strings.Contains(string(b), " "+mnt+" ")
}

func TestControlOverTheSocket(t *testing.T) {
	mnt, c, stop := runTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.Status(ctx) // waits for the socket
	require.NoError(t, err)
	assert.Equal(t, Status{}, st)
	require.True(t, mounted(t, mnt))

	require.NoError(t, os.WriteFile(filepath.Join(mnt, "f"), []byte("lost"), 0o644))
	_, err = c.SetErrors(ctx, ErrorsRequest{Kind: "full", On: OnWrites})
	assert.EqualError(t, err, `fault file system refused: error kind "full": want enospc or eio`)
	st, err = c.SetErrors(ctx, ErrorsRequest{Kind: KindEIO, On: OnFsyncs, ForMS: 60000})
	require.NoError(t, err)
	require.NotNil(t, st.Errors)
	assert.Equal(t, KindEIO, st.Errors.Kind)
	assert.NotNil(t, st.Errors.Until)
	st, err = c.ClearErrors(ctx)
	require.NoError(t, err)
	assert.Nil(t, st.Errors)

	res, err := c.PowerLoss(ctx)
	require.NoError(t, err)
	assert.Equal(t, PowerLossResult{Dropped: Status{PendingFiles: 1, PendingNames: 1}}, res)
	_, err = os.Stat(filepath.Join(mnt, "f"))
	assert.True(t, os.IsNotExist(err))

	require.NoError(t, stop())
	assert.False(t, mounted(t, mnt), "Run unmounts when it ends")
}

// A file still open when Run ends: the mount is detached lazily, and Run
// says so.
func TestRunDetachesABusyMount(t *testing.T) {
	mnt, c, stop := runTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Status(ctx)
	require.NoError(t, err)
	f, err := os.Create(filepath.Join(mnt, "open"))
	require.NoError(t, err)
	defer f.Close()
	err = stop()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "files were still open, detached it lazily")
	assert.False(t, mounted(t, mnt))
}

// A power loss is refused while files of the mount are open (the
// programs using them are not dead), and done once they are closed.
func TestPowerLossWaitsForFilesToClose(t *testing.T) {
	tf := mountTest(t, map[string]string{"a": "durable"})
	f, err := os.OpenFile(tf.m("a"), os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("DURABLE")
	require.NoError(t, err)
	powerLoss := func(wait time.Duration) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		Handler(tf.Tracker, wait).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/power-loss", nil))
		return rec
	}
	rec := powerLoss(0)
	assert.Equal(t, http.StatusConflict, rec.Code)
	assert.JSONEq(t, `{"error":"power loss: 1 files of the mount are still open: kill the programs that use it first"}`, rec.Body.String())
	assert.Equal(t, "DURABLE", tf.content(t, "a"), "nothing was dropped")

	require.NoError(t, f.Close())
	rec = powerLoss(10 * time.Second) // the kernel releases the file soon after the close
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "durable", tf.content(t, "a"))
}

// for_ms is bounded by a day: a larger one (9300000000000 overflowed
// time.Duration into an expiry in the past: no injection at all) is
// refused with 400, the mode in force left as it was.
func TestErrorsForMSIsBounded(t *testing.T) {
	tr, err := NewTracker(t.TempDir(), func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }, Options{})
	require.NoError(t, err)
	put := func(body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		Handler(tr, 0).ServeHTTP(rec, httptest.NewRequest(http.MethodPut, "/errors", strings.NewReader(body)))
		return rec
	}
	for _, ms := range []string{"9300000000000", "86400001"} {
		rec := put(`{"kind":"eio","on":"writes","for_ms":` + ms + `}`)
		assert.Equal(t, http.StatusBadRequest, rec.Code, ms)
		assert.JSONEq(t, `{"error":"errors: for_ms `+ms+` is past the limit of 86400000 (a day)"}`, rec.Body.String())
		assert.Nil(t, tr.Status().Errors, "nothing injected")
	}
	rec := put(`{"kind":"eio","on":"writes","for_ms":-1}`)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.JSONEq(t, `{"error":"errors: for_ms -1 is negative"}`, rec.Body.String())

	rec = put(`{"kind":"eio","on":"writes","for_ms":86400000}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotNil(t, tr.Status().Errors)
	assert.Equal(t, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), *tr.Status().Errors.Until, "a day is allowed")
}
