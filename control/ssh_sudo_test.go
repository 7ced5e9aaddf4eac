package control

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testAccount creates a local account with a home and a random password,
// and gives it the sudoers line (USER stands for its name; "" for none).
// Both go at the end of the test.
func testAccount(t *testing.T, sudoers string) (user, password string) {
	t.Helper()
	for _, cmd := range []string{"useradd", "userdel", "chpasswd", "sudo"} {
		if _, err := exec.LookPath(cmd); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing", cmd)
			}
			t.Skipf("%s is missing", cmd)
		}
	}
	user, password = "chaos"+randomHex(t, 3), randomHex(t, 8)
	out, err := exec.Command("useradd", "-m", "-s", "/bin/sh", user).CombinedOutput()
	require.NoError(t, err, "%s", out)
	sudoersFile := filepath.Join("/etc/sudoers.d", user)
	t.Cleanup(func() {
		_ = os.Remove(sudoersFile)
		removeAccount(t, user)
	})
	chpasswd := exec.Command("chpasswd")
	chpasswd.Stdin = strings.NewReader(user + ":" + password + "\n")
	out, err = chpasswd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	if sudoers != "" {
		line := strings.ReplaceAll(sudoers, "USER", user) + "\n"
		require.NoError(t, os.WriteFile(sudoersFile, []byte(line), 0o440))
	}
	return user, password
}

// removeAccount deletes a test account, killing its processes (sessions sshd
// left behind) first; userdel refuses while any is alive, so it is retried
// for up to 10s.
func removeAccount(t *testing.T, user string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		_ = exec.Command("pkill", "-KILL", "-u", user).Run()
		out, err := exec.Command("userdel", "-r", user).CombinedOutput()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("test account %s left behind: userdel: %v: %s", user, err, out)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

func TestSSHSudoWithPassword(t *testing.T) {
	srv := startSSHD(t)
	user, password := testAccount(t, "USER ALL=(ALL) ALL")
	cfg := srv.config(t, srv.addr)
	cfg.User, cfg.KeyFiles, cfg.Password = user, []string{}, password
	r := dial(t, srv.addr, cfg) // password login, then sudo with it

	require.Equal(t, "0\n", string(run(t, r, "id -u").Stdout), "commands run as root")
	require.Equal(t, 5, run(t, r, "exit 5").ExitCode, "a command's failure is its own")
	require.Empty(t, run(t, r, "cat").Stdout, "sudo's password is not left on the command's stdin")

	// A directory only root may write to.
	dir := t.TempDir()
	src, data := randomFile(t, dir, 1<<20)
	dst := filepath.Join(dir, "uploaded")
	require.NoError(t, r.Upload(context.Background(), src, dst, 0o600))
	got, err := os.ReadFile(dst)
	require.NoError(t, err)
	require.Equal(t, data, got, "the file, and not the password, is uploaded")
	info, err := os.Stat(dst)
	require.NoError(t, err)
	require.Equal(t, uint32(0), info.Sys().(*syscall.Stat_t).Uid, "written by root")

	back := filepath.Join(t.TempDir(), "back")
	require.NoError(t, r.Download(context.Background(), dst, back))
	got, err = os.ReadFile(back)
	require.NoError(t, err)
	require.Equal(t, data, got)
}

// TestSSHSudoTimeoutKillsTheCommand: a cancelled command running as root
// under sudo is killed, though the login user could not signal it.
func TestSSHSudoTimeoutKillsTheCommand(t *testing.T) {
	srv := startSSHD(t)
	user, password := testAccount(t, "USER ALL=(ALL) ALL")
	cfg := srv.config(t, srv.addr)
	cfg.User, cfg.Password = user, password // key login, sudo with the password
	r := dial(t, srv.addr, cfg)
	const marker = "654.321"
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := r.Run(ctx, "sleep "+marker+" & sleep "+marker+"; wait")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Eventually(t, func() bool { return len(procsWith(t, marker)) == 0 },
		5*time.Second, 20*time.Millisecond, "sudo, the shell and both sleeps are killed")
}

func TestSSHSudoWithoutPassword(t *testing.T) {
	srv := startSSHD(t)
	user, _ := testAccount(t, "USER ALL=(ALL) NOPASSWD: ALL")
	cfg := srv.config(t, srv.addr)
	cfg.User, cfg.Password = user, "set but not needed"
	r := dial(t, srv.addr, cfg)
	require.Equal(t, "0\n", string(run(t, r, "id -u").Stdout))
	require.Empty(t, run(t, r, "cat").Stdout, "no password is fed to sudo -n")
}

func TestSSHSudoRefusals(t *testing.T) {
	srv := startSSHD(t)
	ctx := context.Background()
	user, _ := testAccount(t, "USER ALL=(ALL) ALL")
	cfg := srv.config(t, srv.addr)
	cfg.User = user

	_, err := DialSSH(ctx, srv.addr, cfg)
	require.EqualError(t, err, srv.addr+": sudo needs the password of user "+user+": pass --password-file or set $CHAOS_SSH_PASSWORD, or allow NOPASSWD in sudoers")

	cfg.Password = "wrong"
	_, err = DialSSH(ctx, srv.addr, cfg)
	require.EqualError(t, err, srv.addr+": sudo rejected the password of user "+user+": check --password-file or $CHAOS_SSH_PASSWORD")

	cfg.KeyFiles = []string{}
	_, err = DialSSH(ctx, srv.addr, cfg)
	require.EqualError(t, err, srv.addr+": ssh: authentication failed for user "+user+
		" (tried password): check --username, --ssh-private-key and the password (--password-file or $CHAOS_SSH_PASSWORD)")

	outsider, outsiderPassword := testAccount(t, "")
	cfg.User, cfg.KeyFiles, cfg.Password = outsider, []string{srv.userKey}, outsiderPassword
	_, err = DialSSH(ctx, srv.addr, cfg)
	require.EqualError(t, err, srv.addr+": user "+outsider+" may not use sudo: add it to sudoers or use --username root")
}

// TestSSHSudoMissing: a host without sudo, for a user who is not root.
func TestSSHSudoMissing(t *testing.T) {
	bin := sharedDir(t)
	for _, cmd := range []string{"sh", "id"} {
		path, err := exec.LookPath(cmd)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(path, filepath.Join(bin, cmd)))
	}
	srv := startSSHD(t, "SetEnv PATH="+bin)
	user, _ := testAccount(t, "USER ALL=(ALL) NOPASSWD: ALL")
	cfg := srv.config(t, srv.addr)
	cfg.User = user
	_, err := DialSSH(context.Background(), srv.addr, cfg)
	require.EqualError(t, err, srv.addr+": sudo is not installed and user "+user+" is not root: install sudo or use --username root")
}
