package campaign

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// shardRecord is shard I/N of a campaign of tests a..e, holding the tests
// of that shard, each with one valid run of seed 10+position.
func shardRecord(shard string, sha string) ShardRecord {
	names := []string{"a", "b", "c", "d", "e"}
	sh, _ := ParseShard(shard)
	rec := Record{Campaign: "c", File: "c.yaml", Shard: shard, Started: "2026-11-28T06:0" + shard[:1] + ":00Z",
		DurationS: float64(sh.Index), FileSHA256: sha, FileTests: names}
	for i, n := range names {
		if i%sh.Total == sh.Index-1 {
			runs := []Run{{Seed: uint64(10 + i), Verdict: Valid}}
			rec.Tests = append(rec.Tests, TestResult{Name: n, Runs: runs, Stats: Summarize(runs), Outcome: Pass})
		}
	}
	return ShardRecord{Dir: "shard" + shard[:1], Record: rec}
}

func TestMergeJoinsShardsInTheFilesOrder(t *testing.T) {
	rec, err := Merge([]ShardRecord{shardRecord("3/3", "x"), shardRecord("1/3", "x"), shardRecord("2/3", "x")})
	require.NoError(t, err)
	var names []string
	var seeds []uint64
	for _, tr := range rec.Tests {
		names = append(names, tr.Name)
		seeds = append(seeds, tr.Runs[0].Seed)
	}
	require.Equal(t, []string{"a", "b", "c", "d", "e"}, names)
	require.Equal(t, []uint64{10, 11, 12, 13, 14}, seeds)
	require.Equal(t, "1/1", rec.Shard)
	require.Equal(t, []string{"shard1", "shard2", "shard3"}, rec.MergedFrom)
	require.Equal(t, "2026-11-28T06:01:00Z", rec.Started, "the earliest shard's start")
	require.Equal(t, 3.0, rec.DurationS, "the longest shard's duration")
	require.Zero(t, rec.Exit)
}

func TestMergeRefusals(t *testing.T) {
	only := shardRecord("2/2", "x")
	only.Record.Only = "b"
	old := shardRecord("2/2", "")
	cases := []struct {
		name   string
		shards []ShardRecord
		want   string
	}{
		{"none", nil, "no shard to merge"},
		{"missing", []ShardRecord{shardRecord("1/3", "x"), shardRecord("3/3", "x")}, "shard 2/3 is missing"},
		{"twice", []ShardRecord{shardRecord("1/2", "x"), shardRecord("1/2", "x"), shardRecord("2/2", "x")}, "shard 1/2 given twice"},
		{"other campaign", []ShardRecord{shardRecord("1/2", "x"), shardRecord("2/2", "y")}, "shards of different campaign files"},
		{"other split", []ShardRecord{shardRecord("1/2", "x"), shardRecord("2/3", "x")}, "merge shards of one split"},
		{"only", []ShardRecord{shardRecord("1/2", "x"), only}, "ran only test b (--only)"},
		{"old record", []ShardRecord{shardRecord("1/2", "x"), old}, "written before merging existed"},
	}
	for _, c := range cases {
		_, err := Merge(c.shards)
		require.ErrorContains(t, err, c.want, c.name)
	}
}

func TestParseShardEnvTakesTheIndexedJobsIndex(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == IndexEnv {
				return v
			}
			return ""
		}
	}
	sh, err := ParseShardEnv("auto/3", env("0"))
	require.NoError(t, err)
	require.Equal(t, Shard{Index: 1, Total: 3}, sh)
	sh, err = ParseShardEnv("auto/3", env("2"))
	require.NoError(t, err)
	require.Equal(t, Shard{Index: 3, Total: 3}, sh)
	sh, err = ParseShardEnv("2/4", env("0"))
	require.NoError(t, err)
	require.Equal(t, Shard{Index: 2, Total: 4}, sh, "I/N ignores the variable")
	_, err = ParseShardEnv("auto/3", env(""))
	require.ErrorContains(t, err, "JOB_COMPLETION_INDEX is not set")
	_, err = ParseShardEnv("auto/3", env("3"))
	require.ErrorContains(t, err, "want an index below N")
	_, err = ParseShardEnv("auto/3", env("-1"))
	require.ErrorContains(t, err, "want an index from 0")
}
