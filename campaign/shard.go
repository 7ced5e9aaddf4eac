package campaign

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one of N parts of a campaign, for spreading it over CI jobs:
// shard I of N runs the tests whose position in the file (from 0) is I-1
// modulo N, so every test runs in exactly one shard.
type Shard struct {
	Index, Total int // 1 <= Index <= Total
}

// ParseShard reads "I/N". The empty string is the whole campaign (1/1).
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{Index: 1, Total: 1}, nil
	}
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(strings.TrimSpace(i))
	total, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil || total < 1 || index < 1 || index > total {
		return Shard{}, fmt.Errorf("--shard %q: want I/N with 1 <= I <= N, such as 2/4", s)
	}
	return Shard{Index: index, Total: total}, nil
}

// IndexEnv is the variable a Kubernetes Indexed Job sets to each pod's
// index, from 0: "--shard auto/N" takes the shard's index from it.
const IndexEnv = "JOB_COMPLETION_INDEX"

// ParseShardEnv is ParseShard, and "auto/N": shard getenv(IndexEnv)+1 of
// N.
func ParseShardEnv(s string, getenv func(string) string) (Shard, error) {
	total, ok := strings.CutPrefix(s, "auto/")
	if !ok {
		return ParseShard(s)
	}
	v := getenv(IndexEnv)
	if v == "" {
		return Shard{}, fmt.Errorf("--shard %q: %s is not set (a Kubernetes Indexed Job sets it, from 0): give I/N instead", s, IndexEnv)
	}
	index, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || index < 0 {
		return Shard{}, fmt.Errorf("--shard %q: %s=%q: want an index from 0", s, IndexEnv, v)
	}
	sh, err := ParseShard(strconv.Itoa(index+1) + "/" + total)
	if err != nil {
		return Shard{}, fmt.Errorf("--shard %q with %s=%s: want an index below N (%w)", s, IndexEnv, v, err)
	}
	return sh, nil
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Total) }

// Select returns the tests of this shard, in file order, keeping only the
// one named only when only is not empty. Naming a test the file does not
// hold is an error.
func (s Shard) Select(tests []Test, only string) ([]Test, error) {
	var out []Test
	found := only == ""
	for i, t := range tests {
		if only != "" && t.Name != only {
			continue
		}
		found = true
		if i%s.Total == s.Index-1 {
			out = append(out, t)
		}
	}
	if !found {
		names := make([]string, len(tests))
		for i, t := range tests {
			names[i] = t.Name
		}
		return nil, fmt.Errorf("--only %q: no such test; the campaign has %s", only, strings.Join(names, ", "))
	}
	return out, nil
}
