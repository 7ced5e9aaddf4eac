package described

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"chaos/control"
	"chaos/db"
)

// System is a described system under test: a db.DB whose every step the
// Description says. Nodes run as daemons started with `sh -c START` in a
// session of their own, so kill, pause and resume signal the whole process
// group; a node's files live in Layout.DataDir/<name>/<node>/.
type System struct {
	desc   *Description
	cfg    db.Config
	binary string       // {chaos_binary}
	http   *http.Client // for the up and ready checks
	ids    idCache      // the leader probe's node ids
	// shared is the set of files uploaded already when every node shares
	// one file system (local mode: db.Config.Upload is false): each is
	// copied once, not by five nodes at once.
	shared sharedUploads
	// fakeClocks and reach remember what FakeClock found.
	fakeClocks db.FakeClocks
	reach      db.ReachCache
}

// New builds the system desc describes for cfg. A system whose start does
// not use {bug_flags} has no planted bugs to start with.
func New(desc *Description, cfg db.Config) (db.DB, error) {
	if err := desc.CheckBugs(cfg.Bugs); err != nil {
		return nil, err
	}
	s := &System{desc: desc, cfg: cfg, binary: cfg.Binary,
		http: &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}}
	if s.binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the chaos binary for {chaos_binary}: %w (pass --binary)", err)
		}
		s.binary = exe
	}
	return s, nil
}

// From returns the described system d is, if it is one.
func From(d db.DB) (*System, bool) {
	s, ok := d.(*System)
	return s, ok
}

// CheckBugs refuses planted bugs for a system whose start does not pass
// them on with {bug_flags}.
func (d *Description) CheckBugs(bugs []string) error {
	if len(bugs) > 0 && !slices.Contains(d.Start.Names(), VarBugFlags) {
		return &Error{File: d.File, Line: d.Start.Line, Msg: "--bug plants bugs through {bug_flags}, which start does not use; " +
			"add {bug_flags} to start, or run without --bug"}
	}
	return nil
}

// Description is what the system was built from.
func (s *System) Description() *Description { return s.desc }

func (s *System) Name() string { return s.desc.Name }

func (s *System) ClientAddr(n db.Node) string {
	return net.JoinHostPort(n.Addr, strconv.Itoa(s.desc.Ports.Client))
}

func (s *System) nodeDir(n db.Node) string { return s.cfg.Layout.NodeDir(s.desc.Name, n) }

// nodeVars are n's own variables (Variables), without {members}.
func (s *System) nodeVars(n db.Node) Vars {
	dir := s.nodeDir(n)
	v := Vars{VarID: n.Name, VarAddr: n.Addr, VarClientPort: strconv.Itoa(s.desc.Ports.Client), VarClientAddr: s.ClientAddr(n),
		VarDataDir: path.Join(dir, "data"), VarLogDir: path.Join(dir, "log"), VarBinDir: s.cfg.Layout.BinDir}
	if p := s.desc.Ports.Peer; p != 0 {
		v[VarPeerPort] = strconv.Itoa(p)
		v[VarPeerAddr] = net.JoinHostPort(n.Addr, strconv.Itoa(p))
	}
	return v
}

// Vars are the variables of node n's templates: its own and {members}.
func (s *System) Vars(n db.Node) Vars {
	v := s.nodeVars(n)
	if s.desc.Members.Each.IsSet() {
		sep := ","
		if s.desc.Members.Separator != nil {
			sep = *s.desc.Members.Separator
		}
		each := make([]string, len(s.cfg.Nodes))
		for i, m := range s.cfg.Nodes {
			each[i] = s.desc.Members.Each.Expand(s.nodeVars(m))
		}
		v[VarMembers] = strings.Join(each, sep)
	}
	return v
}

// daemon is the process n runs as: `sh -c START`, signalled with its
// process group, tracked by pidfile when the description names one.
func (s *System) daemon(n db.Node) db.Daemon {
	d := db.Daemon{Dir: s.nodeDir(n), Name: "daemon", Group: true, Procs: s.cfg.Layout.Procs}
	if s.desc.Pidfile.IsSet() {
		d.Pidfile = s.desc.Pidfile.Expand(s.Vars(n))
	}
	return d
}

// node is n's process control: Kill, Pause, Resume, Process and Stop are
// its (see db.NodeDaemon).
func (s *System) node(n db.Node) db.NodeDaemon {
	return db.NodeDaemon{Node: n, Daemon: s.daemon(n), Mount: s.StorageMount(n)}
}

func wrap(n db.Node, what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %s: %w", n.Name, what, err)
}

// StorageMount is n's {data_dir}, served through the fault file system
// when the system was built with storage faults (db.Config.Storage).
func (s *System) StorageMount(n db.Node) db.StorageMount {
	return db.NewStorageMount(n, s.nodeDir(n), s.nodeVars(n)[VarDataDir], s.cfg.Storage)
}

// Install creates n's directories (and the fault file system's) and
// uploads every file of upload.
func (s *System) Install(ctx context.Context, r control.Remote, n db.Node) error {
	if err := s.StorageMount(n).Install(ctx, r); err != nil {
		return err
	}
	v := s.Vars(n)
	dirs := []string{s.nodeDir(n), v[VarDataDir], v[VarLogDir]}
	for _, u := range s.desc.Upload {
		dirs = append(dirs, path.Dir(u.Dest.Expand(v)))
	}
	q := make([]string, len(dirs))
	for i, d := range dirs {
		q[i] = control.ShellQuote(d)
	}
	if err := db.Run(ctx, r, "mkdir -p "+strings.Join(q, " ")); err != nil {
		return wrap(n, "install", err)
	}
	for _, u := range s.desc.Upload {
		src, dest := s.source(u), u.Dest.Expand(v)
		upload := func() error { return r.Upload(ctx, src, dest, u.Mode.Get()) }
		if !s.cfg.Upload {
			upload = func() error {
				return s.shared.once(dest, func() error { return r.Upload(ctx, src, dest, u.Mode.Get()) })
			}
		}
		if err := upload(); err != nil {
			return wrap(n, "upload "+dest, err)
		}
	}
	return nil
}

// sharedUploads copies each file once on a file system every node shares.
type sharedUploads struct {
	mu   sync.Mutex
	done map[string]bool
}

// once runs upload for dest unless an earlier call succeeded.
func (u *sharedUploads) once(dest string, upload func() error) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.done[dest] {
		return nil
	}
	if err := upload(); err != nil {
		return err
	}
	if u.done == nil {
		u.done = map[string]bool{}
	}
	u.done[dest] = true
	return nil
}

// source is an upload's local file: {chaos_binary} expanded, and a
// relative path taken from the description's directory.
func (s *System) source(u Upload) string {
	src := u.Src.Expand(Vars{VarChaosBinary: s.binary})
	if !filepath.IsAbs(src) {
		src = filepath.Join(s.desc.Dir, src)
	}
	return src
}

// Start runs start as a daemon: `sh -c START` in a session of its own.
func (s *System) Start(ctx context.Context, r control.Remote, n db.Node) error {
	var flags strings.Builder
	for _, b := range s.cfg.Bugs {
		flags.WriteString(" --bug " + control.ShellQuote(b))
	}
	cmd := s.desc.Start.ExpandShell(s.Vars(n).With(VarBugFlags, flags.String()))
	if m := s.StorageMount(n); m.FS != nil {
		if err := m.Mount(ctx, r); err != nil {
			return err
		}
	}
	d := s.daemon(n)
	d.Clock = db.StartClock(ctx, s.cfg.Faketime, s, r, n)
	return wrap(n, "start "+s.desc.Name, d.Start(ctx, r, []string{"sh", "-c", cmd}))
}

// Kill, Pause, Resume, Process and Stop are n's process control's (see
// node).
func (s *System) Kill(ctx context.Context, r control.Remote, n db.Node) error {
	return s.node(n).Kill(ctx, r)
}

func (s *System) Pause(ctx context.Context, r control.Remote, n db.Node) error {
	return s.node(n).Pause(ctx, r)
}

func (s *System) Resume(ctx context.Context, r control.Remote, n db.Node) error {
	return s.node(n).Resume(ctx, r)
}

var _ db.ProcessFinder = (*System)(nil)

func (s *System) Process(ctx context.Context, r control.Remote, n db.Node) (db.Process, error) {
	return s.node(n).Process(ctx, r)
}

// Stop stops n, then the fault file system under its data_dir.
func (s *System) Stop(ctx context.Context, r control.Remote, n db.Node) error {
	return s.node(n).Stop(ctx, r)
}

// Wipe runs wipe, or by default removes data_dir, log_dir and the start
// command's output; with storage faults, the fault file system is
// unmounted and its backing directory removed first.
func (s *System) Wipe(ctx context.Context, r control.Remote, n db.Node) error {
	if m := s.StorageMount(n); m.FS != nil {
		if err := m.Wipe(ctx, r); err != nil {
			return err
		}
	}
	v := s.Vars(n)
	cmd := "rm -rf " + control.ShellQuote(v[VarDataDir]) + " " + control.ShellQuote(v[VarLogDir]) + " " +
		control.ShellQuote(s.daemon(n).LogFile())
	if s.desc.Wipe.IsSet() {
		cmd = s.desc.Wipe.ExpandShell(v)
	}
	return wrap(n, "wipe", db.Run(ctx, r, cmd))
}

// CollectLogs pulls every file of logs, the event log, and the start
// command's output.
func (s *System) CollectLogs(ctx context.Context, r control.Remote, n db.Node, dir string) error {
	v := s.Vars(n)
	files := append([]string{s.daemon(n).LogFile()}, s.StorageMount(n).Logs()...)
	for _, l := range s.desc.Logs {
		files = append(files, l.Expand(v))
	}
	if e := s.desc.Events; e.IsSet() && !slices.Contains(files, e.Expand(v)) {
		files = append(files, e.Expand(v))
	}
	return db.Collect(ctx, r, n, dir, files...)
}

// idCache remembers which node answered the leader probe with which id:
// a paused or cut-off leader's id still names it.
type idCache struct {
	mu   sync.Mutex
	name map[string]string
}

func (c *idCache) put(id, node string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.name == nil {
		c.name = map[string]string{}
	}
	c.name[id] = node
}

func (c *idCache) get(id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.name[id]
	return n, ok
}
