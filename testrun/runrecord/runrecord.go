// Package runrecord holds a run's records as its run directory keeps them
// (docs/FORMATS.md): test.json (TestRecord: the options a run ran with,
// what it ran on, how to replay it) and results.json (Results: the
// summary, the merged verdict and every check's output), and reads them
// back. It is a leaf of the product: the readers of a store (runreport,
// storeweb, chaos heal) use it without importing what runs a test.
package runrecord

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"chaos/checker"
	"chaos/history/faultrec"
	"chaos/internal/inputfile"
	"chaos/internal/secret"
)

// TestRecord is a run's test.json (docs/FORMATS.md): the options it ran
// with, what it ran on, and how to replay it.
type TestRecord struct {
	Name string `json:"name"`
	Seed uint64 `json:"seed"`
	// Argv is the command line with every secret value redacted
	// (secret.Args): as written, and as read back, also from a test.json
	// written before chaos redacted it.
	Argv            []string `json:"argv"`
	Version         string   `json:"version"`
	Started         string   `json:"started"` // RFC 3339, UTC
	Nodes           []string `json:"nodes"`   // as given; empty in local mode
	Local           bool     `json:"local"`
	DB              string   `json:"db"`
	Workload        string   `json:"workload"`
	Keys            int      `json:"keys"`
	ReadConsistency string   `json:"read_consistency"`
	// NodeProcess is "container" when every host is a container that is
	// the node (--node-process container); absent otherwise.
	NodeProcess      string   `json:"node_process,omitempty"`
	Concurrency      string   `json:"concurrency"`
	Rate             float64  `json:"rate"`
	TimeLimitS       float64  `json:"time_limit_s"`
	Nemesis          []string `json:"nemesis"`
	NemesisIntervalS float64  `json:"nemesis_interval_s"`
	// ScheduleVersion is faultrec.ScheduleVersion of the chaos that ran
	// it: how its seed became faults. Absent (0) in runs made by version
	// 1, before it was recorded.
	ScheduleVersion int `json:"schedule_version,omitempty"`
	// StorageFaults is true when the data directories were served through
	// the fault file system (--storage-faults, or a storage family named).
	StorageFaults bool `json:"storage_faults,omitempty"`
	// StorageNames is --storage-names when storage faults are on.
	StorageNames string `json:"storage_names,omitempty"`
	// CorruptFiles and CorruptHows are --corrupt-file and --corrupt-how.
	CorruptFiles    []string `json:"corrupt_files,omitempty"`
	CorruptHows     []string `json:"corrupt_hows,omitempty"`
	Bugs            []string `json:"bugs"`
	CheckerTimeoutS float64  `json:"checker_timeout_s"`
	Checker         string   `json:"checker,omitempty"`
	LeaveDBRunning  bool     `json:"leave_db_running"`
	RecoveryS       float64  `json:"recovery_s"`
	// RecoveryAdvisory says recovery_s is a default the system did not
	// state: the availability check reports a later recovery but does
	// not fail the run for it.
	RecoveryAdvisory bool `json:"recovery_advisory,omitempty"`
	// SSH is how the hosts were reached, without any secret; nil in
	// local mode. `chaos heal` reaches them again with it.
	SSH *SSHRecord `json:"ssh,omitempty"`
}

// ReplayNote says, when the run was made by another schedule version
// than this chaos's (faultrec.ScheduleVersion), that its seed replays as
// other faults here; "" when it replays as it ran.
func (t TestRecord) ReplayNote() string {
	made := max(t.ScheduleVersion, 1) // version 1 did not record itself
	if made == faultrec.ScheduleVersion {
		return ""
	}
	return fmt.Sprintf("This run was made by nemesis schedule version %d (chaos %s); this chaos's schedule is version %d, "+
		"so --seed %d starts other faults here: replay it with the chaos that made it.", made, t.Version, faultrec.ScheduleVersion, t.Seed)
}

// SSHRecord is the SSH configuration of a run as test.json keeps it: no
// password, and files as absolute paths, so that a command started
// elsewhere finds them.
type SSHRecord struct {
	User string `json:"user"`
	Port int    `json:"port"`
	// PrivateKeys are the key files given; empty for the defaults
	// (~/.ssh/id_ed25519 and id_rsa).
	PrivateKeys []string `json:"private_keys,omitempty"`
	// KnownHosts is the known_hosts file given; "" for ~/.ssh/known_hosts.
	KnownHosts            string `json:"known_hosts,omitempty"`
	StrictHostKeyChecking bool   `json:"strict_host_key_checking"`
}

// Recovery is the recovery period the run had.
func (t TestRecord) Recovery() time.Duration { return seconds(t.RecoveryS) }

// maxRecordBytes bounds test.json and results.json when they are read:
// a run writes a few KiB into test.json and rarely more than a few MiB
// into results.json (the details of every check).
const maxRecordBytes = 256 << 20

// ReadTestRecord reads the test.json of the run directory dir, its argv
// redacted.
func ReadTestRecord(dir string) (TestRecord, error) {
	var t TestRecord
	b, err := inputfile.ReadFile(filepath.Join(dir, "test.json"), maxRecordBytes)
	if err != nil {
		return t, err
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("%s: %w", filepath.Join(dir, "test.json"), err)
	}
	if t.Argv != nil {
		t.Argv = secret.Args(t.Argv)
	}
	return t, nil
}

// RunSummary is what a run writes into results.json besides the checks'
// verdicts (docs/FORMATS.md).
type RunSummary struct {
	Name    string `json:"name"`
	Seed    uint64 `json:"seed"`
	Started string `json:"started"` // RFC 3339, UTC
	// LoadStarted is the wall time of the history's time 0 (RFC 3339,
	// UTC), which ties the history to the nodes' event logs; absent in
	// runs from before it was recorded.
	LoadStarted string  `json:"load_started,omitempty"`
	DurationS   float64 `json:"duration_s"`
	Interrupted bool    `json:"interrupted"`
	// FirstAnomalyS is when the first anomaly happened, in seconds from the
	// start of the load; absent when every check is valid or none can say.
	FirstAnomalyS *float64 `json:"first_anomaly_s,omitempty"`
	// OpsPerS is the operations that completed ok per second of load.
	OpsPerS float64        `json:"ops_per_s"`
	Nemesis NemesisSummary `json:"nemesis"`
	// Leaders are the changes of leader seen during the load, sampled once
	// a second; empty for a system that cannot say who leads.
	Leaders []LeaderChange `json:"leaders"`
	// Clients is there when the clients are client commands.
	Clients *ClientsSummary `json:"clients,omitempty"`
	// Hosts says how each node's host was reached, by node name; absent in
	// local mode and in runs from before it was recorded.
	Hosts map[string]HostAccess `json:"hosts,omitempty"`
}

// HostAccess is how chaos reached one node's host (results.json's
// "hosts").
type HostAccess struct {
	// Via is how commands ran there: "ssh", "docker-exec" (docker exec,
	// through the Engine) or "docker-nsenter" (nsenter from the Docker host
	// into the container's namespaces and cgroups).
	Via string `json:"via"`
	// Net, when set, is how the network faults' commands (iptables, tc)
	// reached the host's network when not by Via: "nsenter", this
	// machine's tools in the container's network namespace alone; or
	// "out-of-reach", not at all (the Engine is on another machine).
	Net string `json:"net,omitempty"`
}

// NemesisSummary is results.json's record of the faults: every transition
// with its targets and the mechanism it used (as the history has it), what
// became of the faults (Counts), and the families this environment could
// not perform, with why.
type NemesisSummary struct {
	Transitions []Transition      `json:"transitions"`
	Counts      faultrec.Tally    `json:"counts"`
	Unavailable map[string]string `json:"unavailable"`
}

// Transition is one fault transition of NemesisSummary.
type Transition struct {
	TimeS float64         `json:"time_s"`
	F     string          `json:"f"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Results is a run's results.json as a whole: the summary, the merged
// verdict, the op counts and every check's output.
type Results struct {
	RunSummary
	Valid  checker.Validity           `json:"valid"`
	Ops    checker.Counts             `json:"ops"`
	Checks map[string]json.RawMessage `json:"checks"`
}

// ReadResults reads the results.json of the run directory dir.
func ReadResults(dir string) (Results, error) {
	var r Results
	path := filepath.Join(dir, "results.json")
	b, err := inputfile.ReadFile(path, maxRecordBytes)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// seconds turns a float number of seconds into a Duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// LeaderChange is one entry of results.json's "leaders" (docs/FORMATS.md):
// from TimeS (seconds since the load began, the history's clock) the
// leader the system reported was Leader, "none" when no node reported one.
type LeaderChange struct {
	TimeS  float64 `json:"time_s"`
	Leader string  `json:"leader"`
}

// ClientsSummary is results.json's "clients": how the clients of a
// described system's client command fared (docs/FORMATS.md).
type ClientsSummary struct {
	// Restarts counts client processes that exited, hung past the request
	// timeout or printed an invalid answer, and were replaced.
	Restarts int `json:"restarts"`
}
