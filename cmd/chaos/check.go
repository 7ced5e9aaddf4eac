package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"chaos/checker"
	"chaos/history"
	"chaos/internal/inputfile"
	"chaos/internal/termsafe"
	"chaos/runreport"
	"chaos/testrun"
)

// checkOptions are the flags of `chaos check`.
type checkOptions struct {
	timeout   time.Duration
	workload  string
	algorithm string
	model     string
	export    string
}

// checkerFlagUsage is the help of --checker, for run and check.
const checkerFlagUsage = "linearizability algorithm: auto (a key whose written values are unique is decided by the order of its writes, " +
	"in O(n log n); other keys are searched) or search (porcupine's search for every key, within --checker-timeout)"

func newCheckCmd() *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check PATH",
		Short: "Re-check a stored run directory or a history.jsonl, offline",
		Long: `check runs every checker again on a recorded history: PATH is a run
directory holding history.jsonl, or a history.jsonl itself. It writes
results.json beside the history (keeping the fields and checks of a run's
results.json it does not recompute), for keys that are not linearizable,
porcupine visualizations into linearizable/, and, when the history is named
history.jsonl, report.html.

Exit status: 0 valid, 1 invalid, 2 unknown, 254 bad input, 255 results.json, a
visualization or report.html could not be written.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd, args[0], o)
		},
	}
	cmd.Flags().DurationVar(&o.timeout, "checker-timeout", 60*time.Second,
		"bound on the linearizability search; keys it does not decide are unknown (0: no bound)")
	cmd.Flags().StringVar(&o.workload, "workload", "",
		"register, set or list-append (default: detect from the ops' f values)")
	cmd.Flags().StringVar(&o.export, "export", "",
		"elle: also write the history's transactions as Jepsen's EDN (history.edn beside it), to cross-check with Elle")
	cmd.Flags().StringVar(&o.model, "consistency-model", checker.DefaultConsistencyModel,
		"what the list-append check holds the history to: "+strings.Join(checker.ConsistencyModels(), ", "))
	cmd.Flags().StringVar(&o.algorithm, "checker", checker.AlgorithmAuto, checkerFlagUsage)
	return cmd
}

func runCheck(cmd *cobra.Command, path string, o checkOptions) error {
	if o.timeout < 0 {
		return usageErrorf("--checker-timeout %v is negative: give a duration such as 60s, or 0 for no bound", o.timeout)
	}
	if o.workload != "" && o.workload != checker.WorkloadRegister && o.workload != checker.WorkloadSet && o.workload != checker.WorkloadListAppend {
		return usageErrorf("--workload %q: want %s, %s or %s, or leave it out to detect", o.workload,
			checker.WorkloadRegister, checker.WorkloadSet, checker.WorkloadListAppend)
	}
	if o.export != "" && o.export != "elle" {
		return usageErrorf("--export %q: want elle", o.export)
	}
	if !slices.Contains(checker.ConsistencyModels(), o.model) {
		return usageErrorf("--consistency-model %q: want one of %s", o.model, strings.Join(checker.ConsistencyModels(), ", "))
	}
	if !checker.KnownAlgorithm(o.algorithm) {
		return usageErrorf("--checker %q: want %s or %s", o.algorithm, checker.AlgorithmAuto, checker.AlgorithmSearch)
	}
	historyPath, err := locateHistory(path)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	dir := filepath.Dir(historyPath)
	opts := testrun.CheckOptions{Workload: o.workload, CheckerTimeout: o.timeout, Checker: o.algorithm, ConsistencyModel: o.model}
	var digest *runreport.Digest // what report.html draws, gathered as the check reads the history
	if filepath.Base(historyPath) == "history.jsonl" {
		digest = &runreport.Digest{}
		opts.Observe = digest.Add
	}
	var export *ednExport
	if o.export == "elle" {
		if export, err = newEDNExport(historyPath); err != nil {
			return setupError(err)
		}
		defer export.abandon()
		opts.Observe = export.observe(opts.Observe)
	}
	report, warnings, err := testrun.CheckFile(ctx, historyPath, opts)
	for _, w := range warnings {
		fmt.Fprintf(termsafe.NewWriter(cmd.ErrOrStderr()), "chaos: warning: %s:%d: %s\n", historyPath, w.Line, w.Msg)
	}
	if err != nil {
		return checkFailure(historyPath, err)
	}
	resultsPath := filepath.Join(dir, "results.json")
	valid, err := checker.WriteResults(resultsPath, report)
	if err != nil {
		return checkFailure(resultsPath, err)
	}
	printReport(termsafe.NewWriter(cmd.OutOrStdout()), report, valid, resultsPath)
	if export != nil {
		if err := export.finish(); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "elle:    %s\n", export.path)
	}
	if digest != nil {
		if err := runreport.WriteDigested(dir, digest); err != nil {
			return setupError(err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "report:  %s\n", filepath.Join(dir, runreport.ReportFile))
	}
	switch valid {
	case checker.Valid:
		return nil
	case checker.Invalid:
		return &exitError{code: exitInvalid}
	default:
		return &exitError{code: exitUnknown}
	}
}

// locateHistory returns the history.jsonl that path names: path itself, or
// the history.jsonl of the run directory path.
func locateHistory(path string) (string, error) {
	st, err := os.Stat(path)
	if err == nil && st.IsDir() {
		path = filepath.Join(path, "history.jsonl")
		st, err = os.Stat(path)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", usageErrorf("%s does not exist: give a run directory holding history.jsonl, or a history.jsonl", path)
	case err != nil:
		return "", usageErrorf("%v", err)
	case st.IsDir():
		return "", usageErrorf("%s is a directory, want a history.jsonl file", path)
	}
	return path, nil
}

// checkFailure classifies an error of checking the history at path: a
// history that cannot be read or parsed, or input the checkers cannot use,
// is bad input (254), anything else (a file that cannot be written) a
// setup failure (255).
func checkFailure(path string, err error) error {
	var pe *history.ParseError
	switch {
	case errors.As(err, &pe) && pe.Line > 0:
		return usageErrorf("%s:%d: %v", path, pe.Line, pe.Err)
	case errors.As(err, &pe), errors.Is(err, checker.ErrMalformed):
		return usageErrorf("%s: %v", path, err)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission),
		errors.Is(err, inputfile.ErrNotRegular), errors.Is(err, inputfile.ErrTooLarge):
		return usageErrorf("%v", err)
	}
	return setupError(err)
}

// printReport writes a verdict per check, what each found, and the overall
// verdict. The findings carry keys, values and errors from the history: w
// must escape them (package termsafe).
func printReport(w io.Writer, r checker.Report, valid checker.Validity, resultsPath string) {
	names := make([]string, 0, len(r.Checks))
	for name := range r.Checks {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "ops: %d invoked, %d ok, %d fail, %d info\n", r.Ops.Invoke, r.Ops.OK, r.Ops.Fail, r.Ops.Info)
	for _, name := range names {
		res := r.Checks[name]
		fmt.Fprintf(w, "%s: %v\n", name, res.Valid)
		for _, line := range checker.Findings(res.Details) {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	fmt.Fprintf(w, "valid: %v (%s)\n", valid, resultsPath)
}
