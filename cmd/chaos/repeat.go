package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"chaos/campaign"
	"chaos/checker"
	"chaos/internal/secret"
	"chaos/internal/termsafe"
	"chaos/runreport"
	"chaos/testrun"
)

// plannedTest is one test ready to run: checked options, the flags they
// came from (for the replay command) and the seed of its first run.
type plannedTest struct {
	o     testrun.Options
	flags *pflag.FlagSet
	seed  uint64 // run i uses seed+i
}

// newPlannedTest fixes the first seed of o: its own, or a random one.
func newPlannedTest(o testrun.Options, flags *pflag.FlagSet) plannedTest {
	seed := o.Seed
	if seed == 0 {
		seed = rand.Uint64() >> 1
	}
	return plannedTest{o: o, flags: flags, seed: seed}
}

// runOnce performs run i of p through campaign.Run, as `chaos run --seed
// p.seed+i` would, and reports it; a run that could not reach a verdict is
// Crashed with the reason.
func (p plannedTest) runOnce(ctx context.Context, i int, env testrun.Env) campaign.Run {
	o := p.o
	o.Seed, o.TestCount = p.seed+uint64(i), 1
	started := time.Now()
	res, err := testrun.Run(ctx, o, env)
	run := campaign.Run{Seed: o.Seed, Dir: res.Dir, DurationS: time.Since(started).Seconds(),
		FirstAnomalyS: res.FirstAnomalyS, OpsPerS: res.OpsPerS, Replay: replayCommand(p.flags, o.Seed)}
	if err != nil {
		run.Verdict, run.Summary = campaign.Crashed, err.Error()
		return run
	}
	run.Verdict = verdictName(res.Valid)
	run.Summary = strings.Join(testrun.Anomalies(res.Report), "\n")
	return run
}

// verdictName is a checker verdict as package campaign names it.
func verdictName(v checker.Validity) string {
	switch v {
	case checker.Valid:
		return campaign.Valid
	case checker.Invalid:
		return campaign.Invalid
	}
	return campaign.Unknown
}

// notReplayed are chaos run flags a replay command leaves out: it is one
// run with its own seed.
var notReplayed = []string{"test-count", "keep-going", "seed"}

// replayArgs are the flags set on f, as a chaos run command line would
// give them, in name order, with secret values redacted (secret.Args):
// --password-file FILE stays, --password shows <redacted>, and a password
// from the environment is not on the line.
func replayArgs(f *pflag.FlagSet) []string {
	var args []string
	f.Visit(func(fl *pflag.Flag) {
		if slices.Contains(notReplayed, fl.Name) {
			return
		}
		values := []string{fl.Value.String()}
		if s, ok := fl.Value.(pflag.SliceValue); ok {
			values = s.GetSlice()
		}
		for _, v := range values {
			args = append(args, "--"+fl.Name, v)
		}
	})
	return secret.Args(args)
}

// replayCommand is the chaos run command line that replays one run.
func replayCommand(f *pflag.FlagSet, seed uint64) string {
	args := append([]string{"chaos", "run"}, replayArgs(f)...)
	args = append(args, "--seed", fmt.Sprint(seed))
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]{}~#!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runEnv is the campaign environment of a command: the summary of each
// run to out, live progress to stderr, and report.html by runreport.
func runEnv(cmd *cobra.Command, hard context.Context) testrun.Env {
	stderr := cmd.ErrOrStderr()
	isTerm := false
	if f, ok := stderr.(*os.File); ok {
		isTerm = term.IsTerminal(int(f.Fd()))
	}
	return testrun.Env{Out: cmd.OutOrStdout(), Progress: stderr, ProgressIsTerminal: isTerm, Hard: hard, Version: version,
		Report: runreport.Write}
}

// runRepeated is chaos run --test-count N (N > 1): N runs of one test,
// stopping at the first invalid unless keepGoing, with their statistics
// printed and written to store/campaigns/<name>/<time>/ like a campaign of
// one test.
func runRepeated(cmd *cobra.Command, o testrun.Options, keepGoing bool) error {
	if err := o.Prepare(); err != nil {
		return usageErrorf("run: %v", err)
	}
	count := o.TestCount
	p := newPlannedTest(o, cmd.Flags())
	ctx, hard, stop := interrupts(cmd.Context(), cmd)
	defer stop()
	env := runEnv(cmd, hard)
	test := campaign.Test{Name: o.Name, Expect: campaign.ExpectValid, Count: count}
	runner := campaign.Runner{Out: termsafe.NewWriter(cmd.OutOrStdout()), StopAtInvalid: !keepGoing,
		Run: func(ctx context.Context, _ campaign.Test, i int) campaign.Run { return p.runOnce(ctx, i, env) }}
	started := time.Now()
	results, interrupted := runner.Execute(ctx, []campaign.Test{test})
	rec := campaign.Record{Campaign: o.Name, File: "", Started: started.UTC().Format(time.RFC3339Nano),
		DurationS: time.Since(started).Seconds(), Shard: "1/1", Interrupted: interrupted, Tests: results}
	rec.Exit = campaign.ExitCode(results, interrupted)
	return finishCampaign(cmd, o.Store, rec, started)
}

// finishCampaign writes rec into a new campaign directory of store, prints
// the table and where it went, and returns rec's exit status.
func finishCampaign(cmd *cobra.Command, store string, rec campaign.Record, started time.Time) error {
	out := termsafe.NewWriter(cmd.OutOrStdout())
	fmt.Fprintln(out)
	campaign.PrintTable(out, rec.Tests)
	for _, t := range rec.Tests {
		fmt.Fprintf(out, "%s: %s\n", t.Name, t.StatsLine())
	}
	dir, err := campaign.NewDir(store, rec.Campaign, started)
	if err == nil {
		err = rec.Write(dir)
	}
	if err != nil {
		return setupError(fmt.Errorf("campaign: %w", err))
	}
	fmt.Fprintf(out, "campaign: %s (exit %d)\n", dir, rec.Exit)
	if rec.Exit == exitOK {
		return nil
	}
	return &exitError{code: rec.Exit}
}
