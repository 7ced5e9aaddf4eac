package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"chaos/corrupt"
)

// newCorruptCmd is `chaos corrupt`, which the corrupt fault family runs on
// a node's host while the node is down.
func newCorruptCmd() *cobra.Command {
	var req corrupt.Request
	cmd := &cobra.Command{
		Use:   "corrupt",
		Short: "Damage one file of a data directory: flip a bit, zero a range, or truncate it (run by chaos on a host)",
		Long: `corrupt damages one file of a node's data directory in place, within the part
of the file that holds data (a preallocated zero tail is not data), and
fsyncs it: what the corrupt fault family does to a minority of nodes while
they are down (docs/FORMATS.md, "Nemesis operations"). --target chooses the
file: wal, the newest write-ahead log segment (*.wal, or in a directory wal),
damaged within its last 64 KiB of data, its newest records;
snapshot, the newest snapshot (*.snap, or in a directory snap); random, any
file; when no file of the kind holds data, a random one. --how is flip (one
bit), zero (1 to 512 bytes) or truncate. --seed drives every choice. It
prints what it did as one JSON line.

Exit status: 0 done, 254 bad flags, 255 no file holds data, or the damage
failed.`,
		Example: `  chaos corrupt --dir /var/lib/chaos/chaos-node/n1/data --target wal --how flip --seed 7`,
		Args:    cobra.NoArgs,
		Hidden:  true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := req.Validate(); err != nil {
				return usageErrorf("corrupt: %v", err)
			}
			res, err := corrupt.Apply(req)
			if err != nil {
				return setupError(fmt.Errorf("corrupt: %w", err))
			}
			b, err := json.Marshal(res)
			if err != nil {
				return setupError(err)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Dir, "dir", "", "the data directory (required)")
	f.StringVar(&req.Target, "target", corrupt.TargetRandom, "the file: wal, snapshot or random")
	f.StringVar(&req.How, "how", corrupt.HowFlip, "the damage: flip, zero or truncate")
	f.Uint64Var(&req.Seed, "seed", 0, "seed of every random choice")
	return cmd
}
