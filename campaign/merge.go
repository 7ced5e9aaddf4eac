package campaign

import (
	"fmt"
	"slices"
	"time"
)

// ShardRecord is a shard's record and the directory it was read from, for
// Merge.
type ShardRecord struct {
	Dir    string
	Record Record
}

// Merge joins the records of every shard of one campaign (test-all --shard
// I/N, I = 1..N) into the record of the whole campaign, as one unsharded
// run would have written it: the tests in the file's order with their
// runs, seeds and outcomes, the earliest start, the longest shard's
// duration, interrupted if any shard was, and the exit code over all
// tests. It refuses shards of different campaign files (by their hash),
// of different shard counts, a shard given twice or missing, a shard run
// with --only, and records from before merging existed.
func Merge(shards []ShardRecord) (Record, error) {
	if len(shards) == 0 {
		return Record{}, fmt.Errorf("no shard to merge: give each shard's campaign directory")
	}
	first := shards[0].Record
	total, err := checkShards(shards)
	if err != nil {
		return Record{}, err
	}
	byIndex := make([]ShardRecord, total)
	for _, s := range shards {
		sh, _ := ParseShard(s.Record.Shard)
		byIndex[sh.Index-1] = s
	}
	merged := Record{Campaign: first.Campaign, File: first.File, Shard: "1/1", FileSHA256: first.FileSHA256,
		FileTests: first.FileTests}
	tests := map[string]TestResult{}
	var started time.Time
	for _, s := range byIndex {
		rec := s.Record
		merged.MergedFrom = append(merged.MergedFrom, s.Dir)
		merged.Interrupted = merged.Interrupted || rec.Interrupted
		merged.DurationS = max(merged.DurationS, rec.DurationS)
		if t, err := time.Parse(time.RFC3339Nano, rec.Started); err == nil && (started.IsZero() || t.Before(started)) {
			started, merged.Started = t, rec.Started
		}
		for _, t := range rec.Tests {
			tests[t.Name] = t
		}
	}
	for _, name := range first.FileTests {
		t, ok := tests[name]
		if !ok && !merged.Interrupted {
			return Record{}, fmt.Errorf("test %s is in no shard's record: was a shard cut short?", name)
		}
		if ok {
			merged.Tests = append(merged.Tests, t)
		}
	}
	merged.Exit = ExitCode(merged.Tests, merged.Interrupted)
	return merged, nil
}

// checkShards checks that shards are every shard of one campaign, each
// once, and returns their count.
func checkShards(shards []ShardRecord) (int, error) {
	first := shards[0]
	total := 0
	seen := map[int]string{}
	for _, s := range shards {
		rec := s.Record
		switch {
		case rec.FileSHA256 == "" || len(rec.FileTests) == 0:
			return 0, fmt.Errorf("%s: the record does not say which campaign file it ran (written before merging existed): run the shard again", s.Dir)
		case rec.FileSHA256 != first.Record.FileSHA256 || !slices.Equal(rec.FileTests, first.Record.FileTests):
			return 0, fmt.Errorf("%s and %s are shards of different campaign files (%s, %s): merge the shards of one campaign", first.Dir, s.Dir, first.Record.File, rec.File)
		case rec.Only != "":
			return 0, fmt.Errorf("%s: ran only test %s (--only): a merge needs whole shards", s.Dir, rec.Only)
		}
		sh, err := ParseShard(rec.Shard)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", s.Dir, err)
		}
		if total == 0 {
			total = sh.Total
		}
		if sh.Total != total {
			return 0, fmt.Errorf("%s is shard %s and %s shard %s: merge shards of one split", first.Dir, first.Record.Shard, s.Dir, rec.Shard)
		}
		if dir, ok := seen[sh.Index]; ok {
			return 0, fmt.Errorf("shard %s given twice: %s and %s", sh, dir, s.Dir)
		}
		seen[sh.Index] = s.Dir
	}
	for i := 1; i <= total; i++ {
		if _, ok := seen[i]; !ok {
			return 0, fmt.Errorf("shard %d/%d is missing: give every shard's campaign directory", i, total)
		}
	}
	return total, nil
}
