package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	"chaos/control/sshtest"
	"chaos/testrun/runrecord"
)

// operatorHome makes a home directory for the operator, with an empty
// ~/.ssh/known_hosts, no default key and no SSH agent, and returns its
// known_hosts file.
func operatorHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(home, ".ssh"), 0o700))
	knownHosts := filepath.Join(home, ".ssh", "known_hosts")
	require.NoError(t, os.WriteFile(knownHosts, nil, 0o600))
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", "")
	return knownHosts
}

// A test.json planted in the store names a host that logs every password
// and keyboard-interactive answer offered to it. Whatever the record says
// of host keys (nothing; checking off; a planted known_hosts and key that
// vouch for the host), chaos heal with the operator's password, from the
// environment or a file, sends it nothing and exits 255 naming the host.
func TestHealSendsNoPasswordToAPlantedHost(t *testing.T) {
	operatorHome(t)
	pwFile := filepath.Join(t.TempDir(), "pw")
	require.NoError(t, os.WriteFile(pwFile, []byte("hunter2\n"), 0o600))
	ways := map[string]struct {
		env  string
		args []string
	}{
		"password in the environment":  {env: "hunter2"},
		"password from a file":         {args: []string{"--password-file", pwFile}},
		"checking off by the operator": {env: "hunter2", args: []string{"--strict-host-key-checking=false"}},
	}
	servers := map[string]*sshtest.Server{
		"a password server":             sshtest.Start(t, "hunter2"),
		"a keyboard-interactive server": sshtest.StartInteractive(t),
	}
	for sname, srv := range servers {
		for rname, ssh := range plantedRecords(t, srv) {
			store := writeRun(t, runrecord.TestRecord{Name: "etcd-register-pause", Started: "2026-01-02T03:04:05Z", DB: "etcd",
				Nodes: []string{srv.Addr}, SSH: ssh})
			for wname, way := range ways {
				what := sname + ", " + rname + ", " + wname
				t.Setenv("CHAOS_SSH_PASSWORD", way.env)
				args := append([]string{"heal", "--store", store, "--timeout", "20s"}, way.args...)
				code, out, errOut := execute(t, args...)
				assert.Equal(t, exitSetup, code, "%s: %s", what, errOut)
				assert.Contains(t, out, "hosts: n1 "+srv.Addr+"\n", "%s: the host is named before it is dialed", what)
				assert.Contains(t, errOut, "chaos: heal n1 (127.0.0.1): "+srv.Addr+": ssh: host key not", what)
				assert.Empty(t, srv.Offered(), "%s: the planted host was offered credentials", what)
			}
		}
	}
}

// plantedRecords are the SSH records a planter might write for srv: none,
// none of the host key fields, checking off, and a known_hosts and key of
// the planter's that vouch for srv.
func plantedRecords(t *testing.T, srv *sshtest.Server) map[string]*runrecord.SSHRecord {
	planted := t.TempDir()
	knownHosts := filepath.Join(planted, "known_hosts")
	require.NoError(t, os.WriteFile(knownHosts, []byte(srv.KnownHostsLine()+"\n"), 0o644))
	return map[string]*runrecord.SSHRecord{
		"no ssh record":       nil,
		"no host key fields":  {User: "root", Port: 22},
		"checking off":        {User: "root", Port: 22, StrictHostKeyChecking: false},
		"planted known_hosts": {User: "root", Port: 22, StrictHostKeyChecking: true, KnownHosts: knownHosts, PrivateKeys: []string{writeKey(t, planted)}},
	}
}

// writeKey writes a fresh private key file in dir and returns its path.
func writeKey(t *testing.T, dir string) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(priv, "planted")
	require.NoError(t, err)
	path := filepath.Join(dir, "id_ed25519")
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(block), 0o600))
	return path
}

// A store another user could have written is refused in one line, exit
// 254, before anything is dialed; under sudo, the invoking user's store is
// trusted.
func TestHealRefusesAStoreOthersCouldWrite(t *testing.T) {
	operatorHome(t)
	rec := runrecord.TestRecord{Name: "etcd-register-pause", Started: "2026-01-02T03:04:05Z", DB: "etcd",
		Nodes: []string{"127.0.0.1:1"}, SSH: &runrecord.SSHRecord{User: "root", Port: 22, StrictHostKeyChecking: true}}
	runDir := func(store string) string { return filepath.Join(store, rec.Name, "20260102T030405.678Z") }
	var storeArg *string // the --store heal is given: the store, unless a case says otherwise
	cases := []struct {
		name  string
		plant func(t *testing.T, store string) string // returns the path the error names
	}{
		{"store owned by another user", func(t *testing.T, store string) string {
			require.NoError(t, os.Chown(store, 65534, 65534))
			return store
		}},
		{"test.json writable by others", func(t *testing.T, store string) string {
			p := filepath.Join(runDir(store), "test.json")
			require.NoError(t, os.Chmod(p, 0o666))
			return p
		}},
		{"latest's target owned by another user", func(t *testing.T, store string) string {
			require.NoError(t, os.Chown(runDir(store), 65534, 65534))
			return runDir(store)
		}},
		{"latest link owned by another user", func(t *testing.T, store string) string {
			link := filepath.Join(store, "latest")
			require.NoError(t, os.Lchown(link, 65534, 65534))
			return link
		}},
		{"latest pointing at another user's run", func(t *testing.T, store string) string {
			other := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(other, "test.json"), []byte(`{"db":"etcd","nodes":["127.0.0.1:1"]}`), 0o644))
			require.NoError(t, os.Chown(other, 65534, 65534))
			link := filepath.Join(store, "latest")
			require.NoError(t, os.Remove(link))
			require.NoError(t, os.Symlink(other, link))
			return other
		}},
		{"the store reached through another user's link", func(t *testing.T, store string) string {
			link := filepath.Join(t.TempDir(), "store")
			require.NoError(t, os.Symlink(store, link))
			require.NoError(t, os.Lchown(link, 65534, 65534))
			*storeArg = link
			return link
		}},
		{"the run writable by a group not its owner's own", func(t *testing.T, store string) string {
			require.NoError(t, os.Chown(runDir(store), 0, 65534))
			require.NoError(t, os.Chmod(runDir(store), 0o775))
			return runDir(store)
		}},
		{"a parent writable by others", func(t *testing.T, store string) string {
			parent := filepath.Dir(store)
			require.NoError(t, os.Chmod(parent, 0o777))
			t.Cleanup(func() { os.Chmod(parent, 0o700) })
			return parent
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := writeRun(t, rec)
			arg := store
			storeArg = &arg
			named := c.plant(t, store)
			code, out, errOut := execute(t, "heal", "--store", arg, "--timeout", "10s")
			assert.Equal(t, exitUsage, code, errOut)
			assert.Empty(t, out, "nothing is healed or dialed")
			assert.Contains(t, errOut, "not healing the run in the store: "+named+" ")
			assert.NotContains(t, strings.TrimSpace(errOut), "\n")
		})
	}

	t.Run("writable by the owner's private group", func(t *testing.T) {
		// Debian's umask 002 makes a user's directories writable by the
		// group of their own name, which only they are in.
		store := writeRun(t, rec)
		require.NoError(t, os.Chown(runDir(store), 0, 0))
		require.NoError(t, os.Chmod(runDir(store), 0o775))
		t.Setenv("CHAOS_SSH_PASSWORD", "x")
		code, out, errOut := execute(t, "heal", "--store", store, "--timeout", "10s")
		assert.Equal(t, exitSetup, code, "the store is trusted and the host unreachable: %s", errOut)
		assert.Contains(t, out, "healing run etcd-register-pause/")
	})

	t.Run("latest leads to no test.json", func(t *testing.T) {
		store := writeRun(t, rec)
		require.NoError(t, os.Remove(filepath.Join(runDir(store), "test.json")))
		code, out, errOut := execute(t, "heal", "--store", store, "--timeout", "10s")
		assert.Equal(t, exitUsage, code, errOut)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "no run to heal: "+filepath.Join(store, "latest", "test.json")+" does not exist")
	})

	t.Run("sudo", func(t *testing.T) {
		store := writeRun(t, rec)
		require.NoError(t, os.Chown(store, 65534, 65534))
		t.Setenv("SUDO_UID", "65534")
		t.Setenv("CHAOS_SSH_PASSWORD", "x")
		code, out, errOut := execute(t, "heal", "--store", store, "--timeout", "10s")
		assert.Equal(t, exitSetup, code, "the store is trusted and the host unreachable: %s", errOut)
		assert.Contains(t, out, "healing run etcd-register-pause/")
	})
}

// The same store with the host's key in the operator's known_hosts: the
// password goes, so the test above can tell a withheld password from one
// never asked for.
func TestHealSendsThePasswordToAVerifiedHost(t *testing.T) {
	knownHosts := operatorHome(t)
	srv := sshtest.Start(t, "hunter2")
	require.NoError(t, os.WriteFile(knownHosts, []byte(srv.KnownHostsLine()+"\n"), 0o600))
	store := writeRun(t, runrecord.TestRecord{Name: "etcd-register-pause", Started: "2026-01-02T03:04:05Z", DB: "etcd",
		Nodes: []string{srv.Addr}, SSH: &runrecord.SSHRecord{User: "root", Port: 22}})
	t.Setenv("CHAOS_SSH_PASSWORD", "hunter2")
	_, out, errOut := execute(t, "heal", "--store", store, "--timeout", "20s")
	assert.Contains(t, out, "hosts: n1 "+srv.Addr+"\n")
	assert.NotContains(t, errOut, "host key not")
	assert.Equal(t, []string{"password hunter2"}, srv.Offered())
}
