package faultfs

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Injected errors refuse what they are on, and nothing else, until
// cleared; a refused write changes nothing, a refused fsync makes nothing
// durable.
func TestInjectedErrors(t *testing.T) {
	tf := mountTest(t, map[string]string{"a": "durable"})
	require.NoError(t, tf.SetErrors(ErrorMode{Kind: KindENOSPC, On: OnWrites}))
	f, err := os.OpenFile(tf.m("a"), os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteAt([]byte("X"), 0)
	assert.ErrorIs(t, err, syscall.ENOSPC)
	_, err = os.Create(tf.m("new"))
	assert.ErrorIs(t, err, syscall.ENOSPC, "making a name is a write")
	assert.NoError(t, f.Sync(), "fsyncs are not refused")
	assert.Equal(t, "durable", tf.content(t, "a"))

	require.NoError(t, tf.SetErrors(ErrorMode{Kind: KindEIO, On: OnFsyncs}))
	_, err = f.WriteAt([]byte("X"), 0)
	require.NoError(t, err)
	assert.ErrorIs(t, f.Sync(), syscall.EIO)
	assert.Equal(t, &ErrorMode{Kind: KindEIO, On: OnFsyncs}, tf.Status().Errors)
	tf.ClearErrors()
	assert.Nil(t, tf.Status().Errors)
	tf.powerLoss(t)
	assert.Equal(t, "durable", tf.content(t, "a"), "the refused fsync made nothing durable")
}

// A timed error mode ends by itself.
func TestInjectedErrorsForAWhile(t *testing.T) {
	tf := mountTest(t, map[string]string{"a": "durable"})
	until := tf.clock.Load().Add(time.Minute)
	require.NoError(t, tf.SetErrors(ErrorMode{Kind: KindEIO, On: OnBoth, Until: &until}))
	err := os.WriteFile(tf.m("a"), []byte("x"), 0o644)
	assert.ErrorIs(t, err, syscall.EIO)
	tf.clock.Store(&until)
	assert.NoError(t, os.WriteFile(tf.m("a"), []byte("x"), 0o644))
	assert.Nil(t, tf.Status().Errors)
}

func TestErrorModeValidates(t *testing.T) {
	assert.EqualError(t, ErrorMode{Kind: "full", On: OnWrites}.Validate(), `error kind "full": want enospc or eio`)
	assert.EqualError(t, ErrorMode{Kind: KindEIO, On: "reads"}.Validate(), `errors on "reads": want writes, fsyncs or both`)
}
