package db

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"chaos/control"
)

// Process is a node's process on its host, as its pidfile names it.
type Process struct {
	// Pid is the process's id; 0 when the pidfile names no live process
	// (there is none, or its process is gone or a zombie).
	Pid int
	// Stopped is true when the process is stopped by a signal (state T
	// in /proc/PID/stat): a SIGSTOP nobody undid.
	Stopped bool
	// Record is the path, on the host, of the start record that names
	// the process ("PID STARTTIME", see Daemon): a tool on the host
	// checks it before it touches the process (chaos vdso-clock).
	Record string
}

// ProcessFinder is a system that can say which process runs a node on its
// host. A run's setup uses it to name the processes an earlier run left
// (a controller killed mid-run leaves its nodes running, or paused).
type ProcessFinder interface {
	// Process reports n's process; the zero Process when none runs. It
	// changes nothing on the host.
	Process(ctx context.Context, r control.Remote, n Node) (Process, error)
}

var (
	_ ProcessFinder = (*ChaosNode)(nil)
	_ ProcessFinder = (*Etcd)(nil)
)

// processCmd prints "PID STATE" (STATE the letter of /proc/PID/stat) when
// the pidfile names the live process chaos started (see funcs), and
// nothing when none runs; a refused pidfile makes it exit
// exitPidfileRefused.
func (d daemon) processCmd() string {
	return d.ifOurs(`s=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null) && echo "$p ${s%% *}" || true`, "true")
}

// process runs processCmd on r and reads its answer.
func (d daemon) process(ctx context.Context, r control.Remote) (Process, error) {
	out, err := d.output(ctx, r, d.processCmd())
	if err != nil {
		return Process{}, err
	}
	p, err := parseProcess(string(out))
	if p.Pid > 0 {
		p.Record = d.record()
	}
	return p, err
}

// parseProcess reads processCmd's answer: empty, or "PID STATE".
func parseProcess(out string) (Process, error) {
	f := strings.Fields(out)
	if len(f) == 0 {
		return Process{}, nil
	}
	pid, err := strconv.Atoi(f[0])
	if len(f) != 2 || err != nil || pid <= 0 {
		return Process{}, fmt.Errorf("process state %q: want a pid and a state letter", strings.TrimSpace(out))
	}
	return Process{Pid: pid, Stopped: f[1] == "T"}, nil
}
