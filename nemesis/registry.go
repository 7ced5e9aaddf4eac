package nemesis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"chaos/faultfs"
	"chaos/history/faultrec"
)

// Family describes one fault family of the registry.
type Family struct {
	// Family is what readers of a history know of the family (its Name, as
	// --nemesis takes it, its op names, its target and its colour): the
	// fault records' table (faultrec.Families), which this registry
	// declares each family with (see record).
	faultrec.Family
	// Doc says in a few words what the family does and how, for --help.
	Doc string
	// New makes a fault of the family with its defaults.
	New func() Fault
	// Weight is how often the schedule picks the family, against the
	// others' weights (see Schedule.Weights): the targeted families,
	// which each provoke one situation that random faults rarely make,
	// weigh more than the random ones, and alike (4), but leader-cycle
	// (2), whose cut and kill the random families also make. The weights
	// pick between the groups; sequences hold the stage for at most half
	// the time (SequenceShare), so a minute's run on chaos-node holds
	// every targeted family's turn, and on etcd one or two sequences.
	Weight int
	// Targeted says the family aims at roles the cluster reports and runs
	// a sequence (see targeted_sequence.go); its heal is the random
	// families' (see healedByBase).
	Targeted bool
	// OptIn keeps the family out of the default mix: it runs only when
	// --nemesis names it.
	OptIn bool
	// Storage says the family acts on the nodes' data directories through
	// the fault file system (see storage.go): naming it in --nemesis
	// serves them so, and in the default mix it runs only when they are
	// (--storage-faults).
	Storage bool
	// healRank orders the families for healing (see HealFaults).
	healRank int
	// healers are the faults whose Heal removes all the family can leave;
	// sharedClock says the hosts share this machine's clock.
	healers func(sharedClock bool) []Fault
}

// Families returns the registry: every fault family chaos can run, in the
// order the schedule and --help list them. It is the one list of
// families; a name not in it is no family.
func Families() []Family {
	return []Family{
		{Family: record(faultrec.NameKill), Doc: "SIGKILL one, a minority, a majority, all, or the leader; restart later",
			New: func() Fault { return &Kill{} }, Weight: 1, healRank: 5},
		{Family: record(faultrec.NamePause), Doc: "SIGSTOP the same targets; SIGCONT later",
			New: func() Fault { return &Pause{} }, Weight: 1, healRank: 0},
		{Family: record(faultrec.NamePartition), Doc: "cut nodes off from each other (iptables, or chaos-node's drop list)",
			New: func() Fault { return &Partition{} }, Weight: 1, healRank: 1},
		{Family: record(faultrec.NameClock), Doc: "bump, strobe or skew nodes' clocks (chaos-node's clock hook, or a fake clock: libfaketime)",
			New: func() Fault { return &Clock{} }, Weight: 1, healRank: 3, healers: clockHealers},
		{Family: record(faultrec.NamePacket), Doc: "loss, delay, reordering and duplication on links (tc netem, iptables, hooks or the fault proxy)",
			New: func() Fault { return &Packet{} }, Weight: 1, healRank: 2},
		{Family: record(LeaseFamily), Doc: "slow the leader's clock, then cut the leader off (leader leases; clock hook or fake clock)",
			New: func() Fault { return &Lease{} }, Weight: 4, healRank: 3, Targeted: true, healers: healedByBase},
		{Family: record(VoteRestartFamily), Doc: "crash a node right after its vote, restart it, let the old leader ask again (needs node states)",
			New: func() Fault { return &VoteRestart{} }, Weight: 4, healRank: 3, Targeted: true, healers: healedByBase},
		{Family: record(Figure8Family), Doc: "Raft's Figure 8: old leader alone, new leader alone, old leader re-elected (needs node states)",
			New: func() Fault { return &Figure8{} }, Weight: 4, healRank: 3, Targeted: true, healers: figure8Healers},
		{Family: record(ElectionDelayFamily), Doc: "delay every link by 1.5-2 heartbeats, cut the leader off, up to 3 times: elections race",
			New: func() Fault { return &ElectionDelay{} }, Weight: 4, healRank: 3, Targeted: true, healers: healedByBase},
		{Family: record(LeaderCycleFamily), Doc: "cut the leader off, wait for the next leader, heal, kill it, restart it after the next",
			New: func() Fault { return &LeaderCycle{} }, Weight: 2, healRank: 3, Targeted: true, healers: healedByBase},
		{Family: record(PowerLossFamily), Doc: "SIGKILL one, a minority, a majority, all, or the leader, drop what was not fsynced; restart later (storage faults)",
			New: func() Fault { return &PowerLoss{} }, Weight: 2, healRank: 4, Storage: true, healers: storageHealers},
		{Family: record(CorruptFamily), Doc: "while one node or a minority is down, flip a bit, zero a range or truncate a data file; restart later (storage faults)",
			New: func() Fault { return &Corrupt{} }, Weight: 1, healRank: 4, Storage: true, healers: healedByStorage},
		{Family: record(DiskFullFamily), Doc: "writes, fsyncs or both fail with ENOSPC on one node; cleared later (storage faults)",
			New: func() Fault { return &DiskErrors{Kind: faultfs.KindENOSPC} }, Weight: 1, healRank: 4, Storage: true, healers: healedByStorage},
		{Family: record(EIOFamily), Doc: "writes, fsyncs or both fail with EIO on one node; cleared later (storage faults)",
			New: func() Fault { return &DiskErrors{Kind: faultfs.KindEIO} }, Weight: 1, healRank: 4, Storage: true, healers: healedByStorage},
		{Family: record(MemberFamily), Doc: "remove a member (the leader half of the time), add it back wiped, promote it (opt-in)",
			New: func() Fault { return &Member{} }, Weight: 2, healRank: 3, Targeted: true, OptIn: true},
	}
}

// record is the fault records' entry of the family called name; the zero
// Family for a name the table does not hold, which TestRegistryRecords
// forbids.
func record(name string) faultrec.Family {
	f, _ := faultrec.Lookup(name)
	return f
}

// FamilyWeight is the Weight of the family called name, 1 for a name the
// registry does not hold.
func FamilyWeight(name string) int {
	for _, f := range Families() {
		if f.Name == name {
			return f.Weight
		}
	}
	return 1
}

// FamilyTargeted reports whether the family called name is targeted
// (false for a name the registry does not hold); targeted families take
// turns in the schedule (see Schedule.Turns).
func FamilyTargeted(name string) bool {
	for _, f := range Families() {
		if f.Name == name {
			return f.Targeted
		}
	}
	return false
}

// FamilyNames returns the names of Families, in order.
func FamilyNames() []string {
	fams := Families()
	names := make([]string, len(fams))
	for i, f := range fams {
		names[i] = f.Name
	}
	return names
}

// DefaultFamilyNames returns the names of the families of the default mix:
// all but the opt-in ones and the storage ones, which join it when the
// data directories are served through the fault file system (see
// StorageFamilies).
func DefaultFamilyNames() []string {
	var names []string
	for _, f := range Families() {
		if !f.OptIn && !f.Storage {
			names = append(names, f.Name)
		}
	}
	return names
}

// NewFault makes a fault of the named family. A name the registry does not
// hold is an error that lists the families.
func NewFault(name string) (Fault, error) {
	for _, f := range Families() {
		if f.Name == name {
			return f.New(), nil
		}
	}
	return nil, fmt.Errorf("unknown fault family %q: want one of %s", name, strings.Join(FamilyNames(), ", "))
}

// FamiliesHelp describes every family, one "  name: doc" line each, for a
// command's --help.
func FamiliesHelp() string {
	var b strings.Builder
	for _, f := range Families() {
		fmt.Fprintf(&b, "  %-15s %s\n", f.Name, f.Doc)
	}
	return b.String()
}

// HealFaults returns faults that together heal everything every family
// can leave (the targeted families leave nothing the random families'
// heals miss), in the order healing needs: SIGCONT first, so that paused
// nodes answer the hooks the others clear, and kill last. The system clock
// is healed (where a fault of chaos's left NTP off) only when the hosts do
// not share this machine's clock.
func HealFaults(sharedClock bool) []Fault {
	fams := Families()
	slices.SortStableFunc(fams, func(a, b Family) int { return cmp.Compare(a.healRank, b.healRank) })
	var faults []Fault
	for _, f := range fams {
		if f.healers == nil {
			faults = append(faults, f.New())
			continue
		}
		faults = append(faults, f.healers(sharedClock)...)
	}
	return faults
}

// healRank is the place of the family name in the order healing needs
// (see HealFaults); a name the registry does not hold comes after all
// families.
func healRank(name string) int {
	for _, f := range Families() {
		if f.Name == name {
			return f.healRank
		}
	}
	return len(Families())
}

// healOrder returns the indexes of faults in the order healing needs, by
// the heal rank of their names, ties in the order given: pause first, so
// that paused nodes answer whatever comes next, and kill last.
func healOrder(faults []Fault) []int {
	order := make([]int, len(faults))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(healRank(faults[a].Name()), healRank(faults[b].Name()))
	})
	return order
}

// healedByBase is the healers of the targeted families: none of their
// own, for everything they leave is healed by the random families' heals:
// their cuts by partition's (chaos's target chain, hook drop lists),
// their delays by packet's, their clocks by clock's. (A node they killed
// cannot be restarted without the run's configuration, as for kill.)
func healedByBase(bool) []Fault { return nil }

// healedByStorage is the healers of corrupt, disk-full and eio: the
// storage heal of power-loss (storageHeal) heals what they leave on a
// host (error injection, a file system left mounted). A node they left
// down is as kill's: the next run redeploys it.
func healedByStorage(bool) []Fault { return nil }

// figure8Healers heals the append limits figure8 sets, which no random
// family sets; its cuts, links and clocks are healed by theirs.
func figure8Healers(bool) []Fault { return []Fault{&appendLimitHealer{}} }

// clockHealers heals the clock hooks, the fake clocks' control files and
// the vdso patches everywhere and, where the hosts have clocks of their
// own, the system clock too.
func clockHealers(sharedClock bool) []Fault {
	healers := []Fault{&Clock{Strategy: ClockHook}, &Clock{Strategy: ClockFaketime}, &Clock{Strategy: ClockVDSO}}
	if sharedClock {
		return healers
	}
	return append(healers, &Clock{Strategy: ClockSystem})
}
