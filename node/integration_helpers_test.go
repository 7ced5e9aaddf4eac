//go:build linux

package node_test

import (
	"bytes"
	"chaos/node/nodeapi"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The integration tests run real `chaos node` processes on loopback
// addresses 127.0.0.<N>. Linux routes all of 127/8 to lo, so every node gets
// its own address with the same two fixed ports (chaos-node derives a peer's
// client address from its peer host and the local client port). Each test
// uses its own block of addresses so tests never share a port.
const (
	clientPort = "7200"
	peerPort   = "7201"
)

// fastTimings are the raft timings every integration cluster runs with.
var fastTimings = []string{"--heartbeat-interval", "20ms", "--election-timeout", "200ms"}

// The chaos binary is built once per test binary run, by the first
// integration test that needs it (so -short and -run of other tests pay
// nothing), into binDir, which TestMain removes after the run.
var (
	binDir    string
	buildOnce sync.Once
	chaosBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// needBinary skips the test under -short and otherwise returns the path of
// the chaos binary, building it from the module root on first use.
func needBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts real chaos node processes")
	}
	buildOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			buildErr = fmt.Errorf("go env GOMOD: %w", err)
			return
		}
		gomod := strings.TrimSpace(string(out))
		if gomod == "" || gomod == os.DevNull {
			buildErr = fmt.Errorf("go env GOMOD: not inside a module")
			return
		}
		if binDir, err = os.MkdirTemp("", "chaos-integration-"); err != nil {
			buildErr = err
			return
		}
		bin := filepath.Join(binDir, "chaos")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/chaos")
		cmd.Dir = filepath.Dir(gomod)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/chaos: %v\n%s", err, out)
			return
		}
		chaosBin = bin
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return chaosBin
}

// loopback returns the address 127.0.0.<n>.
func loopback(n int) string { return fmt.Sprintf("127.0.0.%d", n) }

// proc is one chaos node process, restartable with the same arguments.
type proc struct {
	t       *testing.T
	name    string
	ip      string
	dataDir string
	args    []string // argv after the binary
	logPath string   // stderr and stdout of every incarnation, appended

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed when the current incarnation exited
	exitErr error
	starts  int
}

func (p *proc) clientAddr() string { return net.JoinHostPort(p.ip, clientPort) }
func (p *proc) peerAddr() string   { return net.JoinHostPort(p.ip, peerPort) }
func (p *proc) url(path string) string {
	return "http://" + p.clientAddr() + path
}

// newProc prepares a node process; dir must be a directory that outlives it
// (a t.TempDir created before this call, so its removal runs after the
// process is killed). The Cleanup registered here kills the process and, if
// the test failed, prints its stderr.
func newProc(t *testing.T, dir, name, ip string, args []string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, ip: ip, dataDir: filepath.Join(dir, name),
		args: args, logPath: filepath.Join(dir, name+".stderr")}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			b, err := os.ReadFile(p.logPath)
			if err != nil {
				t.Logf("%s: no stderr: %v", name, err)
				return
			}
			t.Logf("---- %s stderr (%s) ----\n%s", name, p.logPath, b)
		}
	})
	return p
}

// start starts a new incarnation; the previous one must have exited.
func (p *proc) start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		select {
		case <-p.done:
		default:
			p.t.Fatalf("%s: start while still running", p.name)
		}
	}
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.t.Fatal(err)
	}
	defer logf.Close() // the child has its own descriptor
	p.starts++
	fmt.Fprintf(logf, "==== start #%d: chaos %s\n", p.starts, strings.Join(p.args, " "))
	cmd := exec.Command(needBinary(p.t), p.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// If the test binary dies without running its Cleanups, so do its nodes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("%s: start: %v", p.name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.exitErr = cmd, done, nil
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(done)
	}()
}

// running reports whether the current incarnation is alive.
func (p *proc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL (kill -9) and waits for the process to be gone, which
// also releases its ports and its data directory lock.
func (p *proc) kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.t.Errorf("%s: still running 10s after SIGKILL", p.name)
	}
}

// waitExit waits up to d for the current incarnation to exit and returns
// its exit code.
func (p *proc) waitExit(d time.Duration) int {
	p.t.Helper()
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	select {
	case <-done:
	case <-time.After(d):
		p.t.Fatalf("%s: did not exit within %v", p.name, d)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var ee *exec.ExitError
	if p.exitErr == nil {
		return 0
	}
	if errors.As(p.exitErr, &ee) {
		return ee.ExitCode()
	}
	p.t.Fatalf("%s: wait: %v", p.name, p.exitErr)
	return -1
}

// signal sends sig to the current incarnation.
func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("%s: signal %v: %v", p.name, sig, err)
	}
}

// startCount is how many times the process was started.
func (p *proc) startCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// logText returns everything the process wrote to stderr so far.
func (p *proc) logText() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	return string(b)
}

// cluster is a set of chaos nodes that know each other as peers.
type cluster struct {
	t      *testing.T
	nodes  []*proc
	mu     sync.Mutex // guards joined: writers call live
	joined []*proc    // members that joined, watched by live and waitLeader too (admit)
	byName map[string]*proc
	hc     *http.Client
}

// newCluster starts n nodes n1..nN on 127.0.0.<base+1>..<base+n> with the
// fast timings and extra flags, and waits until every node answers /status.
func newCluster(t *testing.T, base, n int, extra ...string) *cluster {
	t.Helper()
	c := prepareCluster(t, base, n, extra...)
	for _, p := range c.nodes {
		p.start()
	}
	for _, p := range c.nodes {
		c.waitUp(p)
	}
	return c
}

// prepareCluster is newCluster without starting anything.
func prepareCluster(t *testing.T, base, n int, extra ...string) *cluster {
	t.Helper()
	needBinary(t)
	dir := t.TempDir()
	c := &cluster{t: t, byName: map[string]*proc{}, hc: newHTTPClient(3 * time.Second)}
	t.Cleanup(c.hc.CloseIdleConnections)
	var peers []string
	for i := 1; i <= n; i++ {
		peers = append(peers, fmt.Sprintf("n%d=%s", i, net.JoinHostPort(loopback(base+i), peerPort)))
	}
	for i := 1; i <= n; i++ {
		name, ip := fmt.Sprintf("n%d", i), loopback(base+i)
		args := []string{"node", "--id", name, "--data-dir", filepath.Join(dir, name),
			"--client-addr", net.JoinHostPort(ip, clientPort), "--peer-addr", net.JoinHostPort(ip, peerPort),
			"--peers", strings.Join(peers, ",")}
		args = append(append(args, fastTimings...), extra...)
		p := newProc(t, dir, name, ip, args)
		c.nodes = append(c.nodes, p)
		c.byName[name] = p
	}
	return c
}

func newHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 16,
		DisableCompression: true}}
}

// reply is one HTTP answer: status code, raw body and its JSON fields.
type reply struct {
	code   int
	body   []byte
	fields map[string]any
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.code, bytes.TrimSpace(r.body)) }

// str returns the JSON string field name and whether it is a string.
func (r reply) str(name string) (string, bool) {
	s, ok := r.fields[name].(string)
	return s, ok
}

// do sends one request. An error means no HTTP answer arrived.
func do(ctx context.Context, hc *http.Client, method, url string, body []byte) (reply, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return reply{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: reading body: %w", method, url, err)
	}
	r := reply{code: resp.StatusCode, body: b}
	_ = json.Unmarshal(b, &r.fields)
	return r, nil
}

func (c *cluster) do(p *proc, method, path string, body []byte) (reply, error) {
	return do(context.Background(), c.hc, method, p.url(path), body)
}

// mustDo sends one request and fails the test if no answer arrives.
func (c *cluster) mustDo(p *proc, method, path string, body []byte) reply {
	c.t.Helper()
	r, err := c.do(p, method, path, body)
	if err != nil {
		c.t.Fatalf("%s %s on %s: %v", method, path, p.name, err)
	}
	return r
}

func jsonBody(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func (c *cluster) status(p *proc) (nodeapi.Status, error) {
	r, err := c.do(p, http.MethodGet, "/status", nil)
	if err != nil {
		return nodeapi.Status{}, err
	}
	if r.code != http.StatusOK {
		return nodeapi.Status{}, fmt.Errorf("status %s", r)
	}
	var st nodeapi.Status
	if err := json.Unmarshal(r.body, &st); err != nil {
		return nodeapi.Status{}, fmt.Errorf("status body %q: %w", r.body, err)
	}
	return st, nil
}

// waitFor polls cond every 20ms until it returns nil, and fails the test
// with cond's last error if that takes longer than d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, d, err)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronization
	}
}

// waitUp waits until p answers /status.
func (c *cluster) waitUp(p *proc) {
	c.t.Helper()
	waitFor(c.t, 10*time.Second, p.name+" answers /status", func() error {
		if !p.running() {
			return fmt.Errorf("%s exited:\n%s", p.name, p.logText())
		}
		_, err := c.status(p)
		return err
	})
}

// live returns the nodes, and the members that joined, whose process is
// running.
func (c *cluster) live() []*proc {
	c.mu.Lock()
	all := append(slices.Clone(c.nodes), c.joined...)
	c.mu.Unlock()
	var out []*proc
	for _, p := range all {
		if p.running() {
			out = append(out, p)
		}
	}
	return out
}

// waitLeader waits until every running node names the same leader, which
// itself reports being leader in the same term, and returns it with its
// status.
func (c *cluster) waitLeader() (*proc, nodeapi.Status) {
	c.t.Helper()
	var leader *proc
	var lst nodeapi.Status
	waitFor(c.t, 10*time.Second, "a leader every live node agrees on", func() error {
		leader = nil
		sts := map[string]nodeapi.Status{}
		for _, p := range c.live() {
			st, err := c.status(p)
			if err != nil {
				return err
			}
			sts[p.name] = st
		}
		var name string
		var term uint64
		for _, st := range sts {
			if st.Leader == "" || (name != "" && (st.Leader != name || st.Term != term)) {
				return fmt.Errorf("no agreement: %v", sts)
			}
			name, term = st.Leader, st.Term
		}
		st, ok := sts[name]
		if !ok || st.Role != "leader" {
			return fmt.Errorf("named leader %q is not a live leader: %v", name, sts)
		}
		leader, lst = c.byName[name], st
		return nil
	})
	return leader, lst
}

// followers returns the live nodes other than leader.
func (c *cluster) followers(leader *proc) []*proc {
	return slices.DeleteFunc(c.live(), func(p *proc) bool { return p == leader })
}

// retryable reports whether a request may be repeated until it succeeds:
// no answer, 503 (not applied) or 504 (outcome unknown) during elections.
func retryable(r reply, err error) bool {
	return err != nil || r.code == http.StatusServiceUnavailable || r.code == http.StatusGatewayTimeout
}

// eventually repeats a request through p while it fails retryably (leader
// elections) and returns the first definite answer. Only requests that are
// safe to repeat may be sent this way: reads, puts of one value, deletes,
// and writes carrying a client and seq (applied at most once).
func (c *cluster) eventually(p *proc, method, path string, body []byte) reply {
	c.t.Helper()
	var r reply
	waitFor(c.t, 15*time.Second, fmt.Sprintf("%s %s through %s", method, path, p.name), func() error {
		var err error
		r, err = c.do(p, method, path, body)
		if retryable(r, err) {
			if err == nil {
				err = errors.New(r.String())
			}
			return err
		}
		return nil
	})
	return r
}

// waitCaughtUp waits until every live node has applied everything the
// leader has committed, and returns the leader's status.
func (c *cluster) waitCaughtUp() nodeapi.Status {
	c.t.Helper()
	var lst nodeapi.Status
	waitFor(c.t, 15*time.Second, "every live node applies the leader's commit index", func() error {
		var leader *proc
		leader, lst = c.waitLeader()
		for _, p := range c.live() {
			st, err := c.status(p)
			if err != nil {
				return err
			}
			if st.Applied < lst.Commit {
				return fmt.Errorf("%s applied %d < leader %s commit %d", p.name, st.Applied, leader.name, lst.Commit)
			}
		}
		return nil
	})
	return lst
}
