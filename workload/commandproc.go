package workload

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"chaos/internal/secret"
)

// maxAnswerLine bounds one answer line of a client command: a final set
// read lists every element ever added.
const maxAnswerLine = 64 << 20

// stderrTail is how much of a client command's stderr is kept for errors.
const stderrTail = 2 << 10

// clientProcess is one running client command: `sh -c CMD` in a process
// group of its own, fed on stdin, read line by line on stdout. stop kills
// the whole group; every clientProcess ends with stop.
type clientProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// lines carries each stdout line; it is closed at EOF or a read error
	// (readErr, which closing lines publishes).
	lines   chan []byte
	readErr error
	done    chan struct{} // closed by stop: the reader stops sending
	stderr  *tailBuffer
	// startedAt is when it started; answered, whether it answered a
	// request yet (CommandClient.StartGrace).
	startedAt time.Time
	answered  bool
}

// startClientProcess starts cmdline with sh in dir, with this process's
// environment less its secrets (secret.Environ).
func startClientProcess(cmdline, dir string) (*clientProcess, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("directory %s: not a directory here", dir)
	}
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir = dir
	cmd.Env = secret.Environ(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = time.Second // bounds Wait on pipes a stray process holds
	p := &clientProcess{cmd: cmd, lines: make(chan []byte), done: make(chan struct{}), stderr: &tailBuffer{max: stderrTail}}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.startedAt = time.Now()
	go p.read(stdout)
	return p, nil
}

func (p *clientProcess) read(r io.Reader) {
	defer close(p.lines)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br, maxAnswerLine)
		if err != nil {
			p.readErr = err
			return
		}
		select {
		case p.lines <- line:
		case <-p.done:
			return
		}
	}
}

// readLine reads one line without its newline, at most limit bytes.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > limit {
			return nil, fmt.Errorf("a line longer than %d bytes", limit)
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil // a last line without its newline
		}
		return nil, err
	}
}

// send writes a request line, giving up when ctx ends.
func (p *clientProcess) send(ctx context.Context, line []byte) error {
	errc := make(chan error, 1)
	go func() {
		_, err := p.stdin.Write(line)
		errc <- err
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return ctx.Err() // stop unblocks the write
	}
}

// stop kills the process group and reaps the shell.
func (p *clientProcess) stop() {
	close(p.done)
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Wait()
}

// describe says how the stopped process ended and what its stderr ended
// with.
func (p *clientProcess) describe() string {
	var parts []string
	if st := p.cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			parts = append(parts, st.String()) // how it ended on its own
		}
	}
	if tail := strings.TrimSpace(p.stderr.String()); tail != "" {
		parts = append(parts, "stderr ends: "+strings.ReplaceAll(tail, "\n", " | "))
	}
	return strings.Join(parts, "; ")
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
