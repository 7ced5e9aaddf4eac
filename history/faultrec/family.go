package faultrec

import "strings"

// ScheduleVersion is the version of nemesis's schedule (see
// nemesis.ScheduleVersion, which says what each version did): test.json
// records it, so that a reader can tell a run whose seed replays as other
// faults here.
const ScheduleVersion = 3

// The names of the families, as --nemesis takes them and as nemesis's
// registry declares them.
const (
	NameKill          = "kill"
	NamePause         = "pause"
	NamePartition     = "partition"
	NameClock         = "clock"
	NamePacket        = "packet"
	NameLease         = "lease"
	NameVoteRestart   = "vote-restart"
	NameFigure8       = "figure8"
	NameElectionDelay = "election-delay"
	NameLeaderCycle   = "leader-cycle"
	NamePowerLoss     = "power-loss"
	NameCorrupt       = "corrupt"
	NameDiskFull      = "disk-full"
	NameEIO           = "eio"
	NameMember        = "member"
)

// The op names that are no "start-<family>" or "stop-<family>": those of
// the first families, and the heal that ends every fault.
const (
	OpKill           = "kill"
	OpStart          = "start"
	OpPause          = "pause"
	OpResume         = "resume"
	OpStartPartition = "start-partition"
	OpStopPartition  = "stop-partition"
	OpClockBump      = "clock-bump"
	OpClockReset     = "clock-reset"
	OpStartPacket    = "start-packet"
	OpStopPacket     = "stop-packet"
	OpHeal           = "heal"
)

// HealColour is the colour of the heals' band in the report.
const HealColour = "#b0bec5"

// Target says what the faults of a family act on.
type Target string

const (
	// TargetProcesses: the nodes' processes (killed, paused); the value
	// names the nodes.
	TargetProcesses Target = "processes"
	// TargetLinks: the links between nodes (cut, degraded).
	TargetLinks Target = "links"
	// TargetClocks: the nodes' clocks.
	TargetClocks Target = "clocks"
	// TargetStorage: the nodes' data directories; the nodes named are down
	// or failing their writes until the stop.
	TargetStorage Target = "storage"
	// TargetRoles: roles the cluster reports (leader, voter), through a
	// sequence of cuts, delays, clock skews and kills.
	TargetRoles Target = "roles"
	// TargetMembership: the cluster's membership.
	TargetMembership Target = "membership"
)

// Family is what a reader needs to know of a fault family: its name, the
// ops that begin and end its faults, what they act on, and its colour.
// The nemesis's registry holds one for each family it declares.
type Family struct {
	// Name is the family's name, as --nemesis takes it.
	Name string
	// StartOp and StopOp are the ops that begin and end a fault of the
	// family; a failed transition is recorded as "start-<Name>" or
	// "stop-<Name>" whatever they are (see Failure).
	StartOp, StopOp string
	// Target is what the family's faults act on.
	Target Target
	// Colour is the fill of the family's band in the report; "" lets the
	// report pick one.
	Colour string
}

// Families is the table of the families, in the order of nemesis's
// registry. It is the one place their op names, targets and colours are
// written.
func Families() []Family {
	seq := func(name string, t Target) Family {
		return Family{Name: name, StartOp: "start-" + name, StopOp: "stop-" + name, Target: t}
	}
	return []Family{
		{Name: NameKill, StartOp: OpKill, StopOp: OpStart, Target: TargetProcesses, Colour: "#ef9a9a"},
		{Name: NamePause, StartOp: OpPause, StopOp: OpResume, Target: TargetProcesses, Colour: "#ce93d8"},
		{Name: NamePartition, StartOp: OpStartPartition, StopOp: OpStopPartition, Target: TargetLinks, Colour: "#90caf9"},
		{Name: NameClock, StartOp: OpClockBump, StopOp: OpClockReset, Target: TargetClocks, Colour: "#ffcc80"},
		{Name: NamePacket, StartOp: OpStartPacket, StopOp: OpStopPacket, Target: TargetLinks, Colour: "#a5d6a7"},
		seq(NameLease, TargetRoles),
		seq(NameVoteRestart, TargetRoles),
		seq(NameFigure8, TargetRoles),
		seq(NameElectionDelay, TargetRoles),
		seq(NameLeaderCycle, TargetRoles),
		seq(NamePowerLoss, TargetStorage),
		seq(NameCorrupt, TargetStorage),
		seq(NameDiskFull, TargetStorage),
		seq(NameEIO, TargetStorage),
		seq(NameMember, TargetMembership),
	}
}

// Lookup is the family called name, and whether the table holds it.
func Lookup(name string) (Family, bool) {
	for _, f := range Families() {
		if f.Name == name {
			return f, true
		}
	}
	return Family{}, false
}

// Phase says whether an op begins or ends a fault.
type Phase int

const (
	// NoPhase: the op neither begins nor ends one fault (a heal, or an op
	// of no family).
	NoPhase Phase = iota
	// Begins: the op begins a fault (or is a failed start).
	Begins
	// Ends: the op ends a fault (or is a failed stop).
	Ends
)

// OpFamily is the family of the nemesis op f and whether f begins or ends
// its faults: the table's StartOp and StopOp, and "start-<Name>" and
// "stop-<Name>", which a failed transition of any family is recorded as.
// ok is false for an op of no family in the table (the heal included).
func OpFamily(f string) (fam Family, phase Phase, ok bool) {
	for _, fam := range Families() {
		switch f {
		case fam.StartOp, "start-" + fam.Name:
			return fam, Begins, true
		case fam.StopOp, "stop-" + fam.Name:
			return fam, Ends, true
		}
	}
	return Family{}, NoPhase, false
}

// StartedFamily is the family a nemesis op f begins, as --nemesis names
// it: a family of the table by its StartOp or "start-<Name>", and any
// other "start-<family>" (a family this table does not know yet); "" when
// f begins none.
func StartedFamily(f string) string {
	if fam, phase, ok := OpFamily(f); ok {
		if phase == Begins {
			return fam.Name
		}
		return ""
	}
	rest, ok := strings.CutPrefix(f, "start-")
	if !ok {
		return ""
	}
	return rest
}
