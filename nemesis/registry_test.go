package nemesis

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/history/faultrec"
)

// Every family of the registry is built under its own name, documented,
// and listed once.
func TestRegistryBuildsEveryFamily(t *testing.T) {
	seen := map[string]bool{}
	for _, fam := range Families() {
		assert.False(t, seen[fam.Name], "%s listed twice", fam.Name)
		seen[fam.Name] = true
		assert.NotEmpty(t, fam.Doc, "%s has no doc", fam.Name)
		f, err := NewFault(fam.Name)
		require.NoError(t, err, fam.Name)
		assert.Equal(t, fam.Name, f.Name())
		assert.Contains(t, FamiliesHelp(), fam.Name)
	}
	assert.Equal(t, []string{"kill", "pause", "partition", "clock", "packet",
		"lease", "vote-restart", "figure8", "election-delay", "leader-cycle",
		"power-loss", "corrupt", "disk-full", "eio", "member"}, FamilyNames())
	assert.Equal(t, []string{"kill", "pause", "partition", "clock", "packet",
		"lease", "vote-restart", "figure8", "election-delay", "leader-cycle"}, DefaultFamilyNames(),
		"member is opt-in: it changes the cluster's membership, which a user asks for; "+
			"the storage families join when the data directories are on the fault file system")
	for _, fam := range Families() {
		assert.Equal(t, slices.Contains(StorageFamilies(), fam.Name), fam.Storage, fam.Name)
	}
}

func TestRegistryRefusesUnknownFamily(t *testing.T) {
	f, err := NewFault("flood")
	assert.Nil(t, f)
	assert.EqualError(t, err, `unknown fault family "flood": want one of kill, pause, partition, clock, packet, `+
		`lease, vote-restart, figure8, election-delay, leader-cycle, power-loss, corrupt, disk-full, eio, member`)
}

// HealFaults covers every family of the registry, pause first and kill
// last.
func TestHealFaultsCoverEveryFamily(t *testing.T) {
	for _, shared := range []bool{true, false} {
		var names []string
		covered := map[string]bool{}
		for _, f := range HealFaults(shared) {
			names = append(names, f.Name())
			covered[f.Name()] = true
		}
		for _, fam := range Families() {
			if fam.Targeted {
				// What a targeted fault leaves is cuts, delays and clocks,
				// and figure8's append limits, which its own heal removes.
				assert.True(t, covered["partition"] && covered["packet"] && covered["clock"], fam.Name)
				assert.True(t, covered["figure8"], fam.Name)
				continue
			}
			if fam.Storage {
				// What a storage fault leaves on a host (error injection,
				// a mount) is healed by the storage heal, power-loss's.
				assert.True(t, covered[PowerLossFamily], fam.Name)
				continue
			}
			assert.True(t, covered[fam.Name], "shared clock %v: %s is not healed", shared, fam.Name)
		}
		assert.True(t, covered[MemberFamily], "membership is restored by member's own heal")
		assert.Equal(t, "pause", names[0])
		assert.Equal(t, "kill", names[len(names)-1])
	}
}

// Every family weighs something, the targeted families more than a random
// family, and alike but leader-cycle (see Family.Weight): no sequence is
// put first for the bug it finds.
func TestRegistryWeights(t *testing.T) {
	for _, fam := range Families() {
		assert.Positive(t, fam.Weight, fam.Name)
		assert.Equal(t, fam.Weight, FamilyWeight(fam.Name))
	}
	assert.Equal(t, 1, FamilyWeight("flood"))
	for _, name := range []string{LeaseFamily, VoteRestartFamily, Figure8Family, ElectionDelayFamily, LeaderCycleFamily} {
		assert.Greater(t, FamilyWeight(name), FamilyWeight("partition"), name)
	}
	for _, name := range []string{LeaseFamily, VoteRestartFamily, ElectionDelayFamily} {
		assert.Equal(t, FamilyWeight(Figure8Family), FamilyWeight(name), name)
	}
}

// Every family of the registry is declared with its entry in the fault
// records' table, and the table holds no family the registry does not:
// the readers of a history (runreport, raftcheck) know the families
// through that table.
func TestRegistryRecords(t *testing.T) {
	var table []faultrec.Family
	for _, fam := range Families() {
		rec, ok := faultrec.Lookup(fam.Name)
		require.True(t, ok, "%s is not in faultrec.Families", fam.Name)
		assert.Equal(t, rec, fam.Family, fam.Name)
		table = append(table, fam.Family)
	}
	assert.Equal(t, faultrec.Families(), table)
}
