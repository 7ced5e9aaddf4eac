package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/control/remotetest"
	"chaos/db"
	"chaos/faultfs"
	"chaos/history/faultrec"
	"chaos/internal/golden"
	"chaos/nemesis/hostcmd"
)

// storageCluster is goldenCluster whose chaos-node serves its data
// directories through the fault file system, its hosts answering as
// storageAnswers does.
func storageCluster(t *testing.T, nodes []db.Node) (*Cluster, *liveDB, map[string]*remotetest.Recorder) {
	c, d, fakes := goldenCluster(nodes)
	cn := d.DB.(*db.ChaosNode)
	cn.Storage = &db.FaultFS{Binary: t.TempDir() + "/chaos", Upload: true, Path: "/opt/chaos/chaos-faultfs"}
	c.Storage = cn
	for _, n := range nodes {
		c.Remotes[n.Name] = fakes[n.Name].Remote(n.Name, storageAnswers)
	}
	return c, d, fakes
}

// storageAnswers answers a host's commands as a fault file system that
// runs (pid 4343) and a chaos corrupt that damaged a WAL segment would.
func storageAnswers(call remotetest.Call) (control.Result, error) {
	out := ""
	switch cmd := call.Cmd; {
	case strings.Contains(cmd, "faultfs.pid") && strings.Contains(cmd, `echo "$p ${s%% *}"`):
		out = "4343 S"
	case strings.Contains(cmd, "faultfs power-loss"):
		out = `{"dropped":{"pending_files":2,"undo_bytes":4096,"pending_names":1}}`
	case strings.Contains(cmd, "faultfs errors"):
		out = `{"pending_files":0,"undo_bytes":0,"pending_names":0,"errors":{"kind":"eio","on":"fsyncs"}}`
	case strings.Contains(cmd, "faultfs clear"), strings.Contains(cmd, "faultfs status"):
		out = `{"pending_files":0,"undo_bytes":0,"pending_names":0}`
	case strings.Contains(cmd, " corrupt --dir "):
		out = `{"file":"wal/0000000000000001-0000000000000001.wal","target":"wal","how":"flip","offset":1234,"bit":3,"size":67108864,"data_end":40960}`
	case cmd == hostcmd.StorageProbeScript:
		out = "ok"
	}
	return control.Result{Stdout: []byte(out)}, nil
}

// The commands of a power loss of every node (kill, then the file
// system's power-loss), of the restart that ends it, and what the op
// records.
func TestPowerLossCommands(t *testing.T) {
	ctx := context.Background()
	c, _, fakes := storageCluster(t, threeNodes)
	var b strings.Builder
	step := func(op Op, err error) {
		require.NoError(t, err)
		b.WriteString(transcript(opLine(t, op), threeNodes, fakes))
	}
	p := &PowerLoss{Targets: []Target{TargetAll}}
	step(p.Start(ctx, c, seeded(1)))
	step(p.Stop(ctx, c))
	require.NoError(t, p.Heal(ctx, c))
	b.WriteString(transcript("heal (nothing left down)", threeNodes, fakes))
	golden.Equal(t, "testdata/power-loss.golden", b.String())
}

// Aimed at the leader of a system that cannot name one, power loss falls
// back to one node, and says why.
func TestPowerLossLeaderFallsBack(t *testing.T) {
	c, _, _ := storageCluster(t, threeNodes)
	p := &PowerLoss{Targets: []Target{TargetLeader}}
	op, err := p.Start(context.Background(), c, seeded(1))
	require.NoError(t, err)
	v := op.Value.(faultrec.PowerLoss)
	assert.Equal(t, string(TargetOne), v.Mode)
	assert.Contains(t, v.Fallback, "leader: chaos-node cannot tell its leader")
	assert.Equal(t, map[string]faultrec.DiskStatus{v.Nodes[0]: {PendingFiles: 2, UndoBytes: 4096, PendingNames: 1}}, v.Dropped)
}

// A file system that refuses the power loss (files still open) leaves the
// node killed and recorded as down: Stop restarts it.
func TestPowerLossRefusedLeavesTheNodeToRestart(t *testing.T) {
	ctx := context.Background()
	c, d, fakes := storageCluster(t, threeNodes)
	c.Remotes["n2"] = fakes["n2"].Remote("n2", func(call remotetest.Call) (control.Result, error) {
		if strings.Contains(call.Cmd, "faultfs power-loss") {
			return control.Result{ExitCode: 255, Stderr: []byte("power loss: 1 files of the mount are still open")}, nil
		}
		return storageAnswers(call)
	})
	p := &PowerLoss{Targets: []Target{TargetAll}}
	_, err := p.Start(ctx, c, seeded(1))
	require.ErrorContains(t, err, "power-loss: faultfs power-loss: ")
	require.ErrorContains(t, err, "power loss: 1 files of the mount are still open")
	assert.Error(t, d.Up(ctx, fiveNodes[1]), "n2 was killed")
	op, err := p.Stop(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, `op stop-power-loss {"nodes":["n1","n2","n3"]}`, opLine(t, op))
	assert.NoError(t, d.Up(ctx, fiveNodes[1]))
}

// The commands of a corruption of a minority (kill, chaos corrupt on the
// data directory with the plan drawn from the seed) and of its restart.
func TestCorruptCommands(t *testing.T) {
	ctx := context.Background()
	c, _, fakes := storageCluster(t, fiveNodes)
	var b strings.Builder
	step := func(op Op, err error) {
		require.NoError(t, err)
		b.WriteString(transcript(opLine(t, op), fiveNodes, fakes))
	}
	k := &Corrupt{Targets: []Target{TargetMinority}}
	step(k.Start(ctx, c, seeded(2)))
	step(k.Stop(ctx, c))
	golden.Equal(t, "testdata/corrupt.golden", b.String())
}

// A node that does not come back after its corruption (a correct node
// refuses damaged storage) counts against the minority: the next
// corruption spares it and damages fewer nodes, and once a minority is
// down none more is damaged.
func TestCorruptNeverReachesAMajority(t *testing.T) {
	ctx := context.Background()
	c, d, _ := storageCluster(t, fiveNodes)
	k := &Corrupt{Targets: []Target{TargetOne}, UpTimeout: time.Millisecond}
	op, err := k.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	first := op.Value.(faultrec.Corrupt).Nodes
	require.Len(t, first, 1)
	d.sticky = map[string]bool{first[0]: true} // stays down: it refuses its storage
	_, err = k.Stop(ctx, c)
	require.ErrorContains(t, err, first[0]+": not answering")

	k.Targets = []Target{TargetMinority}
	op, err = k.Start(ctx, c, seeded(2))
	require.NoError(t, err)
	second := op.Value.(faultrec.Corrupt).Nodes
	require.Len(t, second, 1, "a minority of five is two, one of which is down already")
	assert.NotEqual(t, first, second)
	d.sticky[second[0]] = true
	_, err = k.Stop(ctx, c)
	require.Error(t, err)

	_, err = k.Start(ctx, c, seeded(3))
	require.EqualError(t, err, "corrupt: "+first[0]+", "+second[0]+" stay down after an earlier corruption: "+
		"damaging another node would reach a majority")
}

func TestCorruptNeedsThreeNodes(t *testing.T) {
	c, _, _ := storageCluster(t, fiveNodes[:2])
	assert.EqualError(t, (&Corrupt{}).Available(context.Background(), c),
		"corrupt: needs at least 3 nodes (damage stays on a minority), the cluster has 2")
}

// The commands of disk-full and eio: errors set on one node, cleared by
// the stop, which restarts the node if the errors killed it.
func TestDiskErrorsCommands(t *testing.T) {
	ctx := context.Background()
	c, d, fakes := storageCluster(t, threeNodes)
	var b strings.Builder
	step := func(op Op, err error) {
		require.NoError(t, err)
		b.WriteString(transcript(opLine(t, op), threeNodes, fakes))
	}
	full := &DiskErrors{Kind: faultfs.KindENOSPC}
	step(full.Start(ctx, c, seeded(1)))
	step(full.Stop(ctx, c))
	eio := &DiskErrors{Kind: faultfs.KindEIO, On: []string{faultfs.OnFsyncs}}
	op, err := eio.Start(ctx, c, seeded(1))
	step(op, err)
	victim := op.Value.(faultrec.DiskErrors).Nodes[0]
	d.silent[victim] = true // the node died of a failed fsync
	step(eio.Stop(ctx, c))
	assert.NoError(t, d.Up(ctx, db.Node{Name: victim}), "restarted")
	golden.Equal(t, "testdata/disk-errors.golden", b.String())
}

// Heal ends the errors a Stop could not end; with none active it does
// nothing.
func TestDiskErrorsHeal(t *testing.T) {
	ctx := context.Background()
	c, _, fakes := storageCluster(t, threeNodes)
	e := &DiskErrors{Kind: faultfs.KindEIO}
	require.NoError(t, e.Heal(ctx, c))
	_, err := e.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	_, err = e.Start(ctx, c, seeded(1))
	require.ErrorContains(t, err, "eio: a fault is active already on")
	for _, f := range fakes {
		f.Take()
	}
	require.NoError(t, e.Heal(ctx, c))
	var clears int
	for _, f := range fakes {
		for _, cmd := range ran(f) {
			if strings.Contains(cmd, "faultfs clear") {
				clears++
			}
		}
	}
	assert.Equal(t, 1, clears)
	op, err := e.Stop(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, Op{}, op, "healed: nothing to stop")
}

// The storage heal, as chaos heal runs it: where the node runs, its file
// system's errors are cleared through the binary serving it; where it
// does not, the file system is stopped and its mount detached.
func TestStorageHealCommands(t *testing.T) {
	ctx := context.Background()
	cn := &db.ChaosNode{Binary: "/build/chaos", Upload: true, Layout: db.DefaultLayout(), Nodes: fiveNodes[:2]}
	var rec remotetest.Recorder
	running := func(call remotetest.Call) (control.Result, error) {
		if strings.Contains(call.Cmd, "node.pid") && strings.Contains(call.Cmd, `echo "$p ${s%% *}"`) {
			return control.Result{Stdout: []byte("4242 S")}, nil
		}
		return storageAnswers(call)
	}
	c := &Cluster{Nodes: fiveNodes[:2], DB: cn, Storage: cn, Processes: cn, Remotes: map[string]control.Remote{
		"n1": rec.Remote("n1", running), "n2": rec.Remote("n2", nil)}}
	var b strings.Builder
	for _, n := range c.Nodes {
		require.NoError(t, storageHeal{}.Heal(ctx, only(c, n)))
		b.WriteString(n.Name + " (node running: " + map[string]string{"n1": "yes", "n2": "no"}[n.Name] + ")\n")
		for _, call := range rec.Take() {
			b.WriteString("  $ " + call.Cmd + "\n")
		}
	}
	golden.Equal(t, "testdata/storage-heal.golden", b.String())
}

// What the storage heal finds left: the file system's process and mount.
func TestStorageLeftovers(t *testing.T) {
	cn := &db.ChaosNode{Layout: db.DefaultLayout(), Nodes: fiveNodes[:1]}
	var rec remotetest.Recorder
	c := &Cluster{Nodes: fiveNodes[:1], DB: cn, Storage: cn, Processes: cn, Remotes: map[string]control.Remote{"n1": rec.Remote("n1", storageAnswers)}}
	what, err := storageHeal{}.leftovers(context.Background(), c, fiveNodes[0])
	require.NoError(t, err)
	assert.Equal(t, []string{"fault file system process 4343, running", "fault file system mounted at /var/lib/chaos/chaos-node/n1/data"}, what)
}

// Available: the data directories must be served through the fault file
// system, and each host must be able to serve it; a host that cannot is
// named with what it lacks, in one line, as a StorageUnavailableError.
func TestStorageAvailable(t *testing.T) {
	ctx := context.Background()
	c, d, fakes := storageCluster(t, threeNodes)
	err := (&PowerLoss{}).Available(ctx, c)
	require.ErrorContains(t, err, "the chaos binary that serves the fault file system")
	var su *StorageUnavailableError
	assert.ErrorAs(t, err, &su)

	d.DB.(*db.ChaosNode).Storage.Binary = "/bin/sh" // an executable file
	require.NoError(t, (&PowerLoss{}).Available(ctx, c))
	c.Remotes["n2"] = fakes["n2"].Remote("h2.example", func(remotetest.Call) (control.Result, error) {
		return control.Result{Stdout: []byte("/dev/fuse is missing (load the fuse module, or give the container the device)\n")}, nil
	})
	for _, f := range []Fault{&PowerLoss{}, &Corrupt{}, &DiskErrors{Kind: faultfs.KindENOSPC}, &DiskErrors{Kind: faultfs.KindEIO}} {
		err := f.Available(ctx, c)
		require.EqualError(t, err, f.Name()+": n2 (h2.example): cannot serve the fault file system: "+
			"/dev/fuse is missing (load the fuse module, or give the container the device)")
		assert.ErrorAs(t, err, &su)
	}

	d.DB.(*db.ChaosNode).Storage = nil
	err = (&DiskErrors{Kind: faultfs.KindEIO}).Available(ctx, c)
	require.ErrorIs(t, err, errStorageOff)
	assert.False(t, errors.As(err, &su), "storage off is no host's failure")
	c.Storage = nil
	assert.EqualError(t, (&PowerLoss{}).Available(ctx, c),
		"power-loss: chaos-node keeps no data directory chaos knows of (no Storage capability)")
}

// Asked for some kinds of file and ways only (chaos run --corrupt-file,
// --corrupt-how), every corruption damages those, whatever the seed.
func TestCorruptDamagesOnlyWhatWasAskedFor(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(10) {
		c, _, fakes := storageCluster(t, fiveNodes)
		k := &Corrupt{Targets: []Target{TargetMinority}, Files: []string{"wal"}, Hows: []string{"flip", "zero"}}
		_, err := k.Start(ctx, c, seeded(seed))
		require.NoError(t, err)
		damaged := 0
		for _, n := range fiveNodes {
			for _, call := range fakes[n.Name].Take() {
				if !strings.Contains(call.Cmd, " corrupt --dir ") {
					continue
				}
				damaged++
				assert.Contains(t, call.Cmd, " --target wal --how ", "seed %d", seed)
				assert.NotContains(t, call.Cmd, " --how truncate ", "seed %d", seed)
			}
		}
		assert.Equal(t, 2, damaged, "seed %d: a minority of five", seed)
	}
}

// A node that came back from its corruption counts against the minority
// until the system's states show it caught up: not abstaining, its
// commit index at the furthest log end reported when it came back.
func TestCorruptCountsDamagedNodesUntilCaughtUp(t *testing.T) {
	ctx := context.Background()
	c, _, _ := storageCluster(t, fiveNodes)
	states := map[string]db.NodeState{}
	for _, n := range fiveNodes {
		states[n.Name] = db.NodeState{Role: db.RoleFollower, Commit: 90, LastIndex: 100}
	}
	c.States = func(context.Context) (map[string]db.NodeState, error) { return states, nil }
	k := &Corrupt{Targets: []Target{TargetMinority}, UpTimeout: time.Millisecond}
	op, err := k.Start(ctx, c, seeded(1))
	require.NoError(t, err)
	damaged := op.Value.(faultrec.Corrupt).Nodes
	require.Len(t, damaged, 2)
	_, err = k.Stop(ctx, c)
	require.NoError(t, err)
	states[damaged[0]] = db.NodeState{Commit: 100, LastIndex: 100, Abstaining: true}
	states[damaged[1]] = db.NodeState{Commit: 99, LastIndex: 99}

	_, err = k.Start(ctx, c, seeded(2))
	require.EqualError(t, err, "corrupt: "+damaged[0]+", "+damaged[1]+
		" came back damaged and are not yet caught up: damaging another node would reach a majority")

	states[damaged[0]] = db.NodeState{Commit: 100, LastIndex: 100}
	op, err = k.Start(ctx, c, seeded(3))
	require.NoError(t, err)
	again := op.Value.(faultrec.Corrupt).Nodes
	require.Len(t, again, 1, "one of the two caught up")
	assert.NotContains(t, again, damaged[1], "the one still behind is spared")
}

// undoAnswers is storageAnswers whose file systems kept old bytes past
// their memory bound and refused three changes for want of room to spill
// them: n2's alone when only is set, every node's otherwise.
func undoAnswers(node, only string) func(remotetest.Call) (control.Result, error) {
	return func(call remotetest.Call) (control.Result, error) {
		refused := only == "" || node == only
		switch {
		case refused && strings.Contains(call.Cmd, "faultfs power-loss"):
			return control.Result{Stdout: []byte(`{"dropped":{"pending_files":2,"undo_bytes":4096,` +
				`"undo_memory_bytes":1024,"undo_spilled_bytes":3072,"undo_refused":3,"pending_names":1}}`)}, nil
		case refused && strings.Contains(call.Cmd, "faultfs status"):
			return control.Result{Stdout: []byte(`{"pending_files":0,"undo_bytes":0,"undo_refused":3,"pending_names":0}`)}, nil
		}
		return storageAnswers(call)
	}
}

// Issue 38: what the file system refused for want of room to keep old
// bytes is chaos's doing, and the power loss's record says so, with where
// the old bytes were kept.
func TestPowerLossRecordsWhatTheFileSystemRefused(t *testing.T) {
	c, _, fakes := storageCluster(t, threeNodes)
	for _, n := range threeNodes {
		c.Remotes[n.Name] = fakes[n.Name].Remote(n.Name, undoAnswers(n.Name, ""))
	}
	op, err := (&PowerLoss{Targets: []Target{TargetOne}}).Start(context.Background(), c, seeded(1))
	require.NoError(t, err)
	v, ok := op.Value.(faultrec.PowerLoss)
	require.True(t, ok, "%T", op.Value)
	require.Len(t, v.Dropped, 1)
	b, err := json.Marshal(v.Dropped)
	require.NoError(t, err)
	assert.Contains(t, string(b), `{"pending_files":2,"undo_bytes":4096,"undo_memory_bytes":1024,`+
		`"undo_spilled_bytes":3072,"undo_refused":3,"pending_names":1}`)
}

// Issue 38: a run without a power loss still names, in its heal record,
// the nodes whose file systems refused changes for want of room (read
// before the heal unmounts anything), and only those.
func TestTheHealRecordNamesWhatFileSystemsRefused(t *testing.T) {
	c, _, recs := storageCluster(t, threeNodes)
	for _, n := range threeNodes {
		c.Remotes[n.Name] = recs[n.Name].Remote(n.Name, undoAnswers(n.Name, "n2"))
	}
	fx := newScheduleFixture(t, 1, "kill")
	fx.s.Cluster = c
	require.NoError(t, newScheduleRun(fx.s).finish(context.Background()))
	assert.Equal(t, []string{`heal {"faults":["kill"],"undo_refused":{"n2":3}}`}, nemesisOps(t, fx.rec))

	c, _, _ = storageCluster(t, threeNodes) // none refused: nothing said
	fx = newScheduleFixture(t, 1, "kill")
	fx.s.Cluster = c
	require.NoError(t, newScheduleRun(fx.s).finish(context.Background()))
	assert.Equal(t, []string{`heal {"faults":["kill"]}`}, nemesisOps(t, fx.rec))

	// A system that places its data directories, run without storage
	// faults: no file system to ask, and nothing asked of the hosts.
	c, d, fakes := goldenCluster(threeNodes)
	c.Storage = d.DB.(*db.ChaosNode) // places its data directories; Storage (the file system) is nil
	fx = newScheduleFixture(t, 1, "kill")
	fx.s.Cluster = c
	require.NoError(t, newScheduleRun(fx.s).finish(context.Background()))
	assert.Equal(t, []string{`heal {"faults":["kill"]}`}, nemesisOps(t, fx.rec))
	for _, n := range threeNodes {
		assert.Empty(t, ran(fakes[n.Name]), n.Name)
	}
}
