package control

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// killTimeout bounds the kill of a cancelled command.
const killTimeout = 5 * time.Second

// killGroup kills process group pgid on the host, as root, with a command
// of its own. This is how a cancelled command is stopped: closing its
// session does not (sshd sends no SIGHUP without a terminal), and sshd
// refuses the SSH "signal" request for root logins. The kill's session is
// not counted in MaxSessions, so that it never waits behind the commands it
// may be meant to stop. A failure is logged: there is nothing more to do.
func (r *sshRemote) killGroup(ctx context.Context, pgid int64) {
	if pgid <= 1 { // never: kill -KILL -1 would kill every process
		r.d.cfg.Log.Warn("ssh: cancelled command not killed: its process group is unknown", "host", r.host)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killTimeout)
	defer cancel()
	c, _, err := r.conn(ctx)
	var s *ssh.Session
	if err == nil {
		s, err = openSession(ctx, c, r.ended(c))
	}
	if err == nil {
		defer s.Close()
		s.Stdin = commandStdin(r.priv, r.sudoPassword(), nil)
		err = s.Start(wrapCommand(r.priv, fmt.Sprintf("kill -KILL -%d", pgid)))
	}
	if err == nil {
		err, _ = waitSession(ctx, s)
	}
	if err != nil {
		r.d.cfg.Log.Warn("ssh: cancelled command not killed", "host", r.host, "pgid", pgid, "err", err)
	}
}

// pgidMarker starts the line every command first writes to stderr, with
// the id of its process group; pgidWriter takes that line out again.
const pgidMarker = "chaos-pgid="

// reportingGroup is line preceded by the report of its process group. sshd
// starts each session's command as the leader of a new session and process
// group; the login shell, exec'd into sh and then into line, keeps that pid,
// so its $$ is the group's id. The outer sh makes this work whatever the
// login shell is.
func reportingGroup(line string) string {
	return "exec sh -c " + ShellQuote("echo "+pgidMarker+"$$ >&2; exec "+line)
}

// pgidWait bounds how long a cancelled command's process group may take to
// be reported: the report is the command's first action, so only a command
// cancelled as it started waits.
const pgidWait = time.Second

// pgidWriter passes a command's stderr on to w, less the pgidMarker line,
// whose value it keeps in pgid. Lines before it (sshd's own warnings) are
// passed on. It gives up looking after 4 KiB.
type pgidWriter struct {
	w       io.Writer
	pgid    atomic.Int64  // 0 until seen
	known   chan struct{} // closed once pgid is set
	pending []byte        // an incomplete line, while looking
	seen    bool          // the marker was found, or given up on
}

func newPGIDWriter(w io.Writer) *pgidWriter {
	return &pgidWriter{w: w, known: make(chan struct{})}
}

// await is the process group id once known, or 0 after timeout.
func (p *pgidWriter) await(timeout time.Duration) int64 {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.known:
		return p.pgid.Load()
	case <-t.C:
		return 0
	}
}

func (p *pgidWriter) Write(b []byte) (int, error) {
	if p.seen {
		return p.w.Write(b)
	}
	p.pending = append(p.pending, b...)
	for !p.seen {
		line, rest, complete := bytes.Cut(p.pending, []byte("\n"))
		switch {
		case !complete && len(p.pending) < 4096:
			return len(b), nil
		case !complete:
			p.seen = true
		case bytes.HasPrefix(line, []byte(pgidMarker)):
			if id, err := strconv.ParseInt(string(line[len(pgidMarker):]), 10, 64); err == nil && id > 1 {
				p.pgid.Store(id)
				close(p.known)
			}
			p.seen, p.pending = true, rest
		default:
			if _, err := p.w.Write(p.pending[:len(line)+1]); err != nil {
				return 0, err
			}
			p.pending = rest
		}
	}
	_, err := p.w.Write(p.pending)
	p.pending = nil
	return len(b), err
}

// flush passes on what is still held back, once the command has ended.
func (p *pgidWriter) flush() {
	if len(p.pending) > 0 {
		_, _ = p.w.Write(p.pending)
		p.pending = nil
	}
}
