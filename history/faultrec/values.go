package faultrec

import "encoding/json"

// Value is a fault record: the value of one nemesis op. Every type of
// this package that an op carries is one; Decode returns them.
type Value interface{ faultRecord() }

// Process is the value of kill and pause (Start) and of start and resume
// (Stop: Nodes only), and the part power-loss and corrupt share.
type Process struct {
	// Nodes are the nodes the fault acts on.
	Nodes []string `json:"nodes"`
	// Mode is the target kind drawn: one, minority, majority, all, leader...
	Mode string `json:"mode,omitempty"`
	// Fallback says why the target drawn gave way to Mode.
	Fallback string `json:"fallback,omitempty"`
	// Effect is "observed" or "not observed".
	Effect string `json:"effect,omitempty"`
	// Silent are targets that did not answer before the fault; Answering,
	// targets that still answered after it.
	Silent    []string `json:"silent_before,omitempty"`
	Answering []string `json:"answering_after,omitempty"`
	// Reapplied (a restart: start, stop-power-loss) names,
	// by node, the network faults in force that a node restarted in a new
	// network namespace (a container that is the node) got back there:
	// partition, packet, cut.
	Reapplied map[string][]string `json:"reapplied,omitempty"`
}

// Clock is the value of clock-bump and clock-reset (Nodes and Mechanism
// only).
type Clock struct {
	Nodes     []string           `json:"nodes"`
	Mode      string             `json:"mode,omitempty"`
	Mechanism string             `json:"mechanism"`
	Kind      string             `json:"kind,omitempty"`       // bump, strobe or rate
	OffsetsMS map[string]int64   `json:"offsets_ms,omitempty"` // bump: each node's jump
	DeltaMS   int64              `json:"delta_ms,omitempty"`   // strobe: +delta, -delta, ...
	PeriodMS  int64              `json:"period_ms,omitempty"`  // strobe: between two jumps
	Count     int                `json:"count,omitempty"`      // strobe: number of jumps
	Rates     map[string]float64 `json:"rates,omitempty"`      // rate: each node's clock rate
	// Effect (hook only) is "observed" when every node's hook reported the
	// clock the fault asked for; Unchanged lists those that did not.
	Effect    string   `json:"effect,omitempty"`
	Unchanged []string `json:"unchanged,omitempty"`
	// Readers (faketime only) says who reads each node's control file:
	// "libfaketime" or "native".
	Readers map[string]string `json:"readers,omitempty"`
	// Fallback says why the target asked for gave way to one node.
	Fallback string `json:"fallback,omitempty"`
	// Shown (vdso only) is what each node's process read back from its
	// clock's data page once the fault was applied.
	Shown map[string]ClockShown `json:"shown,omitempty"`
}

// ClockShown is what a node process's patched clocks show (the vdso
// mechanism): its pid, its realtime and monotonic clocks' offsets from
// true time and their rate.
type ClockShown struct {
	Pid         int     `json:"pid"`
	RealtimeMS  float64 `json:"realtime_offset_ms"`
	MonotonicMS float64 `json:"monotonic_offset_ms"`
	Rate        float64 `json:"rate"`
	// SystemMS is the clock the system itself showed right after (its
	// clock probe's time less the controller's at the probe's midpoint,
	// to 0.1 ms), where the system shows its clock; absent elsewhere, or
	// when the probe failed.
	SystemMS *float64 `json:"system_offset_ms,omitempty"`
}

// Packet is the value of start-packet and stop-packet (the same), and of
// the links a targeted fault degrades.
type Packet struct {
	// Targets are, by sender, the peers its packets to are degraded.
	Targets  map[string][]string `json:"targets"`
	Behavior PacketBehavior      `json:"behavior"`
	// Mechanism says which mechanism performed each part, by part.
	Mechanism map[string]string `json:"mechanism"`
	// Unavailable lists the parts of Behavior no mechanism could perform.
	Unavailable []string `json:"unavailable,omitempty"`
}

// PacketBehavior is what a packet fault does to each packet of its links.
// Zero fields leave that part out.
type PacketBehavior struct {
	// Loss, Duplicate, Reorder and Corrupt are probabilities per packet
	// (per message, where the hooks perform them), in [0, 1]. A reordered
	// packet overtakes delayed ones, so Reorder needs DelayMS > 0.
	Loss      float64 `json:"loss,omitempty"`
	Duplicate float64 `json:"duplicate,omitempty"`
	Reorder   float64 `json:"reorder,omitempty"`
	Corrupt   float64 `json:"corrupt,omitempty"`
	// DelayMS is added to every packet; JitterMS adds a further uniform
	// random delay in [0, JitterMS). Their sum is at most one minute.
	DelayMS  float64 `json:"delay_ms,omitempty"`
	JitterMS float64 `json:"jitter_ms,omitempty"`
	// RateKbit caps the bandwidth of each degraded sender toward its peers.
	RateKbit int `json:"rate_kbit,omitempty"`
}

// PowerLoss is the value of start-power-loss (stop-power-loss: Nodes
// only).
type PowerLoss struct {
	Process
	// Dropped is, by node, what was not durable and is gone.
	Dropped map[string]DiskStatus `json:"dropped,omitempty"`
}

// DiskStatus is what a node's fault file system held that was not
// durable.
type DiskStatus struct {
	PendingFiles int   `json:"pending_files"`
	UndoBytes    int64 `json:"undo_bytes"`
	// UndoMemoryBytes and UndoSpilledBytes say where the old bytes of
	// UndoBytes were kept: in the file system's memory, up to its bound,
	// and past it in spill files in the backing store.
	UndoMemoryBytes  int64 `json:"undo_memory_bytes,omitempty"`
	UndoSpilledBytes int64 `json:"undo_spilled_bytes,omitempty"`
	// UndoRefused counts the changes the file system refused (ENOSPC or
	// EIO to the system) for want of room to keep their old bytes:
	// errors of chaos's making, not the system's.
	UndoRefused  int64          `json:"undo_refused,omitempty"`
	PendingNames int            `json:"pending_names"`
	Errors       *DiskErrorMode `json:"errors,omitempty"`
}

// DiskErrorMode is an error injection of the fault file system. Until is
// kept as written (an RFC 3339 time).
type DiskErrorMode struct {
	Kind  string          `json:"kind"`
	On    string          `json:"on"`
	Until json.RawMessage `json:"until,omitempty"`
}

// Corrupt is the value of start-corrupt (stop-corrupt: Nodes only).
type Corrupt struct {
	Process
	// Files is, by node, what was damaged.
	Files map[string]CorruptFile `json:"files,omitempty"`
}

// CorruptFile is the damage done to one node's data directory (package
// corrupt's Result).
type CorruptFile struct {
	// File is the file damaged, relative to the data directory.
	File string `json:"file"`
	// Target is the kind of file it is; Wanted the kind asked for, when no
	// file of that kind held data (a random file was damaged instead).
	Target string `json:"target"`
	Wanted string `json:"wanted,omitempty"`
	How    string `json:"how"`
	// Offset is the byte damaged (flip), the first byte zeroed (zero), or
	// the new length (truncate).
	Offset int64 `json:"offset"`
	// Length is the bytes zeroed, or cut off by a truncation.
	Length int64 `json:"length,omitempty"`
	// Bit is the bit flipped (0 the lowest), with a flip.
	Bit int `json:"bit,omitempty"`
	// Size is the file's size before; DataEnd the end of its data (past
	// its last byte that is not zero: a preallocated file's zero tail is
	// no data).
	Size    int64 `json:"size"`
	DataEnd int64 `json:"data_end"`
}

// DiskErrors is the value of disk-full's and eio's ops: the start names
// the kind and the writes failed; the stop, the nodes it restarted.
type DiskErrors struct {
	Nodes     []string `json:"nodes"`
	Kind      string   `json:"kind,omitempty"`
	On        string   `json:"on,omitempty"`
	Restarted []string `json:"restarted,omitempty"`
}

// Failure is the value of a transition that failed, recorded as
// "start-<family>" or "stop-<family>": the error and, when the fault had
// done something before failing, the op it made (Op) and its value.
type Failure struct {
	// CutShort says the step was cut short (at the schedule's deadline,
	// or by its step timeout) rather than failing by itself.
	CutShort bool   `json:"cut_short,omitempty"`
	Error    string `json:"error"`
	Op       string `json:"op,omitempty"`
	// ProbeMisses counts the probes of the nodes' states that missed a
	// node before the fault was refused (see Targeted.ProbeMisses).
	ProbeMisses int `json:"probe_misses,omitempty"`
	// Value is Op's value, as written; Decode(Op, Value) reads it.
	Value json.RawMessage `json:"value,omitempty"`
}

// Heal is the value of a heal: the families the schedule's end healed
// (Faults, with Error when some could not be), or what the setup of a
// run found an earlier run had left, by node (Leftovers).
type Heal struct {
	Error     string              `json:"error,omitempty"`
	Faults    []string            `json:"faults,omitempty"`
	Leftovers map[string][]string `json:"leftovers,omitempty"`
	// UndoRefused is, by node, the changes its fault file system refused
	// over the run for want of room to keep their old bytes (see
	// DiskStatus): chaos's doing, named so that the system is not blamed.
	// Nodes whose file system refused none are absent.
	UndoRefused map[string]int64 `json:"undo_refused,omitempty"`
}

func (Process) faultRecord()    {}
func (Clock) faultRecord()      {}
func (Packet) faultRecord()     {}
func (PowerLoss) faultRecord()  {}
func (Corrupt) faultRecord()    {}
func (DiskErrors) faultRecord() {}
func (Failure) faultRecord()    {}
func (Heal) faultRecord()       {}
func (Partition) faultRecord()  {}
func (Targeted) faultRecord()   {}
func (Member) faultRecord()     {}
