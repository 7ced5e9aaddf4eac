package nemesis

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/db"
	"chaos/faultfs"
	"chaos/internal/golden"
)

// The fault records: the ops every family of the registry writes into
// history.jsonl, each with its value's exact JSON bytes, as each family's
// Start and Stop make them on the fakes of the other tests. The golden
// file is the contract of docs/FORMATS.md for fault op values: a change to
// it is a change of format that old stores and readers see.

// recordScenario runs one family's faults on fakes of its own and returns
// the ops they made, in order.
type recordScenario func(t *testing.T) []Op

// recordScenarios are the scenarios, by family name: every family of the
// registry has one.
func recordScenarios() map[string]recordScenario {
	return map[string]recordScenario{
		"kill":              recordKill,
		"pause":             recordPause,
		"partition":         recordPartition,
		"clock":             recordClock,
		"packet":            recordPacket,
		LeaseFamily:         recordLease,
		VoteRestartFamily:   recordVoteRestart,
		Figure8Family:       recordFigure8,
		ElectionDelayFamily: recordElectionDelay,
		LeaderCycleFamily:   recordLeaderCycle,
		PowerLossFamily:     recordPowerLoss,
		CorruptFamily:       recordCorrupt,
		DiskFullFamily:      recordDiskErrors(faultfs.KindENOSPC),
		EIOFamily:           recordDiskErrors(faultfs.KindEIO),
		MemberFamily:        recordMember,
	}
}

func TestFaultRecordsGolden(t *testing.T) {
	scenarios := recordScenarios()
	var b strings.Builder
	for _, fam := range Families() {
		run, ok := scenarios[fam.Name]
		require.True(t, ok, "family %s has no scenario in recordScenarios", fam.Name)
		b.WriteString("== " + fam.Name + "\n")
		for _, op := range run(t) {
			b.WriteString(opLine(t, op) + "\n")
		}
	}
	require.Len(t, scenarios, len(Families()), "a scenario for a family the registry does not hold")
	golden.Equal(t, "testdata/fault-records.golden", b.String())
}

// startStop runs f's Start (seeded by rng) and Stop on c and returns both
// ops; neither may fail.
func startStop(t *testing.T, f Fault, c *Cluster, rng *rand.Rand) []Op {
	t.Helper()
	ctx := context.Background()
	start, err := f.Start(ctx, c, rng)
	require.NoError(t, err, f.Name())
	stop, err := f.Stop(ctx, c)
	require.NoError(t, err, f.Name())
	return []Op{start, stop}
}

func recordKill(t *testing.T) []Op {
	c, _, _ := goldenCluster(fiveNodes)
	c.Leader = leaderIs("n3")
	ops := startStop(t, &Kill{Targets: []Target{TargetMinority}}, c, seeded(1))
	return append(ops, startStop(t, &Kill{Targets: []Target{TargetLeader}}, c, seeded(1))...)
}

func recordPause(t *testing.T) []Op {
	c, _, _ := goldenCluster(fiveNodes)
	return startStop(t, &Pause{Targets: []Target{TargetMajority}}, c, seeded(3))
}

func recordPartition(t *testing.T) []Op {
	var ops []Op
	for _, topo := range AllTopologies() {
		c := netCluster("10.77.0", 5)
		netSeparateHosts(c, &netLog{}, netProbeNoNetem)
		c.Leader = leaderIs("n3")
		ops = append(ops, startStop(t, &Partition{Topologies: []Topology{topo}}, c, netRand(42))...)
	}
	c := netCluster("127.0.0", 5)
	log := &netLog{}
	host := newNetFakeHost(log, netProbeNotRoot, "lo")
	host.notRoot = true
	for _, n := range c.Nodes {
		c.Remotes[n.Name] = host.remote(n.Name)
	}
	c.Hooks = newNetHooks(t, log, c.Nodes).hooks()
	ops = append(ops, startStop(t, &Partition{Topologies: []Topology{MajoritiesRing}}, c, netRand(5))...)
	stop, err := (&Partition{}).Stop(context.Background(), c)
	require.NoError(t, err)
	return append(ops, stop)
}

func recordClock(t *testing.T) []Op {
	c, _ := hookCluster(t, fiveNodes)
	waits := &waitLog{}
	var ops []Op
	for _, kind := range []string{clockBump, clockStrobe, clockRate} {
		k := &Clock{Targets: []Target{TargetMinority}, Wait: waits.wait}
		ops = append(ops, startStop(t, k, c, seeded(seedFor(t, k, c, kind)))...)
	}
	return ops
}

func recordPacket(t *testing.T) []Op {
	c := netCluster("10.77.0", 5)
	netSeparateHosts(c, &netLog{}, netProbeNetem)
	b := UnreliableNetwork()
	b.Corrupt, b.RateKbit = 0.001, 2000
	p := &Packet{Behavior: b, Links: netLinks(PacketLinks{"n2": {"n5", "n1", "n3"}, "n4": {"n1"}})}
	ops := startStop(t, p, c, netRand(1))
	return append(ops, startStop(t, &Packet{}, c, netRand(7))...)
}

func recordLease(t *testing.T) []Op {
	fx := newSeqFixture(t)
	fx.script = func(fx *seqFixture, elapsed time.Duration) {
		if elapsed >= steady+700*time.Millisecond {
			fx.set(func() { fx.leader = "n1" })
		}
	}
	ops := startStop(t, &Lease{Pace: fx.pace()}, fx.c, seeded(1))
	fx.script = nil
	fx.set(func() { fx.leader = "n1" })
	return append(ops, startStop(t, &Lease{Pace: fx.pace()}, fx.c, seeded(1))...)
}

func recordVoteRestart(t *testing.T) []Op {
	fx := newSeqFixture(t)
	voteScript(t, fx, true)
	ops := startStop(t, &VoteRestart{Pace: fx.pace()}, fx.c, seeded(1))
	fx = newSeqFixture(t)
	return append(ops, startStop(t, &VoteRestart{Pace: fx.pace()}, fx.c, seeded(1))...)
}

func recordFigure8(t *testing.T) []Op {
	fx := newSeqFixture(t)
	fx.script = figure8Script
	ops := startStop(t, &Figure8{Pace: fx.pace()}, fx.c, seeded(1))
	fx = newSeqFixture(t)
	return append(ops, startStop(t, &Figure8{Pace: fx.pace()}, fx.c, seeded(1))...)
}

func recordElectionDelay(t *testing.T) []Op {
	fx := newSeqFixture(t)
	fx.script = func(fx *seqFixture, elapsed time.Duration) {
		fx.set(func() {
			if elapsed >= steady+400*time.Millisecond {
				fx.leader = "n1"
				fx.states["n1"] = db.NodeState{Role: RoleLeader, Term: 5, Leader: "n1", Commit: 95, LastIndex: 95}
			}
		})
	}
	return startStop(t, &ElectionDelay{Pace: fx.pace()}, fx.c, seeded(1))
}

func recordLeaderCycle(t *testing.T) []Op {
	fx := newSeqFixture(t)
	fx.script = func(fx *seqFixture, elapsed time.Duration) {
		fx.set(func() {
			switch {
			case elapsed >= steady+1000*time.Millisecond:
				fx.leader = "n4"
			case elapsed >= steady+600*time.Millisecond:
				fx.leader = "n1"
			}
		})
	}
	ops := startStop(t, &LeaderCycle{Pace: fx.pace()}, fx.c, seeded(1))
	fx.script = nil
	return append(ops, startStop(t, &LeaderCycle{Pace: fx.pace()}, fx.c, seeded(1))...)
}

func recordPowerLoss(t *testing.T) []Op {
	c, _, _ := storageCluster(t, threeNodes)
	ops := startStop(t, &PowerLoss{Targets: []Target{TargetAll}}, c, seeded(1))
	return append(ops, startStop(t, &PowerLoss{Targets: []Target{TargetLeader}}, c, seeded(1))...)
}

func recordCorrupt(t *testing.T) []Op {
	c, _, _ := storageCluster(t, fiveNodes)
	return startStop(t, &Corrupt{Targets: []Target{TargetMinority}}, c, seeded(2))
}

func recordDiskErrors(kind string) recordScenario {
	return func(t *testing.T) []Op {
		c, _, _ := storageCluster(t, threeNodes)
		ops := startStop(t, &DiskErrors{Kind: kind}, c, seeded(1))
		return append(ops, startStop(t, &DiskErrors{Kind: kind, On: []string{faultfs.OnFsyncs}}, c, seeded(1))...)
	}
}

func recordMember(t *testing.T) []Op {
	d := newMemberDB()
	d.refuse["remove"], d.refuse["promote"] = 1, 2
	c, m, _ := memberFixture(d, "n1")
	return startStop(t, m, c, rand.New(rand.NewPCG(1, 2)))
}
