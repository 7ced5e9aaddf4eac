package control

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
)

const sshdPath = "/usr/sbin/sshd"

// sshServer is a real OpenSSH sshd on a loopback address, for the tests of
// the SSH Remote. It runs as root, so every account of this machine can log
// in, with the key in userKey (authorized for all of them) or a password.
type sshServer struct {
	addr     string // 127.0.0.51:port
	dir      string
	userKey  string // private key file authorized for every user
	hostKey  ssh.PublicKey
	authKeys string // the authorized_keys file
	log      *syncBuffer
}

// requireSSHD skips the test when no sshd can run here (not root, no
// sshd), installing openssh-server first if it can. Under CI it fails
// instead: CI must run these tests.
func requireSSHD(t *testing.T) {
	t.Helper()
	why := ""
	switch {
	case os.Geteuid() != 0:
		why = "the sshd tests need root"
	case !fileExists(sshdPath) && !aptInstall(t, "openssh-server") && !fileExists(sshdPath):
		why = sshdPath + " is missing and openssh-server could not be installed"
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// aptInstall installs a Debian package, within two minutes.
func aptInstall(t *testing.T, pkg string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := exec.LookPath("apt-get"); err != nil {
		return false
	}
	if out, err := exec.CommandContext(ctx, "apt-get", "update", "-qq").CombinedOutput(); err != nil {
		t.Logf("apt-get update: %v\n%s", err, out)
		return false
	}
	cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "-qq", pkg)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("apt-get install %s: %v\n%s", pkg, err, out)
	}
	return err == nil
}

// startSSHD starts an sshd with extra sshd_config lines, stopped at the
// end of the test.
func startSSHD(t *testing.T, extraConfig ...string) *sshServer {
	t.Helper()
	requireSSHD(t)
	require.NoError(t, os.MkdirAll("/run/sshd", 0o755), "sshd's privilege separation directory")
	dir := t.TempDir()
	s := &sshServer{addr: freeAddr(t, "127.0.0.51"), dir: dir, log: &syncBuffer{}}
	var hostSigner ssh.Signer
	hostEd, hostSigner := newKey(t, dir, "host_ed25519")
	s.hostKey = hostSigner.PublicKey()
	hostECDSA := writeECDSAKey(t, dir, "host_ecdsa")
	var user ssh.Signer
	s.userKey, user = newKey(t, dir, "id_ed25519")
	// sshd reads authorized_keys as the user logging in.
	s.authKeys = writeFile(t, sharedDir(t), "authorized_keys", string(ssh.MarshalAuthorizedKey(user.PublicKey())))
	require.NoError(t, os.Chmod(s.authKeys, 0o644))

	host, port, _ := net.SplitHostPort(s.addr)
	config := strings.Join(append([]string{
		"ListenAddress " + host + ":" + port,
		"HostKey " + hostEd,
		"HostKey " + hostECDSA,
		"PidFile " + filepath.Join(dir, "sshd.pid"),
		"AuthorizedKeysFile " + s.authKeys,
		"UsePAM no",
		"StrictModes no",
		"PermitRootLogin yes",
		"PasswordAuthentication yes",
		"KbdInteractiveAuthentication no",
		"MaxSessions 10",
		"MaxStartups 100",
		"LogLevel VERBOSE",
	}, extraConfig...), "\n") + "\n"
	cfgFile := writeFile(t, dir, "sshd_config", config)

	// sshd and its per-connection processes share a process group, killed
	// as one at the end; sessions' own processes have sessions of their
	// own, and are not waited for.
	cmd := exec.Command(sshdPath, "-D", "-e", "-f", cfgFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.WaitDelay = time.Second
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("sshd log:\n%s", s.log.String())
		}
	})
	s.waitListening(t, exited)
	return s
}

// waitListening polls until sshd accepts connections, for up to 10s.
func (s *sshServer) waitListening(t *testing.T, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			conn.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("sshd exited: %s", s.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd does not listen on %s after 10s: %v\n%s", s.addr, err, s.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sharedDir is a temporary directory every user may read, unlike
// t.TempDir's, removed at the end of the test.
func sharedDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "chaos-control-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	return dir
}

// authorize adds a public key to the authorized keys of every user.
func (s *sshServer) authorize(t *testing.T, key ssh.PublicKey) {
	f, err := os.OpenFile(s.authKeys, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Write(ssh.MarshalAuthorizedKey(key))
	require.NoError(t, err)
}

// knownHosts writes a known_hosts file with the server's ed25519 key for
// addr (the server's own address or a proxy's), after the given lines.
func (s *sshServer) knownHosts(t *testing.T, addr string, before ...string) string {
	return writeFile(t, t.TempDir(), "known_hosts", strings.Join(before, "")+knownHostsLine(addr, s.hostKey))
}

// config is an SSHConfig that logs in as root with the user key, checks
// the host key for addr, and retries quickly.
func (s *sshServer) config(t *testing.T, addr string) SSHConfig {
	return SSHConfig{
		KeyFiles:    []string{s.userKey},
		KnownHosts:  s.knownHosts(t, addr),
		DialTimeout: 5 * time.Second,
		Backoff:     Backoff{Initial: 10 * time.Millisecond, Max: 200 * time.Millisecond, Attempts: 6},
	}
}

// freeAddr is host:port for a port that was free a moment ago.
func freeAddr(t *testing.T, host string) string {
	ln, err := net.Listen("tcp", host+":0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// writeECDSAKey writes a new P-256 private key in OpenSSH format.
func writeECDSAKey(t *testing.T, dir, name string) string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	block, err := ssh.MarshalPrivateKey(key, "")
	require.NoError(t, err)
	return writeFile(t, dir, name, string(pem.EncodeToMemory(block)))
}

// syncBuffer is a bytes.Buffer safe for a process's output and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// dial connects to addr with cfg, failing the test on error.
func dial(t *testing.T, addr string, cfg SSHConfig) Remote {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := DialSSH(ctx, addr, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

// run runs cmd on r within 30s, failing the test on a transport error.
func run(t *testing.T, r Remote, cmd string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := r.Run(ctx, cmd)
	require.NoError(t, err)
	return res
}
