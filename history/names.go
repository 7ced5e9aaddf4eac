package history

// The operation names of history.jsonl: an Op's F (docs/FORMATS.md,
// "Operations" and "Nemesis operations"). Op.F is a plain string because a
// history may hold any name; these are the ones chaos writes and checks.
const (
	// The register workload: read (also the set workload's final read),
	// write and cas.
	FRead  = "read"
	FWrite = "write"
	FCAS   = "cas"
	// The set workload: add (and a final read).
	FAdd = "add"
	// The list-append workload: a transaction of appends and reads.
	FTxn = "txn"
)

// The nemesis's operation names. Faults start and stop in pairs: kill and
// start, pause and resume, start-partition and stop-partition, clock-bump
// and clock-reset, start-packet and stop-packet. heal is the removal of
// every fault at the end of a run.
const (
	FKill           = "kill"
	FStart          = "start"
	FPause          = "pause"
	FResume         = "resume"
	FStartPartition = "start-partition"
	FStopPartition  = "stop-partition"
	FClockBump      = "clock-bump"
	FClockReset     = "clock-reset"
	FStartPacket    = "start-packet"
	FStopPacket     = "stop-packet"
	FHeal           = "heal"
)
