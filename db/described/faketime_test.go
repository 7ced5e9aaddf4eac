package described

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/db"
	"chaos/internal/fakeclock"
)

// The program a described node runs, for the faketime strategy: the
// binary key, or start's first word after an exec; a shell line that
// starts with anything else asks for the binary key.
func TestFakeClockProgram(t *testing.T) {
	n := db.Node{Name: "n1", Addr: "127.0.0.1"}
	for start, want := range map[string]string{
		"start: mydb --id {id} --peers {members} --data {data_dir}":                     "mydb",
		"start: exec {bin_dir}/mydb --id {id} --peers {members}":                        "/opt/chaos/mydb",
		"start: cd {data_dir} && exec java -jar x.jar {members}\nbinary: /usr/bin/java": "/usr/bin/java",
	} {
		text := strings.Replace(minimal, "start: mydb --id {id} --peers {members} --data {data_dir}", start, 1)
		desc, err := Load(writeFile(t, "mydb.yaml", text))
		require.NoError(t, err, start)
		s, err := New(desc, db.Config{Nodes: []db.Node{n}, Layout: db.DefaultLayout(), Binary: "/bin/true"})
		require.NoError(t, err)
		got, err := s.(*System).program(n)
		require.NoError(t, err, start)
		assert.Equal(t, want, got, start)
	}
	for _, start := range []string{"start: cd {data_dir} && exec mydb {members}", "start: FOO=1 mydb {members}", "start: sh -c mydb {members}"} {
		text := strings.Replace(minimal, "start: mydb --id {id} --peers {members} --data {data_dir}", start, 1)
		desc, err := Load(writeFile(t, "mydb.yaml", text))
		require.NoError(t, err, start)
		s, err := New(desc, db.Config{Nodes: []db.Node{n}, Layout: db.DefaultLayout(), Binary: "/bin/true"})
		require.NoError(t, err)
		_, err = s.(*System).program(n)
		assert.ErrorContains(t, err, "name that program with the description's binary key", start)
	}
}

// An uploaded program is inspected on this machine; the answer depends
// on Config.Faketime, and Start passes the control file on to the node.
func TestFakeClockOfAnUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real process")
	}
	dir := t.TempDir()
	sh, err := filepath.EvalSymlinks("/bin/sh")
	require.NoError(t, err)
	text := strings.Replace(minimal, "start: mydb --id {id} --peers {members} --data {data_dir}",
		"upload: [{src: "+sh+", dest: \"{bin_dir}/mydb\"}]\nstart: exec {bin_dir}/mydb -c 'env > \"$0.env\"; exec sleep 30' {data_dir}", 1)
	desc, err := Load(writeFile(t, "mydb.yaml", text))
	require.NoError(t, err)
	n := db.Node{Name: "n1", Addr: "127.0.0.1"}
	cfg := db.Config{Nodes: []db.Node{n}, Layout: db.Layout{BinDir: filepath.Join(dir, "bin"), DataDir: dir}, Binary: "/bin/true"}
	r := control.NewLocal("n1")
	ctx := context.Background()
	plain, err := New(desc, cfg)
	require.NoError(t, err)
	_, err = plain.(db.FakeClocker).FakeClock(ctx, r, n)
	assert.ErrorIs(t, err, db.ErrNoFakeClock)

	cfg.Faketime = true
	s, err := New(desc, cfg)
	require.NoError(t, err)
	fc, err := s.(db.FakeClocker).FakeClock(ctx, r, n)
	if err != nil && strings.Contains(err.Error(), "libfaketime is not installed") {
		t.Skip(err)
	}
	require.NoError(t, err)
	assert.Equal(t, fakeclock.Libfaketime, fc.Mechanism)
	assert.Equal(t, filepath.Join(dir, "mydb", "n1", "faketimerc"), fc.File)
	require.NoError(t, s.Install(ctx, r, n))
	require.NoError(t, s.Start(ctx, r, n))
	t.Cleanup(func() { _ = s.Stop(context.Background(), r, n) })
	envFile := filepath.Join(dir, "mydb", "n1", "data.env")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(envFile)
		return strings.Contains(string(b), "FAKETIME_NO_CACHE=1")
	}, 10*time.Second, 20*time.Millisecond)
	b, err := os.ReadFile(envFile)
	require.NoError(t, err)
	assert.Contains(t, string(b), "LD_PRELOAD="+fc.Lib+"\n")
	assert.Contains(t, string(b), "FAKETIME_TIMESTAMP_FILE="+fc.File+"\n")
}
