package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"chaos/campaign"
)

func newTestAllMergeCmd() *cobra.Command {
	var store string
	cmd := &cobra.Command{
		Use:   "merge SHARD_DIR...",
		Short: "Join the campaign directories of a sharded campaign into one",
		Long: `merge reads the campaign.json of every shard of one campaign (test-all
--shard 1/N .. N/N, run on as many machines or CI jobs) and writes the
campaign's own: store/campaigns/<name>/<time>/campaign.json and junit.xml,
the tests in the file's order with every run, seed and outcome, and prints
the table, as one unsharded test-all would have. It refuses shards of
different campaign files, of different splits, a missing or repeated shard,
and a shard run with --only.

Exit status: that of the whole campaign (0, 1, 2 or 255, as test-all's);
254 when the shards cannot be merged.`,
		Example: `  chaos test-all merge shard-1/store/campaigns/release/latest shard-2/store/campaigns/release/latest`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			shards := make([]campaign.ShardRecord, len(args))
			for i, dir := range args {
				if filepath.Base(dir) == campaign.RecordFile {
					dir = filepath.Dir(dir)
				}
				rec, err := campaign.ReadRecord(dir)
				if errors.Is(err, fs.ErrNotExist) {
					return usageErrorf("test-all merge: %s holds no %s: give each shard's campaign directory", dir, campaign.RecordFile)
				}
				if err != nil {
					return usageErrorf("test-all merge: %v", err)
				}
				shards[i] = campaign.ShardRecord{Dir: dir, Record: rec}
			}
			rec, err := campaign.Merge(shards)
			if err != nil {
				return usageErrorf("test-all merge: %v", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "campaign %s: %d tests from %d shards\n", rec.Campaign, len(rec.Tests), len(shards))
			// Named for now, not the shards' start: a shard's directory in
			// the same store has that name.
			return finishCampaign(cmd, store, rec, time.Now())
		},
	}
	cmd.Flags().StringVar(&store, "store", "./store", "where the merged campaign directory is written")
	return cmd
}
