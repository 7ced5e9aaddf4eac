package testrun

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --corrupt-file and --corrupt-how need the corrupt family among the
// faults, --storage-names the fault file system: given without them they
// are refused in one line (exit 254) rather than silently ignored.
func TestValidateRefusesStorageOptionsWithoutTheirFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(o *Options)
		wrong string // "" when valid
	}{
		{"corrupt-how with kill only", func(o *Options) { o.Nemesis, o.CorruptHows = []string{"kill"}, []string{"flip"} }, "narrow the corrupt family"},
		{"corrupt-file with the default mix, no storage faults", func(o *Options) { o.CorruptFiles = []string{"wal"} }, "narrow the corrupt family"},
		{"corrupt-file with none", func(o *Options) { o.Nemesis, o.StorageFaults, o.CorruptFiles = []string{"none"}, true, []string{"wal"} }, "narrow the corrupt family"},
		{"corrupt-file with corrupt", func(o *Options) { o.Nemesis, o.CorruptFiles = []string{"corrupt"}, []string{"wal"} }, ""},
		{"corrupt-how with the default mix and storage faults", func(o *Options) { o.StorageFaults, o.CorruptHows = true, []string{"zero"} }, ""},
		{"storage-names without storage faults", func(o *Options) { o.Nemesis, o.StorageNames = []string{"kill"}, "ordered" }, "does not use"},
		{"storage-names with power-loss", func(o *Options) { o.Nemesis, o.StorageNames = []string{"power-loss"}, "ordered" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := describedOptions("chaos-node")
			tc.set(&o)
			err := o.Prepare()
			if tc.wrong == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrUsage)
			assert.Contains(t, err.Error(), tc.wrong)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}
