package testrun

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckName(t *testing.T) {
	for _, name := range []string{"t", "chaos-node-register-all", "chaos-node-register-partition+kill-bug-stale-read+lease-read",
		"etcd_v3.5", "1x", strings.Repeat("a", MaxNameLen)} {
		assert.NoError(t, CheckName(name), name)
	}
	for name, want := range map[string]string{
		"":                                "is empty",
		"../outside":                      "must begin with a letter or a digit",
		"a/../../outside":                 `holds '/': use letters, digits and . _ + - only`,
		".":                               "must begin with a letter or a digit",
		"..":                              "must begin with a letter or a digit",
		".hidden":                         "must begin with a letter or a digit",
		"-rf":                             "must begin with a letter or a digit",
		"two\nlines":                      `holds '\n'`,
		"red\x1b[31m":                     `holds '\x1b'`,
		"a b":                             `holds ' '`,
		"latest":                          "is one of the store's own names",
		"campaigns":                       "is one of the store's own names",
		strings.Repeat("a", MaxNameLen+1): "is 201 bytes long, more than 200",
	} {
		assert.ErrorContains(t, CheckName(name), want, "%q", name)
	}
}

// --name ../outside and a name with a newline are refused while the
// options are validated (exit 254), before anything is written; the
// default name, families and bugs joined by +, passes.
func TestValidateRefusesBadNames(t *testing.T) {
	o := describedOptions("chaos-node")
	o.Nemesis = []string{"partition", "kill"}
	o.Bugs = []string{"stale-read", "lease-read"}
	require.NoError(t, o.Prepare())
	assert.Equal(t, "chaos-node-register-partition+kill-bug-stale-read+lease-read", o.Name)

	for _, name := range []string{"../outside", "a\nb"} {
		o := describedOptions("chaos-node")
		o.Name = name
		err := o.Prepare()
		require.ErrorIs(t, err, ErrUsage)
		assert.Contains(t, err.Error(), "--name "+strconv.Quote(name))
		assert.NotContains(t, err.Error(), "\n")
	}

	o = describedOptions("chaos-node")
	o.Bugs = []string{"no/such"}
	err := o.Prepare()
	require.ErrorIs(t, err, ErrUsage)
	assert.Contains(t, err.Error(), "give one with --name")
}

// newRunDir refuses a name Validate would have, writing nothing.
func TestNewRunDirRefusesABadName(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	_, err := newRunDir(store, "../outside", time.Now())
	require.EqualError(t, err, `test name "../outside" must begin with a letter or a digit`)
	_, err = os.Stat(store)
	require.ErrorIs(t, err, os.ErrNotExist)
}
