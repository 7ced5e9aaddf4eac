// Package remotetest provides a fake control.Remote that records what it is
// asked to do, for the tests of the packages that drive hosts: a Recorder
// keeps, in order, every command run and every file moved by the fake
// Remotes it hands out, and each fake answers through a function the test
// gives. Like net/http/httptest it is meant for tests only: import it from
// _test.go files, never from the product.
package remotetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"chaos/control"
)

// Kind says what a fake Remote was asked to do.
type Kind string

// The kinds of Call.
const (
	Run      Kind = "run"
	Upload   Kind = "upload"
	Download Kind = "download"
	// Note is a line the test recorded itself (Recorder.Note).
	Note Kind = "note"
)

// Call is one thing a fake Remote was asked to do.
type Call struct {
	Host string // the Remote's Host()
	Kind Kind
	Cmd  string // Run: the command
	Text string // Note: the text

	// Upload and Download: the local and the remote file; Upload's mode.
	Local, Remote string
	Mode          os.FileMode
}

// String shows the call on one line: "run CMD", "upload LOCAL -> REMOTE
// MODE", "download REMOTE" or "note TEXT".
func (c Call) String() string {
	switch c.Kind {
	case Run:
		return "run " + c.Cmd
	case Upload:
		return fmt.Sprintf("upload %s -> %s %s", c.Local, c.Remote, c.Mode)
	case Download:
		return "download " + c.Remote
	}
	return "note " + c.Text
}

// Answer answers a call to a fake Remote: a Run gets its Result and error
// (a command that exits non-zero is a Result with that ExitCode and a nil
// error, as control.Remote says); an Upload or a Download gets the error
// alone, and its Result is ignored. A nil Answer answers every call with
// success: exit 0 and no output.
type Answer func(Call) (control.Result, error)

// FailOn is an Answer under which a command that contains sub exits with
// code and the stderr "canned failure", and every other call succeeds.
func FailOn(sub string, code int) Answer {
	return func(c Call) (control.Result, error) {
		if c.Kind == Run && strings.Contains(c.Cmd, sub) {
			return control.Result{ExitCode: code, Stderr: []byte("canned failure")}, nil
		}
		return control.Result{}, nil
	}
}

// Cmds are the commands of the Run calls among calls, in order.
func Cmds(calls []Call) []string {
	var out []string
	for _, c := range calls {
		if c.Kind == Run {
			out = append(out, c.Cmd)
		}
	}
	return out
}

// Transcript shows calls one a line, as Call.String does, each line
// ending in a newline.
func Transcript(calls []Call) string {
	var b strings.Builder
	for _, c := range calls {
		b.WriteString(c.String() + "\n")
	}
	return b.String()
}

// Recorder records the calls of the fake Remotes it hands out, in the
// order they arrive, with the host of each, so that one Recorder can hold
// the transcript of one host or of a whole cluster. It is safe for
// concurrent use; the zero value is ready.
type Recorder struct {
	mu    sync.Mutex
	calls []Call
}

// Remote returns a fake control.Remote named host that records every Run,
// Upload and Download into r and then answers it with answer (nil: every
// call succeeds). The answer runs outside r's lock, so it may record into
// r itself (Note); answers of concurrent calls run concurrently. The fake
// touches no file (a Download writes nothing: an answer that must leave a
// file writes it), ignores ctx, and its Close does nothing.
func (r *Recorder) Remote(host string, answer Answer) control.Remote {
	return &remote{rec: r, host: host, answer: answer}
}

// Note records text as a call of kind Note on host: what reached a host
// other than through a Remote (a request to a fake HTTP server, a
// client's write), so that one transcript shows everything in order.
func (r *Recorder) Note(host, text string) { r.add(Call{Host: host, Kind: Note, Text: text}) }

// Take returns what was recorded since the last Take, in order, and
// forgets it.
func (r *Recorder) Take() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

func (r *Recorder) add(c Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

// remote is the fake Remote of a Recorder.
type remote struct {
	rec    *Recorder
	host   string
	answer Answer
}

func (f *remote) Host() string { return f.host }
func (f *remote) Close() error { return nil }

func (f *remote) Run(_ context.Context, cmd string) (control.Result, error) {
	return f.call(Call{Kind: Run, Cmd: cmd})
}

func (f *remote) Upload(_ context.Context, local, remote string, mode os.FileMode) error {
	_, err := f.call(Call{Kind: Upload, Local: local, Remote: remote, Mode: mode})
	return err
}

func (f *remote) Download(_ context.Context, remote, local string) error {
	_, err := f.call(Call{Kind: Download, Local: local, Remote: remote})
	return err
}

// call records c as this Remote's and answers it.
func (f *remote) call(c Call) (control.Result, error) {
	c.Host = f.host
	f.rec.add(c)
	if f.answer == nil {
		return control.Result{}, nil
	}
	return f.answer(c)
}
