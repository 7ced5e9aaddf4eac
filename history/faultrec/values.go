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
type PacketBehavior struct {
	Loss      float64 `json:"loss,omitempty"`
	Duplicate float64 `json:"duplicate,omitempty"`
	Reorder   float64 `json:"reorder,omitempty"`
	Corrupt   float64 `json:"corrupt,omitempty"`
	DelayMS   float64 `json:"delay_ms,omitempty"`
	JitterMS  float64 `json:"jitter_ms,omitempty"`
	RateKbit  int     `json:"rate_kbit,omitempty"`
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
	PendingFiles int            `json:"pending_files"`
	UndoBytes    int64          `json:"undo_bytes"`
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

// CorruptFile is the damage done to one node's data directory.
type CorruptFile struct {
	File    string `json:"file"`
	Target  string `json:"target"`
	Wanted  string `json:"wanted,omitempty"`
	How     string `json:"how"`
	Offset  int64  `json:"offset"`
	Length  int64  `json:"length,omitempty"`
	Bit     int    `json:"bit,omitempty"`
	Size    int64  `json:"size"`
	DataEnd int64  `json:"data_end"`
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
	Error string `json:"error"`
	Op    string `json:"op,omitempty"`
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
