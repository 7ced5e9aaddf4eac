package nemesis

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"chaos/control"
	"chaos/db"
	"chaos/history/faultrec"
	"chaos/nemesis/hostcmd"
	"chaos/nemesis/vdsoclock"
)

// The vdso clock strategy: `chaos vdso-clock` on each node's host patches
// the vDSO of the node's processes (the one its start record names and
// its descendants) so that their clock readings are moved by an offset
// and a rate (package vdsoclock). It reaches any x86-64 program that reads
// time through the vDSO (Go, the JVM, glibc and musl programs), touches
// no other process and never the host's clock, so it is safe on hosts
// that share a clock. Only readings move: sleeps and timers still run on
// the kernel's clock. The realtime clocks jump either way; the monotonic
// ones only forward (a bump's backward jumps leave them), so that no
// program sees its monotonic clock go back during a fault; a reset (a
// heal) puts the kernel's clock back, which moves them back by what the
// fault added. No clock gets more than the fault's lead ahead of true
// time (see vdsoLead).

// VDSOClock is where the vdso strategy's tool runs on the hosts: this
// chaos binary, as `chaos vdso-clock`. It is safe for concurrent use.
type VDSOClock struct {
	HostBinary

	mu     sync.Mutex
	copied installs
	// probed is each node's host's answer to hostcmd.VDSOProbeCmd, by node.
	probed map[string]error
}

// NewVDSOClock places the vdso strategy's tool in layout: this
// executable, copied to BinDir/chaos-vdso-clock when upload.
func NewVDSOClock(layout db.Layout, upload bool) *VDSOClock {
	return &VDSOClock{HostBinary: newHostBinary(layout, upload, "chaos-vdso-clock")}
}

// capSysPtrace is CAP_SYS_PTRACE's bit in CapEff.
const capSysPtrace = 19

// vdsoProbeError says why a host that answered hostcmd.VDSOProbeCmd with out
// cannot patch its processes' clocks, or nil.
func vdsoProbeError(out string) error {
	f := strings.Fields(out)
	if len(f) != 4 {
		return fmt.Errorf("the host's answer %q: want its architecture, ptrace scope, user and capabilities", strings.TrimSpace(out))
	}
	var caps uint64
	if _, err := fmt.Sscanf(f[3], "%x", &caps); err != nil {
		return fmt.Errorf("the host's capabilities %q: %w", f[3], err)
	}
	switch {
	case f[0] != "x86_64":
		return fmt.Errorf("the host is %s: the vdso clock patches x86-64 programs only", f[0])
	case f[1] == "3":
		return errors.New("the host's Yama ptrace_scope is 3: no process may be traced (kernel.yama.ptrace_scope)")
	case f[2] != "0" && caps&(1<<capSysPtrace) == 0:
		return fmt.Errorf("user %s has no CAP_SYS_PTRACE on the host: the vdso clock needs root or that capability", f[2])
	}
	return nil
}

// vdsoAvailable says why the vdso strategy cannot run on c: no place for
// its tool, a system that cannot name its nodes' processes, or a host
// that cannot trace them.
func vdsoAvailable(ctx context.Context, c *Cluster) error {
	vc := c.VDSOClock
	switch {
	case vc == nil:
		return errors.New("the vdso strategy has no place for its tool on the hosts (Cluster.VDSOClock is nil)")
	case c.Processes == nil:
		return fmt.Errorf("the vdso strategy needs the nodes' processes, and %s cannot name them (no Processes capability)", systemName(c))
	case len(c.Nodes) == 0:
		return errors.New("the cluster has no nodes")
	}
	if err := vc.missing(); err != nil {
		return err
	}
	for _, n := range c.Nodes {
		if err := vc.probe(ctx, c, n); err != nil {
			return fmt.Errorf("vdso: %s: %w", n.Name, err)
		}
	}
	return nil
}

// probe asks n's host, once, whether it can trace n's processes.
func (vc *VDSOClock) probe(ctx context.Context, c *Cluster, n db.Node) error {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if err, ok := vc.probed[n.Name]; ok {
		return err
	}
	r, err := nodeRemote(c, n)
	if err != nil {
		return err
	}
	out, err := control.Output(ctx, r, hostcmd.VDSOProbeCmd)
	if err != nil {
		return err // a failed SSH command is not remembered: it may pass next time
	}
	if vc.probed == nil {
		vc.probed = map[string]error{}
	}
	vc.probed[n.Name] = vdsoProbeError(string(out))
	return vc.probed[n.Name]
}

// vdsoRun runs `chaos vdso-clock action` on n's process tree with args,
// and returns the line of n's own process; a node whose process does not
// run has none: (nil, nil).
func vdsoRun(ctx context.Context, c *Cluster, n db.Node, action string, args ...string) (*vdsoclock.Line, error) {
	vc := c.VDSOClock
	if vc == nil {
		return nil, errors.New("the vdso strategy has no place for its tool on the hosts")
	}
	if c.Processes == nil {
		return nil, fmt.Errorf("%s cannot name its nodes' processes", systemName(c))
	}
	r, err := nodeRemote(c, n)
	if err != nil {
		return nil, err
	}
	p, err := c.Processes.Process(ctx, r, n)
	if err != nil || p.Pid == 0 {
		return nil, err
	}
	if action == "set" {
		if err := vc.install(ctx, r, n.Name); err != nil {
			return nil, err
		}
	}
	argv := append([]string{vc.Path, "vdso-clock", action, "--pid", fmt.Sprint(p.Pid), "--started", p.Record, "--tree"}, args...)
	for i := range argv {
		argv[i] = control.ShellQuote(argv[i])
	}
	// Without the tool on the host, chaos patched nothing there: a heal
	// or a look has nothing to do (and copies nothing).
	cmd := fmt.Sprintf("if [ -x %s ]; then %s; fi", argv[0], strings.Join(argv, " "))
	out, err := control.Output(ctx, r, cmd)
	lines, perr := vdsoLines(out)
	if err != nil {
		if len(lines) > 0 && lines[0].Error != "" {
			return nil, fmt.Errorf("vdso-clock %s: %s", action, lines[0].Error)
		}
		return nil, fmt.Errorf("vdso-clock %s: %w", action, err)
	}
	switch {
	case perr != nil:
		return nil, fmt.Errorf("vdso-clock %s: its output %q: %v", action, strings.TrimSpace(string(out)), perr)
	case len(lines) == 0 && action == "set":
		return nil, fmt.Errorf("vdso-clock %s: no output: %s is not on the host", action, vc.Path)
	case len(lines) == 0:
		return nil, nil
	}
	return &lines[0], nil
}

// install copies the tool to r's host when it must.
func (vc *VDSOClock) install(ctx context.Context, r control.Remote, node string) error {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if err := vc.copied.install(ctx, &vc.HostBinary, r, node); err != nil {
		return fmt.Errorf("vdso clock: %w", err)
	}
	return nil
}

// vdsoLines parses vdso-clock's output: a JSON line per process.
func vdsoLines(out []byte) ([]vdsoclock.Line, error) {
	var lines []vdsoclock.Line
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(text, "{") {
			continue // the ssh banner, a shell's noise
		}
		var l vdsoclock.Line
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			return lines, err
		}
		lines = append(lines, l)
	}
	return lines, sc.Err()
}

// vdsoSkew is a vdso clock fault on a node: its processes' realtime and
// monotonic offsets, their rate, and how far ahead of true time they may
// get (0: no bound).
type vdsoSkew struct {
	realtime, monotonic, lead time.Duration
	rate                      float64
}

// args are s as vdso-clock set's flags.
func (s vdsoSkew) args() []string {
	return []string{"--realtime", s.realtime.String(), "--monotonic", s.monotonic.String(), "--rate", fmt.Sprint(s.rate),
		"--max-lead", s.lead.String()}
}

// skewTable is the vdso clock faults in effect, by node: a node whose
// process a kill or a power loss restarts gets its fault again. It is
// safe for concurrent use.
type skewTable struct {
	mu    sync.Mutex
	skews map[string]vdsoSkew
}

func (t *skewTable) set(node string, s vdsoSkew) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.skews[node] = s
}

func (t *skewTable) remove(node string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.skews, node)
}

func (t *skewTable) get(node string) (vdsoSkew, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.skews[node]
	return s, ok
}

// vdsoSet makes n's clocks show s, remembers it for a restart, and
// returns what its process reads back.
func vdsoSet(ctx context.Context, c *Cluster, n db.Node, s vdsoSkew) (*vdsoclock.Line, error) {
	c.skewTable().set(n.Name, s)
	l, err := vdsoRun(ctx, c, n, "set", s.args()...)
	if err == nil && l == nil {
		err = errors.New("its process does not run")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.Name, err)
	}
	return l, nil
}

// reapplyClocks gives the nodes whose processes were restarted (a kill's
// stop, a power loss's) the vdso clock fault each had, if any: the new
// process is patched; one still patched (the restart found it running)
// is left as it is.
func (c *Cluster) reapplyClocks(ctx context.Context, nodes []db.Node) error {
	if c.skews == nil {
		return nil // no fault was ever set
	}
	var errs []error
	for _, n := range nodes {
		s, ok := c.skews.get(n.Name)
		if !ok {
			continue
		}
		if _, err := vdsoRun(ctx, c, n, "set", append(s.args(), "--unless-patched")...); err != nil {
			errs = append(errs, fmt.Errorf("%s: re-applying its clock fault: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}

// vdsoReset puts back the kernel's clock in n's processes; a node whose
// process does not run lost its patch with it, and a host that cannot
// trace its processes holds no patch of chaos's.
func vdsoReset(ctx context.Context, c *Cluster, n db.Node) error {
	if c.skews != nil { // a cluster that set no fault has no table: resets run concurrently, and make none
		c.skews.remove(n.Name)
	}
	if !vdsoMayHold(ctx, c, n) {
		return nil
	}
	if _, err := vdsoRun(ctx, c, n, "heal"); err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	return nil
}

// vdsoMayHold reports whether n's processes may hold a patch of chaos's:
// the cluster places the tool, names the processes, and n's host can
// trace them.
func vdsoMayHold(ctx context.Context, c *Cluster, n db.Node) bool {
	return c.VDSOClock != nil && c.Processes != nil && c.VDSOClock.probe(ctx, c, n) == nil
}

// vdsoLeftover names the patch n's process still holds.
func vdsoLeftover(ctx context.Context, c *Cluster, n db.Node) ([]string, error) {
	if !vdsoMayHold(ctx, c, n) {
		return nil, nil
	}
	l, err := vdsoRun(ctx, c, n, "show")
	if err != nil || l == nil || !l.Patched {
		return nil, err
	}
	return []string{fmt.Sprintf("vdso clock patch in pid %d (realtime %v, monotonic %v, rate %g)",
		l.Pid, time.Duration(l.RealtimeNS), time.Duration(l.MonotonicNS), l.Rate)}, nil
}

// vdsoLead is how far ahead of true time the clock family lets a
// node's clocks get: two election timeouts, its largest jump. A program
// that waits on the kernel's clock for a deadline read from its own (the
// JVM's timed waits) waits that much longer; a fast clock stops gaining
// there, so no wait stretches without bound.
func (k *Clock) vdsoLead() time.Duration {
	election := k.Election
	if election <= 0 {
		election = db.DefaultTiming().ElectionTimeout
	}
	return max(2*election, 100*time.Millisecond)
}

// vdsoApply carries the clock fault v out on n: a rate, or the jumps of a
// bump or strobe (waiting the strobe's period between two), the
// monotonic clocks following the realtime ones forward but never back
// (a strobe's way back leaves them where its first jump forward took
// them); it records what n's process read back.
func (k *Clock) vdsoApply(ctx context.Context, c *Cluster, n db.Node, v *faultrec.Clock) (*vdsoclock.Line, error) {
	lead := k.vdsoLead()
	if v.Kind == clockRate {
		return vdsoSet(ctx, c, n, vdsoSkew{rate: v.Rates[n.Name], lead: lead})
	}
	var realtime, monotonic time.Duration
	var last *vdsoclock.Line
	for i, ms := range clockJumps(v, n.Name) {
		if i > 0 {
			if err := k.wait(ctx, time.Duration(v.PeriodMS)*time.Millisecond); err != nil {
				return last, fmt.Errorf("%s: strobe: %w", n.Name, err)
			}
		}
		realtime += time.Duration(ms) * time.Millisecond
		monotonic = max(monotonic, realtime)
		l, err := vdsoSet(ctx, c, n, vdsoSkew{realtime: realtime, monotonic: monotonic, rate: 1, lead: max(lead, realtime)})
		if err != nil {
			return last, err
		}
		last = l
	}
	return last, nil
}

// vdsoShown is what a node's process read back, for the op's value.
func vdsoShown(l *vdsoclock.Line) faultrec.ClockShown {
	return faultrec.ClockShown{Pid: l.Pid, RealtimeMS: float64(l.RealtimeNS) / 1e6,
		MonotonicMS: float64(l.MonotonicNS) / 1e6, Rate: l.Rate}
}

// vdsoApplyAll carries v out on every node at once, and records in v
// what each node's process read back, and as its effect whether every
// one shows its fault.
func (k *Clock) vdsoApplyAll(ctx context.Context, c *Cluster, nodes []db.Node, v *faultrec.Clock) error {
	c.skewTable() // made here: the nodes below run concurrently
	shown, err := mapNodes(nodes, func(n db.Node) (*vdsoclock.Line, error) { return k.vdsoApply(ctx, c, n, v) })
	v.Shown = map[string]faultrec.ClockShown{}
	v.Effect = EffectObserved
	for i, n := range nodes {
		if shown[i] == nil || !shown[i].Patched || !vdsoShowsFault(v, n.Name, shown[i]) {
			v.Unchanged = append(v.Unchanged, n.Name)
			v.Effect = EffectNotObserved
			continue
		}
		v.Shown[n.Name] = vdsoShown(shown[i])
	}
	k.systemShown(ctx, c, v)
	return err
}

// systemShown adds to v.Shown what each node's system shows of its clock,
// where c's system shows it (db.ClockReader): the offset from this
// machine's clock, which hosts in sync with it (NTP, or sharing its
// kernel) make the fault's. A node whose probe fails shows nothing.
func (k *Clock) systemShown(ctx context.Context, c *Cluster, v *faultrec.Clock) {
	if c.Clocks == nil || len(v.Shown) == 0 {
		return
	}
	var nodes []db.Node
	for _, n := range c.Nodes {
		if _, ok := v.Shown[n.Name]; ok {
			nodes = append(nodes, n)
		}
	}
	offsets, _ := mapNodes(nodes, func(n db.Node) (*float64, error) {
		before := k.now()
		at, err := c.Clocks.NodeClock(ctx, n)
		if err != nil {
			return nil, err
		}
		mid := before.Add(k.now().Sub(before) / 2)
		ms := math.Round(float64(at.Sub(mid))/1e5) / 10
		return &ms, nil
	})
	for i, n := range nodes {
		if offsets[i] != nil {
			s := v.Shown[n.Name]
			s.SystemMS = offsets[i]
			v.Shown[n.Name] = s
		}
	}
}

// vdsoShowsFault reports whether what node's process read back is the
// fault v asked of it: its rate, or its jumps' sum (to 50 ms: the
// reading comes a moment after the write, and the system's own clock
// steps meanwhile).
func vdsoShowsFault(v *faultrec.Clock, node string, l *vdsoclock.Line) bool {
	if v.Kind == clockRate {
		return math.Abs(l.Rate-v.Rates[node]) < 1e-6
	}
	var total int64
	for _, ms := range clockJumps(v, node) {
		total += ms
	}
	return math.Abs(float64(l.RealtimeNS)/1e6-float64(total)) < 50
}

// setVDSORate makes node's clocks run at rate times true time through the
// vdso patch, for the sequence's undo to reset, and returns the rate its
// process reads back.
func (s *sequence) setVDSORate(ctx context.Context, c *Cluster, node string, rate float64) (float64, error) {
	n, err := nodeByName(c, node)
	if err != nil {
		return 0, err
	}
	s.vdsos = append(s.vdsos, node)
	l, err := vdsoSet(ctx, c, n, vdsoSkew{rate: rate})
	if err != nil {
		return 0, err
	}
	return l.Rate, nil
}

// resetVDSOClocks puts the kernel's clock back in the processes of nodes.
func resetVDSOClocks(ctx context.Context, c *Cluster, nodes []string) error {
	var errs []error
	for _, name := range nodes {
		n, err := nodeByName(c, name)
		if err == nil {
			err = vdsoReset(ctx, c, n)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// PatchClocks patches the processes of every node of c with the vdso
// clock at offset 0 and true rate: what the patch costs, no clock moved
// (chaos bench --vdso-clock). The patches go with the processes.
func PatchClocks(ctx context.Context, c *Cluster) error {
	if err := vdsoAvailable(ctx, c); err != nil {
		return err
	}
	c.skewTable() // made here: the nodes below run concurrently
	_, err := mapNodes(c.Nodes, func(n db.Node) (*vdsoclock.Line, error) { return vdsoSet(ctx, c, n, vdsoSkew{rate: 1}) })
	return err
}

// resetSlowed puts true time back in the clocks of nodes that the
// sequence slowed, through the hooks or the vdso patch, whichever it used,
// and forgets them.
func (s *sequence) resetSlowed(ctx context.Context, c *Cluster, nodes []string) error {
	var hooked, patched []string
	for _, n := range nodes {
		if slices.Contains(s.vdsos, n) {
			patched = append(patched, n)
		} else {
			hooked = append(hooked, n)
		}
	}
	s.vdsos = slices.DeleteFunc(s.vdsos, func(n string) bool { return slices.Contains(patched, n) })
	return errors.Join(s.resetClocks(ctx, c, hooked), resetVDSOClocks(ctx, c, patched))
}
