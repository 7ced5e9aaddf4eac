package control

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSSHSessionsShareOneBoundedConnection: many concurrent commands use
// one connection and never more than MaxSessions sessions at once.
func TestSSHSessionsShareOneBoundedConnection(t *testing.T) {
	srv := startSSHD(t)
	px := startProxy(t, srv.addr)
	cfg := srv.config(t, px.addr())
	cfg.MaxSessions = 3
	r := dial(t, px.addr(), cfg)

	// Each command counts the commands running with it, then waits at a
	// barrier, which the test lifts once it has seen MaxSessions commands
	// running at once; the commands after those pass it. How long a session
	// takes to start (the login shell reads root's startup files) thus
	// cannot decide whether the commands overlap.
	running := t.TempDir()
	gate := newShellBarrier(t)
	cmd := fmt.Sprintf("touch %[1]s/$$ && ls %[1]s | wc -l && %[2]s && rm %[1]s/$$", running, gate.wait())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	results := make(chan Result, 24)
	errs := make(chan error, 24)
	for range 24 {
		wg.Go(func() {
			res, err := r.Run(ctx, cmd)
			results <- res
			errs <- err
		})
	}
	require.Eventually(t, func() bool {
		entries, err := os.ReadDir(running)
		return err == nil && len(entries) >= cfg.MaxSessions
	}, time.Minute, 10*time.Millisecond, "MaxSessions commands run at once")
	gate.lift(t)
	wg.Wait()
	close(results)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	most := 0
	for res := range results {
		require.Equal(t, 0, res.ExitCode, "%s", res.Stderr)
		n, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
		require.NoError(t, err)
		most = max(most, n)
	}
	require.LessOrEqual(t, most, 3, "never more than MaxSessions commands at once")
	require.GreaterOrEqual(t, most, 2, "commands do run concurrently")
	require.Equal(t, int32(1), px.accepted.Load(), "one connection for all of them")
}

func TestSSHWaitingForASessionRespectsTheContext(t *testing.T) {
	srv := startSSHD(t)
	cfg := srv.config(t, srv.addr)
	cfg.MaxSessions = 1
	r := dial(t, srv.addr, cfg)
	marker := filepath.Join(t.TempDir(), "running")
	gate := newShellBarrier(t)
	holder := make(chan error, 1)
	go func() {
		_, err := r.Run(context.Background(), "touch "+marker+"; "+gate.wait())
		holder <- err
	}()
	require.Eventually(t, func() bool { return fileExists(marker) }, 10*time.Second, 10*time.Millisecond,
		"the first command holds the only session")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := r.Run(ctx, "true")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.EqualError(t, err, srv.addr+": ssh: waiting for a free session: context deadline exceeded")
	gate.lift(t)
	require.NoError(t, <-holder)
	require.Equal(t, 0, run(t, r, "true").ExitCode, "the session is free again")
}

func TestSSHUploadDownload20MB(t *testing.T) {
	srv := startSSHD(t)
	r := dial(t, srv.addr, srv.config(t, srv.addr))
	ctx := context.Background()
	dir := t.TempDir()
	src, data := randomFile(t, dir, 20<<20)

	dst := filepath.Join(dir, "remote", "chaos")
	require.NoError(t, os.Mkdir(filepath.Dir(dst), 0o755))
	require.NoError(t, os.WriteFile(dst, []byte("old version"), 0o644))
	require.NoError(t, r.Upload(ctx, src, dst, 0o750))
	got, err := os.ReadFile(dst) // sshd runs on this machine
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got), "uploaded content")
	info, err := os.Stat(dst)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o750), info.Mode().Perm())
	require.NoFileExists(t, dst+".tmp")

	back := filepath.Join(dir, "back")
	require.NoError(t, r.Download(ctx, dst, back))
	got, err = os.ReadFile(back)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got), "downloaded content")
	requireNoTemp(t, back)
}

func TestSSHTransferErrorsAreOneLineNamingTheHost(t *testing.T) {
	srv := startSSHD(t)
	r := dial(t, srv.addr, srv.config(t, srv.addr))
	ctx := context.Background()
	dir := t.TempDir()
	src, _ := randomFile(t, dir, 1<<20)

	missingDir := filepath.Join(dir, "no", "such", "f")
	err := r.Upload(ctx, src, missingDir, 0o644)
	require.ErrorContains(t, err, srv.addr+": upload "+src+" to "+missingDir+": ")
	require.ErrorContains(t, err, missingDir+".tmp", "the shell's message names the file")
	require.NotContains(t, err.Error(), "\n")

	full := filepath.Join(dir, "full")
	requireDevFull(t)
	require.NoError(t, os.Symlink("/dev/full", full+".tmp")) // writes fail with ENOSPC
	err = r.Upload(ctx, src, full, 0o644)
	require.ErrorContains(t, err, srv.addr+": upload "+src+" to "+full+": remote disk full (")
	require.NoFileExists(t, full)
	_, err = os.Lstat(full + ".tmp")
	require.ErrorIs(t, err, os.ErrNotExist, "the temporary file is removed")

	missing := filepath.Join(dir, "missing")
	back := filepath.Join(dir, "back")
	err = r.Download(ctx, missing, back)
	require.EqualError(t, err, srv.addr+": download "+missing+" to "+back+": cat: "+missing+": No such file or directory")
	require.NoFileExists(t, back)
	requireNoTemp(t, back)
}

// TestSSHDownloadToAFullLocalDisk: a local write failure stops the remote
// command instead of hanging on it. The local file fails as a full disk
// does (a download's temporary file has a new name each time and links are
// never followed, so /dev/full cannot stand in for it).
func TestSSHDownloadToAFullLocalDisk(t *testing.T) {
	srv := startSSHD(t)
	r := dial(t, srv.addr, srv.config(t, srv.addr)).(*sshRemote)
	dir := t.TempDir()
	src, _ := randomFile(t, dir, 8<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	full := writerFunc(func([]byte) (int, error) {
		return 0, &os.PathError{Op: "write", Path: "back", Err: syscall.ENOSPC}
	})
	_, err := r.exec(ctx, command{what: "download " + src + " to back", line: wrapCommand(r.priv, "cat -- "+ShellQuote(src)), stdout: full})
	require.ErrorContains(t, err, srv.addr+": download "+src+" to back: disk full: ")
	require.NoError(t, ctx.Err(), "the download ended by itself")
}

// writerFunc is a function as an io.Writer.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestSSHHostKeyChecking(t *testing.T) {
	srv := startSSHD(t)
	ctx := context.Background()
	cfg := srv.config(t, srv.addr)
	host, port, _ := net.SplitHostPort(srv.addr)

	// The server has an ECDSA and an ed25519 key; known_hosts only the
	// ed25519 one, which must be the one negotiated.
	r, err := DialSSH(ctx, srv.addr, cfg)
	require.NoError(t, err)
	r.Close()

	_, other := newKey(t, t.TempDir(), "other")
	cfg.KnownHosts = writeFile(t, t.TempDir(), "known_hosts",
		"# line 1\n"+knownHostsLine("n1:22", srv.hostKey)+knownHostsLine(srv.addr, other.PublicKey()))
	_, err = DialSSH(ctx, srv.addr, cfg)
	require.EqualError(t, err, srv.addr+": ssh: handshake failed: host key mismatch ("+cfg.KnownHosts+" line 3)")

	cfg.KnownHosts = writeFile(t, t.TempDir(), "known_hosts", knownHostsLine("n1:22", srv.hostKey))
	_, err = DialSSH(ctx, srv.addr, cfg)
	require.EqualError(t, err, srv.addr+": ssh: host key not in "+cfg.KnownHosts+
		"; add it (ssh-keyscan -p "+port+" "+host+" >> "+cfg.KnownHosts+") or pass --strict-host-key-checking=false")

	// The hint works as written.
	scan, err := exec.Command("ssh-keyscan", "-p", port, host).Output()
	require.NoError(t, err)
	f, err := os.OpenFile(cfg.KnownHosts, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(scan)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	r, err = DialSSH(ctx, srv.addr, cfg)
	require.NoError(t, err)
	r.Close()

	cfg.KnownHosts = filepath.Join(t.TempDir(), "nonexistent")
	cfg.InsecureIgnoreHostKey = true
	r, err = DialSSH(ctx, srv.addr, cfg)
	require.NoError(t, err, "--strict-host-key-checking=false accepts any key")
	r.Close()
}

func TestSSHWrongKeyIsRefused(t *testing.T) {
	srv := startSSHD(t)
	cfg := srv.config(t, srv.addr)
	wrong, _ := newKey(t, t.TempDir(), "wrong")
	cfg.KeyFiles = []string{wrong}
	_, err := DialSSH(context.Background(), srv.addr, cfg)
	require.EqualError(t, err, srv.addr+": ssh: authentication failed for user root (tried keys "+wrong+
		"): check --username, --ssh-private-key and the password (--password-file or $CHAOS_SSH_PASSWORD)")
}

func TestSSHAgentKeyLogsIn(t *testing.T) {
	srv := startSSHD(t)
	srv.authorize(t, startAgent(t).PublicKey())
	cfg := srv.config(t, srv.addr)
	cfg.KeyFiles = []string{}
	cfg.Agent = true
	r := dial(t, srv.addr, cfg)
	require.Equal(t, "0\n", string(run(t, r, "id -u").Stdout))
}

func TestSSHUnreachableHost(t *testing.T) {
	addr := freeAddr(t, "127.0.0.51")
	cfg := SSHConfig{Password: "x", InsecureIgnoreHostKey: true}
	_, err := DialSSH(context.Background(), addr, cfg)
	require.EqualError(t, err, addr+": ssh: dial tcp "+addr+": connect: connection refused")

	// A server that accepts and never speaks: the handshake is bounded.
	ln, err := net.Listen("tcp", "127.0.0.51:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	cfg.DialTimeout = 300 * time.Millisecond
	start := time.Now()
	_, err = DialSSH(context.Background(), ln.Addr().String(), cfg)
	require.EqualError(t, err, ln.Addr().String()+": ssh: handshake with "+ln.Addr().String()+": context deadline exceeded")
	require.Less(t, time.Since(start), 5*time.Second)
}

func TestSSHReconnectsAfterTheConnectionIsCut(t *testing.T) {
	srv := startSSHD(t)
	px := startProxy(t, srv.addr)
	r := dial(t, px.addr(), srv.config(t, px.addr()))
	require.Equal(t, 0, run(t, r, "true").ExitCode)

	px.cut()
	res := run(t, r, "echo again")
	require.Equal(t, "again\n", string(res.Stdout))
	require.Equal(t, int32(2), px.accepted.Load(), "one reconnection")
}

// TestSSHReconnectsWhenTheConnectionHangs: a connection that stops
// answering is found by the keepalive, dropped and replaced.
func TestSSHReconnectsWhenTheConnectionHangs(t *testing.T) {
	srv := startSSHD(t)
	px := startProxy(t, srv.addr)
	cfg := srv.config(t, px.addr())
	cfg.KeepAlive = 200 * time.Millisecond
	r := dial(t, px.addr(), cfg)
	require.Equal(t, 0, run(t, r, "true").ExitCode)

	px.freeze()
	start := time.Now()
	res := run(t, r, "echo again")
	require.Equal(t, "again\n", string(res.Stdout))
	require.Less(t, time.Since(start), 10*time.Second)
	require.Equal(t, int32(2), px.accepted.Load(), "one reconnection")
}

// TestSSHCommandIsNeverRunTwice: a connection lost while a command runs is
// reported, not retried: the command may have had effects.
func TestSSHCommandIsNeverRunTwice(t *testing.T) {
	srv := startSSHD(t)
	px := startProxy(t, srv.addr)
	r := dial(t, px.addr(), srv.config(t, px.addr()))
	marks := filepath.Join(t.TempDir(), "marks")
	// The command is still running when the connection is cut, however
	// long that takes to happen; the barrier is lifted when the test ends.
	gate := newShellBarrier(t)

	done := make(chan error, 1)
	go func() {
		_, err := r.Run(context.Background(), "echo ran >> "+marks+"; "+gate.wait())
		done <- err
	}()
	// Wait for the command's output, not just the file: the shell creates
	// the file for the redirection before echo writes into it.
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(marks)
		return err == nil && string(b) == "ran\n"
	}, 10*time.Second, 10*time.Millisecond)
	px.cut()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its connection was cut")
	}
	require.ErrorIs(t, err, ErrConnectionLost)
	require.True(t, strings.HasPrefix(err.Error(), px.addr()+": `echo ran >> "), err.Error())
	got, rerr := os.ReadFile(marks)
	require.NoError(t, rerr)
	require.Equal(t, "ran\n", string(got), "the command was sent once")

	require.Equal(t, 0, run(t, r, "true").ExitCode, "the next command reconnects")
}

func TestSSHRunTimeoutKillsTheRemoteCommand(t *testing.T) {
	srv := startSSHD(t)
	r := dial(t, srv.addr, srv.config(t, srv.addr))
	const marker = "765.4321"
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := r.Run(ctx, "sleep "+marker+" & sleep "+marker+"; wait")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.EqualError(t, err, srv.addr+": `sleep "+marker+" & sleep "+marker+"; wait`: context deadline exceeded")
	require.Eventually(t, func() bool { return len(procsWith(t, marker)) == 0 },
		5*time.Second, 20*time.Millisecond, "the remote shell and both sleeps are killed")
	require.Equal(t, 0, run(t, r, "true").ExitCode, "the connection is still good")
}

func TestSSHClosedRemoteRefusesWork(t *testing.T) {
	srv := startSSHD(t)
	r := dial(t, srv.addr, srv.config(t, srv.addr))
	require.NoError(t, r.Close())
	_, err := r.Run(context.Background(), "true")
	require.EqualError(t, err, srv.addr+": ssh: connection used after Close")
}
