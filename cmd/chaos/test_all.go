package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"chaos/campaign"
	"chaos/internal/termsafe"
	"chaos/testrun"
)

// testAllOptions are chaos test-all's flags.
type testAllOptions struct {
	file, only, shard, store string
	// hosts are defaults for every test; a test's own options win.
	hosts hostFlags
}

func newTestAllCmd() *cobra.Command {
	to := &testAllOptions{}
	cmd := &cobra.Command{
		Use:   "test-all",
		Short: "Run a campaign file's tests: a table, campaign.json and JUnit XML",
		Long: `test-all runs the tests of a campaign file (YAML; docs/FORMATS.md "Campaign
files") one run at a time, in order: each test is chaos run with the file's
defaults and its own options, run count times (seeds seed, seed+1, ...), and is
expected valid or invalid. Every test is checked before the first runs.

It prints a line per run and, at the end, a table: runs, verdicts, expectation,
result, median time to the first anomaly and median throughput. It writes
store/campaigns/<file name>/<time>/campaign.json (every run's verdict, seed,
directory and replay command) and junit.xml (a test case per test; a missed
expectation is a failure naming the anomalies and the seed to replay).

--shard I/N runs every N-th test, from the I-th: N CI jobs with shards 1/N..N/N
run each test exactly once (auto/N: I from $JOB_COMPLETION_INDEX+1, as a
Kubernetes Indexed Job sets it), and test-all merge joins their campaign
directories into the campaign's. Host flags given here apply to every test.

Exit status, by priority: 255 a run crashed or the campaign was interrupted,
1 a test missed its expectation, 2 a run was unknown, 0 every test passed;
254 a bad campaign file or flag, before anything runs.`,
		Example: `  chaos test-all --campaign campaigns/smoke.yaml
  chaos test-all --campaign campaigns/release.yaml --shard 2/4 --nodes-file hosts.txt
  chaos test-all --campaign campaigns/release.yaml --only stale-read`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runTestAll(cmd, to) },
	}
	cmd.AddCommand(newTestAllMergeCmd())
	f := cmd.Flags()
	f.StringVar(&to.file, "campaign", "", "campaign file (YAML) to run (required)")
	f.StringVar(&to.only, "only", "", "run only the test of this name")
	f.StringVar(&to.shard, "shard", "", "I/N: run this shard of the campaign's tests (default all); auto/N takes I from $"+campaign.IndexEnv+"+1 (a Kubernetes Indexed Job's)")
	f.StringVar(&to.store, "store", "./store", "where runs and the campaign directory are written")
	to.hosts.register(f)
	return cmd
}

func runTestAll(cmd *cobra.Command, to *testAllOptions) error {
	warnPasswordFlag(cmd)
	if _, err := to.hosts.sshPassword(); err != nil {
		return err
	}
	if to.file == "" {
		return usageErrorf("test-all: --campaign is required: give a campaign file such as campaigns/smoke.yaml")
	}
	shard, err := campaign.ParseShardEnv(to.shard, os.Getenv)
	if err != nil {
		return usageErrorf("test-all: %v", err)
	}
	file, err := campaign.ReadFile(to.file)
	if err != nil {
		return usageErrorf("test-all: %v", err)
	}
	tests, err := shard.Select(file.Tests, to.only)
	if err != nil {
		return usageErrorf("test-all: %v", err)
	}
	plans := map[string]plannedTest{}
	for _, t := range tests {
		p, err := to.plan(cmd.Flags(), cmd.ErrOrStderr(), file.Path, t)
		if err != nil {
			return usageErrorf("test-all: %v", err)
		}
		plans[t.Name] = p
	}
	name := strings.TrimSuffix(filepath.Base(file.Path), filepath.Ext(file.Path))
	fmt.Fprintf(cmd.OutOrStdout(), "campaign %s: %d of %d tests (shard %s)\n", name, len(tests), len(file.Tests), shard)

	ctx, hard, stop := interrupts(cmd.Context(), cmd)
	defer stop()
	env := runEnv(cmd, hard)
	env.Out = io.Discard // each run is a line; its summary goes to campaign.json
	runner := campaign.Runner{Out: termsafe.NewWriter(cmd.OutOrStdout()),
		Run: func(ctx context.Context, t campaign.Test, i int) campaign.Run {
			return plans[t.Name].runOnce(ctx, i, env)
		}}
	started := time.Now()
	results, interrupted := runner.Execute(ctx, tests)
	rec := campaign.Record{Campaign: name, File: file.Path, Started: started.UTC().Format(time.RFC3339Nano),
		DurationS: time.Since(started).Seconds(), Shard: shard.String(), Only: to.only, Interrupted: interrupted, Tests: results,
		FileSHA256: file.SHA256, FileTests: file.Names()}
	rec.Exit = campaign.ExitCode(results, interrupted)
	return finishCampaign(cmd, to.store, rec, started)
}

// plan turns test t of the campaign file at path into checked chaos run
// options, through chaos run's own flags: test-all's host flags first,
// then the file's options in order, then the store and, unless the file
// names one, the test's name. SSH warnings go to stderr. Errors name the
// file and line.
func (to *testAllOptions) plan(own *pflag.FlagSet, stderr io.Writer, path string, t campaign.Test) (plannedTest, error) {
	ro := &runOptions{}
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	ro.register(f)
	var err error
	own.Visit(func(fl *pflag.Flag) {
		if err == nil && fl.Name != "store" && f.Lookup(fl.Name) != nil {
			err = f.Set(fl.Name, fl.Value.String())
		}
	})
	if err != nil {
		return plannedTest{}, err
	}
	for _, opt := range t.Options {
		if err := setOption(f, opt); err != nil {
			return plannedTest{}, &campaign.Error{Path: path, Line: opt.Line, Msg: err.Error()}
		}
	}
	if err := f.Set("store", to.store); err != nil {
		return plannedTest{}, err
	}
	if !f.Changed("name") {
		if err := f.Set("name", t.Name); err != nil {
			return plannedTest{}, err
		}
	}
	o, err := ro.options(stderr)
	if err == nil {
		o.Argv = append([]string{"chaos", "run"}, replayArgs(f)...)
		err = o.Prepare()
	}
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), testrun.ErrUsage.Error()+": ")
		return plannedTest{}, &campaign.Error{Path: path, Line: t.Line, Msg: fmt.Sprintf("test %q: %s; fix its options", t.Name, msg)}
	}
	return newPlannedTest(o, f), nil
}

// setOption applies one campaign file option to chaos run's flags: each
// value of a repeatable flag, or the values joined by commas.
func setOption(f *pflag.FlagSet, opt campaign.Option) error {
	fl := f.Lookup(opt.Name)
	if fl == nil {
		return fmt.Errorf("unknown option %q; the options are chaos run's flags without their dashes (chaos run --help)", opt.Name)
	}
	values := []string{strings.Join(opt.Values, ",")}
	if _, ok := fl.Value.(pflag.SliceValue); ok {
		values = opt.Values
	}
	for _, v := range values {
		if err := f.Set(opt.Name, v); err != nil {
			return fmt.Errorf("option %s %q: %v; write it as on the chaos run command line", opt.Name, v, err)
		}
	}
	return nil
}
