package testbed

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/internal/golden"
)

func TestDownRemovesOnlyWhatTheStateNames(t *testing.T) {
	fake := newFakeSystem()
	dir, st := upFake(t, fake, 3)
	// Another testbed, a container network and a process of someone else's.
	fake.links["ctb000000-br"], fake.links["docker0"] = true, true
	fake.netns["ctb000000-n1"], fake.netns["blue"] = true, true
	fake.procs[5000] = &fakeProc{cmdline: "sshd: /usr/sbin/sshd -D\x00", alive: true}
	fake.calls = nil

	got, err := Down(context.Background(), fake, dir)
	require.NoError(t, err)
	assert.Equal(t, st, got)
	golden.Equal(t, "testdata/down-3-hosts.txt", fake.transcript(dir, st.Prefix))

	assert.Equal(t, map[string]bool{"lo": true, "eth0": true, "ctb000000-br": true, "docker0": true}, fake.links)
	assert.Equal(t, map[string]bool{"ctb000000-n1": true, "blue": true}, fake.netns)
	assert.Equal(t, []int{5000}, fake.alive())
	assert.True(t, fake.dirs["/opt/chaos"], "the other testbed's hosts mount over /opt/chaos")
	assert.NoDirExists(t, dir)
}

func TestDownRemovesTheMountPointsItMadeWhenNoOtherTestbedIsUp(t *testing.T) {
	fake := newFakeSystem()
	fake.dirs["/opt/chaos"] = true // someone else's
	dir, st := upFake(t, fake, 1)
	assert.Equal(t, []string{"/var/lib/chaos"}, st.MadeDirs)

	_, err := Down(context.Background(), fake, dir)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"/opt": true, "/opt/chaos": true, "/var": true, "/var/lib": true, "/tmp": true}, fake.dirs)
}

func TestDownAfterAnUpThatWasKilled(t *testing.T) {
	// Up planned three hosts and died after starting n1 and making n2's
	// namespace: the state file names all three, only some exist.
	fake := newFakeSystem()
	dir := t.TempDir()
	prefix := PrefixFor(dir)
	st := plan(prefix, netip.MustParsePrefix(DefaultSubnet), 3)
	st.MadeDirs = []string{"/opt/chaos"}
	fake.dirs["/opt/chaos"] = true
	d, err := fake.Start(hostLaunch(dir, prefix, st.Hosts[0], "/usr/sbin/sshd"))
	require.NoError(t, err)
	st.Hosts[0].Pid = d.Pid
	require.NoError(t, saveState(dir, st))
	for _, name := range []string{st.Bridge, prefix + "-n1"} {
		fake.links[name] = true
	}
	fake.netns[prefix+"-n1"], fake.netns[prefix+"-n2"] = true, true
	fake.calls = nil

	_, err = Down(context.Background(), fake, dir)
	require.NoError(t, err)
	golden.Equal(t, "testdata/down-partial.txt", fake.transcript(dir, prefix))
	assert.Equal(t, map[string]bool{"lo": true, "eth0": true}, fake.links)
	assert.Empty(t, fake.netns)
	assert.Empty(t, fake.alive())
	assert.False(t, fake.dirs["/opt/chaos"])
	assert.NoFileExists(t, filepath.Join(dir, StateFile))
	assert.DirExists(t, dir, "Up did not make the directory")
}

func TestDownStopsAHostWhosePidWasNotRecorded(t *testing.T) {
	// Up died between starting n2 and writing its pid down.
	fake := newFakeSystem()
	dir, st := upFake(t, fake, 2)
	st.Hosts[1].Pid = 0
	require.NoError(t, saveState(dir, st))
	fake.calls = nil

	_, err := Down(context.Background(), fake, dir)
	require.NoError(t, err)
	assert.Equal(t, "kill 1001\nkill 1002\n", grepLines(fake.transcript(dir, st.Prefix), "kill"))
	assert.Empty(t, fake.alive())
}

func TestDownSparesAProcessThatReusedAPid(t *testing.T) {
	fake := newFakeSystem()
	dir, st := upFake(t, fake, 1)
	fake.procs[st.Hosts[0].Pid] = &fakeProc{cmdline: "vim\x00notes.txt\x00", alive: true}
	fake.calls = nil

	_, err := Down(context.Background(), fake, dir)
	require.NoError(t, err)
	assert.Equal(t, []int{st.Hosts[0].Pid}, fake.alive())
	assert.Empty(t, grepLines(fake.transcript(dir, st.Prefix), "kill"))
}

func TestDownIsIdempotent(t *testing.T) {
	fake := newFakeSystem()
	dir, _ := upFake(t, fake, 2)
	_, err := Down(context.Background(), fake, dir)
	require.NoError(t, err)
	fake.calls = nil

	_, err = Down(context.Background(), fake, dir)
	assert.ErrorIs(t, err, ErrNotUp)
	assert.Empty(t, fake.calls)
}

func TestDownThatFailsCanBeRunAgain(t *testing.T) {
	fake := newFakeSystem()
	dir, st := upFake(t, fake, 2)
	fake.failOn = "ip netns del " + st.Prefix + "-n2"

	_, err := Down(context.Background(), fake, dir)
	require.ErrorContains(t, err, "ip netns del "+st.Prefix+"-n2")
	assert.FileExists(t, filepath.Join(dir, StateFile))
	assert.FileExists(t, filepath.Join(dir, KeyFile))

	fake.failOn = ""
	_, err = Down(context.Background(), fake, dir)
	require.NoError(t, err)
	assert.Empty(t, fake.netns)
	assert.Equal(t, map[string]bool{"lo": true, "eth0": true}, fake.links)
	assert.NoDirExists(t, dir)
}

func TestDownRemovesOnlyTheFilesUpWrote(t *testing.T) {
	fake := newFakeSystem()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "campaign.yaml"), []byte("tests: []\n"), 0o644))
	_, err := Up(context.Background(), fake, Config{Dir: dir, Hosts: 2, Rand: keyStream()})
	require.NoError(t, err)

	_, err = Down(context.Background(), fake, dir)
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "campaign.yaml", entries[0].Name())
}
