package nemesis

import (
	"context"
	"os"
	"path"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/cluster"
	"chaos/control"
	"chaos/db"
	"chaos/internal/fakeclock"
	"chaos/nemesis/hostcmd"
)

// The seam between the fault families and a system is db.Capabilities,
// and nothing else: a system the tests make up and register in one entry
// of the registry (seamSystem), which declares its capabilities and
// nothing more, gets every family when it declares them all, and loses
// exactly the families that need a capability when it drops that one,
// each saying which capability is missing.

// seamSystem is a system under test known only by its capabilities: any
// method of db.DB but Name and ClientAddr is not expected (nil DB: a call
// panics).
type seamSystem struct {
	db.DB
	caps db.Capabilities
}

func (seamSystem) Name() string                    { return "seam" }
func (seamSystem) ClientAddr(n db.Node) string     { return n.Addr + ":9000" }
func (s seamSystem) Capabilities() db.Capabilities { return s.caps }

// seamMembership, seamClocks, seamProcesses, seamPeers and seamStorage
// answer without touching a host: availability asks nothing of them but
// that they are there (and, for fake clocks and storage, what they say
// of each node).
type (
	seamMembership struct{}
	seamClocks     struct{}
	seamProcesses  struct{}
	seamPeers      struct{}
	seamStorage    struct{ fs *db.FaultFS }
	seamShown      struct{}
)

func (seamShown) NodeClock(context.Context, db.Node) (time.Time, error) { return time.Now(), nil }

func (seamMembership) Members(context.Context, db.Node) ([]string, []string, error) {
	return nil, nil, nil
}
func (seamMembership) RemoveMember(context.Context, db.Node, db.Node) error  { return nil }
func (seamMembership) AddMember(context.Context, db.Node, db.Node) error     { return nil }
func (seamMembership) Promote(context.Context, db.Node, db.Node) error       { return nil }
func (seamMembership) Rejoin(context.Context, control.Remote, db.Node) error { return nil }

func (seamClocks) ClockFile(n db.Node) string { return "/var/lib/seam/" + n.Name + "/faketimerc" }
func (c seamClocks) FakeClock(_ context.Context, _ control.Remote, n db.Node) (db.FakeClock, error) {
	return db.FakeClock{File: c.ClockFile(n), Mechanism: fakeclock.Native}, nil
}

func (seamProcesses) Process(context.Context, control.Remote, db.Node) (db.Process, error) {
	return db.Process{}, nil
}

func (seamPeers) PeerAddr(n db.Node) (string, bool) { return n.Addr + ":9001", true }

func (s seamStorage) StorageMount(n db.Node) db.StorageMount {
	dir := "/var/lib/seam/" + n.Name
	return db.NewStorageMount(n, dir, path.Join(dir, "data"), s.fs)
}

// seamCapabilities are every capability db.Capabilities has, for nodes.
func seamCapabilities(t *testing.T, nodes []db.Node) db.Capabilities {
	exe, err := os.Executable()
	require.NoError(t, err)
	addrs := map[string]string{}
	for _, n := range nodes {
		addrs[n.Name] = n.Addr + ":9000"
	}
	return db.Capabilities{Leader: fakeLeader("n1"), States: fakeStates{}, Events: fakeEventLogs(t.TempDir()),
		Hooks: &db.ChaosNodeHooks{Addrs: addrs}, Storage: seamStorage{fs: &db.FaultFS{Binary: exe, Path: exe}},
		Membership: seamMembership{}, FakeClocks: seamClocks{}, Processes: seamProcesses{}, Peers: seamPeers{}, Clocks: seamShown{}}
}

// seamCluster is the nemesis's view (NewCluster) of a seamSystem with
// caps on three hosts that can do every network fault and serve the
// fault file system. The system is registered in one entry of a copy of
// the registry and opened through it, as --db seam would open it.
func seamCluster(t *testing.T, caps db.Capabilities) *Cluster {
	t.Helper()
	hosts := netCluster("10.77.0", 3)
	for _, h := range netSeparateHosts(hosts, &netLog{}, netProbeNetem) {
		h.answer = func(cmd string) (control.Result, bool) {
			switch cmd {
			case hostcmd.StorageProbeScript:
				return netOK("ok\n"), true
			case hostcmd.VDSOProbeCmd: // x86-64, Yama 0, root: every process may be traced
				return netOK("x86_64\n0\n0\n000001ffffffffff\n"), true
			}
			return control.Result{}, false
		}
	}
	registry := append(cluster.Systems(), cluster.System{Name: "seam", LocalMode: true,
		New: func(db.Config) (db.DB, error) { return seamSystem{caps: caps}, nil }})
	d, err := registry.Open("seam", db.Config{Nodes: hosts.Nodes})
	require.NoError(t, err)
	c := NewCluster(d, hosts.Nodes, hosts.Remotes, false)
	exe, err := os.Executable()
	require.NoError(t, err)
	c.VDSOClock = &VDSOClock{HostBinary: HostBinary{Binary: exe, Path: exe}}
	return c
}

// seamFaults are a fault of every family as the registry makes it, by its
// name, and the clock and lease families on the faketime and vdso
// strategies.
func seamFaults() map[string]Fault {
	faults := map[string]Fault{
		"clock/faketime": &Clock{Strategy: ClockFaketime}, "lease/faketime": &Lease{Clock: ClockFaketime},
		"clock/vdso": &Clock{Strategy: ClockVDSO}, "lease/vdso": &Lease{Clock: ClockVDSO},
	}
	for _, f := range Families() {
		faults[f.Name] = f.New()
	}
	return faults
}

func TestFamiliesNeedTheirCapabilities(t *testing.T) {
	ctx := context.Background()
	nodes := netCluster("10.77.0", 3).Nodes
	c := seamCluster(t, seamCapabilities(t, nodes))
	for name, f := range seamFaults() {
		require.NoError(t, f.Available(ctx, c), "%s, with every capability", name)
	}

	// Each capability, and exactly the families (by registry name, or
	// name/strategy) that are unavailable without it. Keep it in step with
	// db.Capabilities: a family that comes to need a capability, or stops
	// needing one, fails here.
	table := []struct {
		capability string
		drop       func(*db.Capabilities)
		need       []string
	}{
		{"Leader", func(c *db.Capabilities) { c.Leader = nil },
			[]string{LeaseFamily, VoteRestartFamily, Figure8Family, ElectionDelayFamily, LeaderCycleFamily, MemberFamily,
				"lease/faketime", "lease/vdso"}},
		{"States", func(c *db.Capabilities) { c.States = nil }, []string{VoteRestartFamily, Figure8Family}},
		{"Events", func(c *db.Capabilities) { c.Events = nil }, nil},
		{"Hooks", func(c *db.Capabilities) { c.Hooks = nil }, []string{"clock", LeaseFamily}},
		{"Storage", func(c *db.Capabilities) { c.Storage = nil }, StorageFamilies()},
		{"Membership", func(c *db.Capabilities) { c.Membership = nil }, []string{MemberFamily}},
		{"FakeClocks", func(c *db.Capabilities) { c.FakeClocks = nil }, []string{"clock/faketime", "lease/faketime"}},
		{"Processes", func(c *db.Capabilities) { c.Processes = nil }, []string{"clock/vdso", "lease/vdso"}},
		{"Peers", func(c *db.Capabilities) { c.Peers = nil }, nil},
		{"Clocks", func(c *db.Capabilities) { c.Clocks = nil }, nil}, // what a clock op records, not whether it runs
	}
	var rows []string
	for _, tc := range table {
		rows = append(rows, tc.capability)
	}
	assert.Equal(t, seamOptional(seamCapabilities(t, nodes)), rows, "a row for every capability a system may lack, in order")
	for _, tc := range table {
		t.Run(tc.capability, func(t *testing.T) {
			caps := seamCapabilities(t, nodes)
			tc.drop(&caps)
			require.NotContains(t, seamOptional(caps), tc.capability, "drop removes the capability of its row")
			require.Len(t, seamOptional(caps), len(table)-1, "and no other")
			c := seamCluster(t, caps)
			var unavailable []string
			for name, f := range seamFaults() {
				err := f.Available(ctx, c)
				if err == nil {
					continue
				}
				unavailable = append(unavailable, name)
				assert.ErrorContains(t, err, "no "+tc.capability+" capability", name)
			}
			assert.ElementsMatch(t, tc.need, unavailable)
		})
	}
}

// seamOptional names the capabilities caps declares among those a system
// may lack (the fields of db.Capabilities that are interfaces; Timing
// always has a value), in db.Capabilities' order.
func seamOptional(caps db.Capabilities) []string {
	v := reflect.ValueOf(caps)
	var names []string
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Interface && !f.IsNil() {
			names = append(names, v.Type().Field(i).Name)
		}
	}
	return names
}
