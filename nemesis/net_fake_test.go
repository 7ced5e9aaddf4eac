package nemesis

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"chaos/control"
	"chaos/control/remotetest"
	"chaos/db"
	"chaos/nemesis/hostcmd"
)

// This file holds the fakes of the network fault tests: a host that
// simulates iptables and tc closely enough to tell chaos's rules from the
// host's own, and chaos-node fault hooks that record their requests.

// Probe answers of three kinds of host.
const (
	// netProbeNetem is a host whose kernel has everything.
	netProbeNetem = "iptables ok\nstatistic ok\nhtb ok\nu32 ok\nnetem ok\nredirect ok\ntee ok\nss ok\n"
	// netProbeNoNetem is this machine: root, iptables (with nat REDIRECT
	// and TEE), htb, u32, ss, no netem.
	netProbeNoNetem = "iptables ok\nstatistic ok\nhtb ok\nu32 ok\nnetem no exit 2: Error: Specified qdisc kind is unknown.\n" +
		"redirect ok\ntee ok\nss ok\n"
	// netProbeNotRoot is local mode as an ordinary user.
	netProbeNotRoot = "iptables no exit 4: iptables v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied (you must be root)\n" +
		"statistic no exit 1: unshare: unshare failed: Operation not permitted\n" +
		"htb no exit 1: unshare: unshare failed: Operation not permitted\n" +
		"u32 no exit 1: unshare: unshare failed: Operation not permitted\n" +
		"netem no exit 1: unshare: unshare failed: Operation not permitted\n" +
		"redirect no exit 1: unshare: unshare failed: Operation not permitted\n" +
		"tee no exit 1: unshare: unshare failed: Operation not permitted\n" +
		"ss ok\n"
)

// netFakeHost is one simulated host (one network namespace), reached by
// one or more node Remotes: several in local mode, where every node lives
// on this machine. Its Remotes record every call into its log.
type netFakeHost struct {
	probe   string // answer to the capability probe
	dev     string // the interface every route goes through
	notRoot bool   // iptables and tc changes are refused
	fail    string // a command containing it exits 1
	// answer, when set, answers the commands it knows (ok true) before
	// the simulation does.
	answer func(cmd string) (res control.Result, ok bool)

	mu     sync.Mutex
	log    *netLog
	chains []string                 // custom chains of the filter table, in creation order
	rules  []string                 // the filter table's rules as `iptables -S` prints them, in order
	tables map[string]*netFakeTable // the other tables (nat, mangle), made on first use
	roots  map[string]string        // dev -> its root qdisc, as `tc qdisc show` prints it
	proxy  netFakeProxy
}

// netFakeTable is an iptables table other than filter.
type netFakeTable struct{ chains, rules []string }

// netFakeProxy is the fault proxy's daemon on a fake host.
type netFakeProxy struct {
	running bool
	starts  int
	sum     string // what sha256sum prints for the binary, "" when absent
}

// netLog is a transcript shared by hosts and hooks, so one test shows
// commands on every host and hook requests in the order they came.
type netLog struct{ remotetest.Recorder }

// take returns the transcript so far, one "node: what" a line (see
// netShow), and starts a new one.
func (l *netLog) take() string {
	var lines []string
	for _, c := range l.Take() {
		lines = append(lines, c.Host+": "+netShow(c))
	}
	return strings.Join(lines, "\n") + "\n"
}

// netShow is how the transcript shows a call: a note as its text, a
// transfer by its remote file, and a command as it ran, but for the long
// scripts of the capability probe, of the fault proxy's daemon and of
// chaos-node's process, shown by name.
func netShow(c remotetest.Call) string {
	switch c.Kind {
	case remotetest.Note:
		return c.Text
	case remotetest.Upload, remotetest.Download:
		return string(c.Kind) + " " + c.Remote
	}
	switch what := netFakeDaemonCmd(c.Cmd); {
	case c.Cmd == hostcmd.NetProbeScript:
		return "<probe>"
	case what != "":
		return "<fault-proxy " + what + ">"
	case strings.Contains(c.Cmd, "kill -KILL"):
		return "<kill -KILL chaos-node>"
	case strings.Contains(c.Cmd, "setsid"):
		return "<start chaos-node>"
	case strings.HasPrefix(c.Cmd, "sleep 0.2; "):
		return "<check that chaos-node runs>"
	}
	return c.Cmd
}

func newNetFakeHost(log *netLog, probe, dev string) *netFakeHost {
	return &netFakeHost{probe: probe, dev: dev, log: log,
		roots: map[string]string{dev: "qdisc noqueue 0: dev " + dev + " root refcnt 2"}}
}

// remote returns a Remote on h named after node.
func (h *netFakeHost) remote(node string) control.Remote { return h.log.Remote(node, h.reply) }

// reply answers a call to one of h's Remotes: a command as the simulated
// host runs it, an upload (the fault proxy's binary) by keeping its sum.
func (h *netFakeHost) reply(c remotetest.Call) (control.Result, error) {
	switch c.Kind {
	case remotetest.Upload:
		sum, err := control.FileSHA256(c.Local)
		if err != nil {
			return control.Result{}, err
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		h.proxy.sum = sum
		return control.Result{}, nil
	case remotetest.Download:
		return control.Result{}, fmt.Errorf("%s: unexpected download", c.Host)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if what := netFakeDaemonCmd(c.Cmd); what != "" {
		return h.daemon(what), nil
	}
	return h.run(c.Cmd), nil
}

// netFakeDaemonCmd says which of the fault proxy daemon's commands (see
// db.Daemon) cmd is, or "" for another command: they are long shell
// scripts, shown in transcripts by this name.
func netFakeDaemonCmd(cmd string) string {
	switch {
	case !strings.Contains(cmd, "fault-proxy.pid") && !strings.Contains(cmd, "fault-proxy.started"):
		return ""
	case strings.Contains(cmd, "setsid"):
		return "start"
	case strings.Contains(cmd, "sleep 0.2"):
		return "check start"
	case strings.Contains(cmd, "kill -TERM"):
		return "stop"
	case strings.Contains(cmd, `echo "$p ${s%% *}"`):
		return "process"
	}
	return "unknown"
}

// daemon answers one of the fault proxy daemon's commands.
func (h *netFakeHost) daemon(what string) control.Result {
	switch what {
	case "start":
		h.proxy.running = true
		h.proxy.starts++
		return netOK("")
	case "check start":
		return netOK("")
	case "stop":
		h.proxy.running = false
		return netOK("")
	case "process":
		if h.proxy.running {
			return netOK("4242 S\n")
		}
		return netOK("")
	}
	return netFail(99, "the fake host does not know this daemon command")
}

func netOK(out string) control.Result { return control.Result{Stdout: []byte(out)} }

func netFail(code int, stderr string) control.Result {
	return control.Result{ExitCode: code, Stderr: []byte(stderr + "\n")}
}

var netRouteGet = regexp.MustCompile(`^ip -o route get (\S+)$`)

// run answers cmd; a command the fake does not know fails with 99, so a
// test notices.
func (h *netFakeHost) run(cmd string) control.Result {
	if h.answer != nil {
		if res, ok := h.answer(cmd); ok {
			return res
		}
	}
	switch {
	case h.fail != "" && strings.Contains(cmd, h.fail):
		return netFail(1, "canned failure")
	case cmd == hostcmd.NetProbeScript:
		return netOK(h.probe)
	case netRouteGet.MatchString(cmd):
		return netOK(netRouteGet.FindStringSubmatch(cmd)[1] + " dev " + h.dev + " src 10.0.0.1 uid 0\\    cache \n")
	case strings.HasPrefix(cmd, "iptables "):
		if h.notRoot {
			return netFail(4, "iptables v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied (you must be root)")
		}
		return h.iptables(cmd)
	case strings.HasPrefix(cmd, "ss -K "):
		return netOK("")
	case strings.HasPrefix(cmd, "mkdir -p ") && strings.Contains(cmd, "sha256sum "):
		if h.proxy.sum == "" {
			return netOK("")
		}
		return netOK(h.proxy.sum + "  /opt/chaos/chaos-fault-proxy\n")
	case strings.Contains(cmd, " fault-proxy set "):
		if !h.proxy.running {
			return netFail(255, "chaos: fault proxy at /var/lib/chaos/fault-proxy/control.sock: dial unix: connect: no such file or directory")
		}
		return netOK(`{"port":40001,"owners":{}}` + "\n")
	case strings.HasPrefix(cmd, "tc "):
		return h.tc(cmd)
	}
	return netFail(99, "the fake host does not know this command")
}

var (
	netIPTTable       = regexp.MustCompile(`^iptables -w -t (\S+) `)
	netIPTEnsureChain = regexp.MustCompile(`^iptables -w -N (\S+) 2>/dev/null \|\| iptables -w -S (\S+) >/dev/null$`)
	netIPTEnsureJump  = regexp.MustCompile(`^iptables -w -C (\S+) -j (\S+) 2>/dev/null \|\| iptables -w -I (\S+) 1 -j (\S+)$`)
	netIPTAppend      = regexp.MustCompile(`^iptables -w -A (\S+) (.+)$`)
	netIPTDelete      = regexp.MustCompile(`^iptables -w -D (\S+) (.+)$`)
	netIPTChainOp     = regexp.MustCompile(`^iptables -w -([FX]) (\S+)$`)
)

// netFakeBuiltins are the built-in chains of table, none for a table the
// fake does not know.
func netFakeBuiltins(table string) []string {
	return map[string][]string{
		"filter": {"INPUT", "FORWARD", "OUTPUT"},
		"nat":    {"PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"},
		"mangle": {"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"},
	}[table]
}

// iptables simulates the filter, nat and mangle tables for the commands
// chaos runs.
func (h *netFakeHost) iptables(cmd string) control.Result {
	table := "filter"
	if m := netIPTTable.FindStringSubmatch(cmd); m != nil {
		table = m[1]
		cmd = strings.ReplaceAll(cmd, "iptables -w -t "+table+" ", "iptables -w ")
	}
	if netFakeBuiltins(table) == nil {
		return netFail(3, "iptables v1.8.9 (nf_tables): table '"+table+"' does not exist")
	}
	chains, rules := &h.chains, &h.rules
	if table != "filter" {
		if h.tables == nil {
			h.tables = map[string]*netFakeTable{}
		}
		if h.tables[table] == nil {
			h.tables[table] = &netFakeTable{}
		}
		chains, rules = &h.tables[table].chains, &h.tables[table].rules
	}
	return netFakeIPTables(cmd, netFakeBuiltins(table), chains, rules)
}

// netFakeIPTables runs cmd (without its -t) on one table: its built-in
// chains, its custom chains and its rules.
func netFakeIPTables(cmd string, builtins []string, chains, rules *[]string) control.Result {
	if cmd == "iptables -w -S" {
		return netOK(netFakeIPTablesS(builtins, *chains, *rules))
	}
	if m := netIPTEnsureChain.FindStringSubmatch(cmd); m != nil && m[1] == m[2] {
		if !slices.Contains(*chains, m[1]) {
			*chains = append(*chains, m[1])
		}
		return netOK("")
	}
	if m := netIPTEnsureJump.FindStringSubmatch(cmd); m != nil && m[1] == m[3] && m[2] == m[4] {
		if rule := "-A " + m[1] + " -j " + m[2]; !slices.Contains(*rules, rule) {
			*rules = append([]string{rule}, *rules...)
		}
		return netOK("")
	}
	if m := netIPTAppend.FindStringSubmatch(cmd); m != nil {
		if !slices.Contains(*chains, m[1]) && !slices.Contains(builtins, m[1]) {
			return netFail(1, "iptables: No chain/target/match by that name.")
		}
		*rules = append(*rules, "-A "+m[1]+" "+m[2])
		return netOK("")
	}
	if m := netIPTDelete.FindStringSubmatch(cmd); m != nil {
		i := slices.Index(*rules, "-A "+m[1]+" "+m[2])
		if i < 0 {
			return netFail(1, "iptables: Bad rule (does a matching rule exist in that chain?).")
		}
		*rules = slices.Delete(*rules, i, i+1)
		return netOK("")
	}
	if m := netIPTChainOp.FindStringSubmatch(cmd); m != nil {
		return netFakeChainOp(m[1], m[2], chains, rules)
	}
	return netFail(99, "the fake iptables does not know this command")
}

// netFakeChainOp flushes (F) or deletes (X) a custom chain.
func netFakeChainOp(op, chain string, chains, rules *[]string) control.Result {
	if !slices.Contains(*chains, chain) {
		return netFail(1, "iptables: No chain/target/match by that name.")
	}
	in := func(r string) bool { return strings.HasPrefix(r, "-A "+chain+" ") }
	if op == "F" {
		*rules = slices.DeleteFunc(*rules, in)
		return netOK("")
	}
	for _, r := range *rules {
		if in(r) || strings.HasSuffix(r, " -j "+chain) {
			return netFail(1, "iptables: Too many links.")
		}
	}
	*chains = slices.DeleteFunc(*chains, func(c string) bool { return c == chain })
	return netOK("")
}

// netFakeIPTablesS prints a table as `iptables -S` does: policies, custom
// chains, then rules chain by chain.
func netFakeIPTablesS(builtins, chains, rules []string) string {
	var b strings.Builder
	for _, c := range builtins {
		b.WriteString("-P " + c + " ACCEPT\n")
	}
	for _, c := range chains {
		b.WriteString("-N " + c + "\n")
	}
	for _, chain := range append(slices.Clone(builtins), chains...) {
		for _, r := range rules {
			if strings.HasPrefix(r, "-A "+chain+" ") {
				b.WriteString(r + "\n")
			}
		}
	}
	return b.String()
}

// iptablesS prints the filter table as `iptables -S` does.
func (h *netFakeHost) iptablesS() string {
	return netFakeIPTablesS(netFakeBuiltins("filter"), h.chains, h.rules)
}

var (
	netTCDev  = regexp.MustCompile(` dev (\S+)`)
	netTCRoot = regexp.MustCompile(`^tc qdisc add dev (\S+) root handle c4a5: htb 2>/dev/null \|\| tc qdisc show dev (\S+) root \| grep -q '\^qdisc htb c4a5: ' \|\| \{ echo '[^']+' >&2; exit 1; \}$`)
)

// tc simulates root qdiscs; classes, leaves and filters only need chaos's
// root on their device (and netem a kernel that has it).
func (h *netFakeHost) tc(cmd string) control.Result {
	ours := "qdisc htb c4a5: dev %s root refcnt 2 r2q 10 default 0 direct_packets_stat 0 direct_qlen 1000"
	switch m := netTCRoot.FindStringSubmatch(cmd); {
	case cmd == "tc qdisc show":
		devs := make([]string, 0, len(h.roots))
		for d := range h.roots {
			devs = append(devs, d)
		}
		sort.Strings(devs)
		var b strings.Builder
		for _, d := range devs {
			b.WriteString(h.roots[d] + "\n")
		}
		return netOK(b.String())
	case m != nil:
		if root := h.roots[m[1]]; strings.Contains(root, " 0: ") || strings.Contains(root, " c4a5: ") || root == "" {
			h.roots[m[1]] = fmt.Sprintf(ours, m[1])
			return netOK("")
		}
		return netFail(1, "cannot add the chaos root qdisc on "+m[1]+": the root qdisc there belongs to the host")
	case strings.HasPrefix(cmd, "tc qdisc del dev "):
		dev := netTCDev.FindStringSubmatch(cmd)[1]
		if !strings.Contains(h.roots[dev], " c4a5: ") || !strings.HasSuffix(cmd, " root handle c4a5:") {
			return netFail(2, "Error: Invalid handle.")
		}
		h.roots[dev] = "qdisc noqueue 0: dev " + dev + " root refcnt 2"
		return netOK("")
	case strings.HasPrefix(cmd, "tc class add dev "), strings.HasPrefix(cmd, "tc qdisc add dev "), strings.HasPrefix(cmd, "tc filter add dev "):
		if strings.Contains(cmd, " netem ") && strings.Contains(h.probe, "netem no") {
			return netFail(2, "Error: Specified qdisc kind is unknown.")
		}
		if !strings.Contains(h.roots[netTCDev.FindStringSubmatch(cmd)[1]], " c4a5: ") {
			return netFail(2, "Error: Failed to find specified qdisc.")
		}
		return netOK("")
	}
	return netFail(99, "the fake tc does not know this command")
}

// netHooks are fake chaos-node fault hooks, one server per node, that log
// each request into the shared transcript.
type netHooks struct {
	log     *netLog
	servers map[string]*httptest.Server
	// status answers every request when non-zero (403: hooks disabled).
	status atomic.Int32
}

func newNetHooks(t *testing.T, log *netLog, nodes []db.Node) *netHooks {
	h := &netHooks{log: log, servers: map[string]*httptest.Server{}}
	for _, n := range nodes {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			line := fmt.Sprintf("hook %s %s", r.Method, r.URL.Path)
			if len(body) > 0 {
				line += " " + string(body)
			}
			log.Note(n.Name, line)
			if code := int(h.status.Load()); code != 0 {
				w.WriteHeader(code)
				_ = json.NewEncoder(w).Encode(map[string]string{"error": "fault hooks are disabled"})
				return
			}
			_, _ = io.WriteString(w, "{}")
		}))
		t.Cleanup(srv.Close)
		h.servers[n.Name] = srv
	}
	return h
}

// hooks are the fake hooks as a Cluster's.
func (h *netHooks) hooks() db.Hooks { return &db.ChaosNodeHooks{Addrs: h.addrs()} }

// hookAddrs are the hook addresses of c's chaos-node hooks, by node.
func hookAddrs(c *Cluster) map[string]string { return c.Hooks.(*db.ChaosNodeHooks).Addrs }

// addrs are the hook addresses, by node.
func (h *netHooks) addrs() map[string]string {
	out := map[string]string{}
	for n, s := range h.servers {
		out[n] = strings.TrimPrefix(s.URL, "http://")
	}
	return out
}

// netCluster is a cluster of k nodes at base.11, base.12, ...
func netCluster(base string, k int) *Cluster {
	c := &Cluster{Remotes: map[string]control.Remote{}}
	for i := range k {
		c.Nodes = append(c.Nodes, db.Node{Name: fmt.Sprintf("n%d", i+1), Addr: fmt.Sprintf("%s.%d", base, 11+i)})
	}
	return c
}

// netSeparateHosts gives each node of c a host of its own, all of the same
// kind, logging into log.
func netSeparateHosts(c *Cluster, log *netLog, probe string) map[string]*netFakeHost {
	hosts := map[string]*netFakeHost{}
	for _, n := range c.Nodes {
		hosts[n.Name] = newNetFakeHost(log, probe, "eth0")
		c.Remotes[n.Name] = hosts[n.Name].remote(n.Name)
	}
	return hosts
}

// netOpLine renders an op, after the commands that made it, as the
// history would carry it.
func netOpLine(t *testing.T, op Op) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"f": op.F, "value": op.Value})
	require.NoError(t, err)
	return "=> " + string(b) + "\n"
}
