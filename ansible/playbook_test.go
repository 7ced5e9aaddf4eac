package ansible

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/testbed"
	"chaos/testbed/bedtest"
)

// playbookTestDeadline bounds TestPlaybookOnTestbed, so that a hung step
// fails it with a message instead of hanging until go test's timeout. It is
// no speed requirement: the test takes about 40 s alone on two cores.
const playbookTestDeadline = 5 * time.Minute

// testSubnet is the testbed network of this package's test; the other
// packages' end-to-end tests use other subnets, so they can run at the same
// time.
const testSubnet = "10.77.242.0/24"

// unavailable skips the test when this machine lacks what it needs, or fails
// it in CI, where test.sh installs everything.
func unavailable(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("cannot run: %s", why)
	}
	t.Skip(why)
}

// requireCommand returns the path of a program, or skips (fails in CI)
// naming the Debian package that provides it.
func requireCommand(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		unavailable(t, fmt.Sprintf("%s is missing: install it with `apt-get install %s`", name, pkg))
	}
	return path
}

// ansibleEnv is the environment of every ansible command of the tests: this
// process's minus its ANSIBLE_* settings, which could change what ansible
// does or prints, plus an empty configuration file (so no ansible.cfg of the
// working directory or /etc is read) and a private directory for ansible's
// and ansible-lint's own files instead of ~/.ansible and ~/.cache. That
// directory is short because ssh's control sockets live in it.
func ansibleEnv(t *testing.T) []string {
	t.Helper()
	home, err := os.MkdirTemp("", "ansible")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(home) })
	cfg := filepath.Join(home, "ansible.cfg")
	require.NoError(t, os.WriteFile(cfg, nil, 0o644))
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANSIBLE_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"ANSIBLE_CONFIG="+cfg,
		"ANSIBLE_HOME="+home,
		"ANSIBLE_LOCAL_TEMP="+filepath.Join(home, "tmp"),
		"ANSIBLE_SSH_CONTROL_PATH_DIR="+filepath.Join(home, "cp"),
		"ANSIBLE_STDOUT_CALLBACK=default",
		"ANSIBLE_NOCOLOR=1",
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"),
	)
}

// run runs a program in dir with env and returns its combined output. A
// program killed because ctx ended says so, rather than only "signal:
// killed".
func run(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%s: %w (%v: the test's deadline)", name, err, ctx.Err())
	}
	return string(out), err
}

// The example inventory parses into the group site.yml plays on, and
// site.yml with every task file it imports passes ansible's syntax check.
func TestExampleInventoryAndSyntax(t *testing.T) {
	requireCommand(t, "ansible-playbook", "ansible")
	requireCommand(t, "ansible-inventory", "ansible")
	env := ansibleEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	out, err := run(ctx, ".", env, "ansible-playbook", "--syntax-check", "-i", "inventory.example.ini", "site.yml")
	require.NoError(t, err, out)

	out, err = run(ctx, ".", env, "ansible-inventory", "-i", "inventory.example.ini", "--list")
	require.NoError(t, err, out)
	var inv struct {
		ChaosNodes struct {
			Hosts []string `json:"hosts"`
		} `json:"chaos_nodes"`
		Meta struct {
			HostVars map[string]map[string]any `json:"hostvars"`
		} `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &inv), out)
	require.Equal(t, []string{"n1", "n2", "n3"}, inv.ChaosNodes.Hosts)
	for i, h := range inv.ChaosNodes.Hosts {
		vars := inv.Meta.HostVars[h]
		require.Equal(t, "192.168.122.1"+strconv.Itoa(i+1), vars["ansible_host"], h)
		require.NotEmpty(t, vars["ansible_user"], h)
	}
}

// The playbooks pass ansible-lint's strictest profile with the settings in
// .ansible-lint.
func TestLint(t *testing.T) {
	requireCommand(t, "ansible-lint", "ansible-lint")
	env := ansibleEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// From the repository's root, as ansible-lint finds files through git.
	out, err := run(ctx, "..", env, "ansible-lint", "--nocolor", "-c", "ansible/.ansible-lint", "ansible")
	require.NoError(t, err, out)
	require.Contains(t, out, "Passed with production profile")
}

// fixture is a testbed and what the end-to-end test needs to reach it.
type fixture struct {
	dir   string // the testbed directory
	hosts []testbed.Host
	env   []string // for ansible commands
	inv   string   // inventory of the hosts
}

// ssh runs a shell script on host h as root with the testbed's key, checking
// the host's key against the testbed's known_hosts.
func (f *fixture) ssh(ctx context.Context, h testbed.Host, script string) (string, error) {
	return run(ctx, f.dir, nil, "ssh", "-i", filepath.Join(f.dir, testbed.KeyFile),
		"-o", "UserKnownHostsFile="+filepath.Join(f.dir, testbed.KnownHostsFile),
		"-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
		"root@"+h.Addr, script)
}

// playbook runs ansible-playbook from this directory with the fixture's
// inventory.
func (f *fixture) playbook(ctx context.Context, args ...string) (string, error) {
	return run(ctx, ".", f.env, "ansible-playbook", append([]string{"-i", f.inv}, args...)...)
}

// recap is one host's line of a PLAY RECAP.
type recap struct{ ok, changed, unreachable, failed int }

var recapLine = regexp.MustCompile(`(?m)^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)`)

// parseRecap reads the PLAY RECAP at the end of ansible-playbook's output.
func parseRecap(t *testing.T, out string) map[string]recap {
	t.Helper()
	i := strings.LastIndex(out, "PLAY RECAP")
	require.GreaterOrEqual(t, i, 0, "no PLAY RECAP in:\n%s", out)
	recaps := map[string]recap{}
	for _, m := range recapLine.FindAllStringSubmatch(out[i:], -1) {
		n := make([]int, 4)
		for j := range n {
			n[j], _ = strconv.Atoi(m[j+2])
		}
		recaps[m[1]] = recap{ok: n[0], changed: n[1], unreachable: n[2], failed: n[3]}
	}
	return recaps
}

// Issue 5's end-to-end test: site.yml prepares two testbed hosts, with the
// SSH key and NTP tasks on and a chaos binary to upload; a second run changes
// nothing; the hosts then have the directories, the packages, the binary and
// the key; and the chaos-node unit the role would install, rendered on the
// hosts, is a valid unit whose command starts a working cluster.
//
// Not exercised: apt refreshing its cache (the hosts have no route beyond
// the testbed's bridge, and share the machine's /usr, where the packages are
// already installed; with chaos_apt_update_cache off the role must not
// refresh even when the machine's apt lists are older than
// chaos_apt_cache_valid_time, or the apt task hangs until the deadline, as
// it did before the role stopped passing cache_valid_time then), root's own authorized_keys (/root is the machine's, so
// the key goes to a file in the hosts' private /var/lib/chaos), stopping NTP
// services and running the unit under systemd (the hosts have no systemd:
// the NTP tasks must skip, and the service tasks need systemd).
func TestPlaybookOnTestbed(t *testing.T) {
	sys := requireTestbedMachine(t)
	bin := bedtest.BuildChaos(t)
	ctx, cancel := context.WithTimeout(context.Background(), playbookTestDeadline)
	defer cancel()

	start := time.Now()
	phase := func(what string) { t.Logf("%5.1fs %s", time.Since(start).Seconds(), what) }
	dir := filepath.Join(t.TempDir(), "tb")
	st, err := testbed.Up(ctx, sys, testbed.Config{Dir: dir, Hosts: 2, Subnet: testSubnet})
	require.NoError(t, err)
	t.Cleanup(func() {
		if _, err := testbed.Down(context.Background(), sys, dir); err != nil {
			t.Errorf("take the testbed down: %v", err)
		}
	})
	phase("testbed up")
	f := &fixture{dir: dir, hosts: st.Hosts, env: ansibleEnv(t)}
	for _, h := range f.hosts {
		nameHost(ctx, t, f, h)
	}
	pub, err := os.ReadFile(filepath.Join(dir, testbed.KeyFile+".pub"))
	require.NoError(t, err)
	key := strings.TrimSpace(string(pub))
	f.inv = writeInventory(t, f, key)

	// What the test turns on, and what the testbed cannot do.
	vars := filepath.Join(t.TempDir(), "vars.json")
	writeJSON(t, vars, map[string]any{
		"chaos_apt_update_cache":     false,
		"chaos_disable_ntp":          true,
		"chaos_authorized_keys_file": "/var/lib/chaos/authorized_keys",
		"chaos_binary":               bin,
	})
	out, err := f.playbook(ctx, "-e", "@"+vars, "site.yml")
	require.NoError(t, err, out)
	phase("first run")
	first := parseRecap(t, out)
	for _, h := range f.hosts {
		r, ok := first[h.Name]
		require.True(t, ok, "no recap line for %s:\n%s", h.Name, out)
		require.Zero(t, r.failed+r.unreachable, "%s: %+v\n%s", h.Name, r, out)
		require.Positive(t, r.changed, "the first run creates %s's node directory and uploads chaos:\n%s", h.Name, out)
		require.Contains(t, out, h.Name+" is not managed by systemd", "the NTP tasks skip on hosts without systemd")
	}

	out, err = f.playbook(ctx, "-e", "@"+vars, "site.yml")
	require.NoError(t, err, out)
	phase("second run")
	second := parseRecap(t, out)
	for _, h := range f.hosts {
		r, ok := second[h.Name]
		require.True(t, ok, "no recap line for %s:\n%s", h.Name, out)
		require.Equal(t, recap{ok: r.ok}, r, "the second run on %s changes nothing:\n%s", h.Name, out)
		require.Positive(t, r.ok, out)
	}

	sum := sha256.Sum256(readFile(t, bin))
	for _, h := range f.hosts {
		checkHost(ctx, t, f, h, key, hex.EncodeToString(sum[:]))
	}
	phase("hosts checked")
	checkServiceUnit(ctx, t, f)
	phase("unit rendered, verified and started")
}

// requireTestbedMachine checks that this machine can host a testbed
// (bedtest.Require, which also honours -short and bedtest.SkipEnv) and run
// ansible against it.
func requireTestbedMachine(t *testing.T) testbed.System {
	t.Helper()
	sys := bedtest.Require(t)
	requireCommand(t, "ansible-playbook", "ansible")
	requireCommand(t, "ssh", "openssh-client")
	// The hosts run the machine's /usr/bin/python3, and ansible's apt module
	// needs python3-apt; it would install it itself, but the hosts have no
	// route to a mirror.
	if err := exec.Command("/usr/bin/python3", "-c", "import apt").Run(); err != nil {
		unavailable(t, "/usr/bin/python3 cannot import apt: install it with `apt-get install python3-apt`")
	}
	return sys
}

// nameHost makes host h resolve its own name, as a real host does: the
// testbed's hosts share the machine's /etc/hosts, which does not name them,
// and have no route to a DNS server, so sudo and fact gathering would each
// wait for a DNS timeout. The host's mount namespace is its own, so the
// bind mount hides the machine's /etc/hosts from that host only.
func nameHost(ctx context.Context, t *testing.T, f *fixture, h testbed.Host) {
	t.Helper()
	script := fmt.Sprintf(`set -e
printf '127.0.0.1\tlocalhost\n%s\t%s\n' > /tmp/etc-hosts
mount --bind /tmp/etc-hosts /etc/hosts`, h.Addr, h.Name)
	out, err := f.ssh(ctx, h, script)
	require.NoError(t, err, "%s: %s", h.Name, out)
}

// writeInventory writes the testbed inventory README.md describes, with two
// differences: become stays on, as on real hosts (nameHost made sudo fast),
// and each host gets a key to authorize, as the key itself on the first host
// and as the path of the .pub file on the others.
func writeInventory(t *testing.T, f *fixture, key string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("[chaos_nodes]\n")
	for i, h := range f.hosts {
		authorized := filepath.Join(f.dir, testbed.KeyFile+".pub")
		if i == 0 {
			authorized = key
		}
		fmt.Fprintf(&b, "%s ansible_host=%s chaos_authorized_key='%s'\n", h.Name, h.Addr, authorized)
	}
	fmt.Fprintf(&b, `
[chaos_nodes:vars]
ansible_user=root
ansible_ssh_private_key_file=%s
ansible_ssh_common_args='-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes'
ansible_python_interpreter=/usr/bin/python3
ansible_remote_tmp=/tmp/.ansible
ansible_pipelining=true
`, filepath.Join(f.dir, testbed.KeyFile), filepath.Join(f.dir, testbed.KnownHostsFile))
	path := filepath.Join(t.TempDir(), "inventory.ini")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// checkHost checks over SSH what site.yml made on host h: its directories,
// the uploaded binary, the authorized key and the nemeses' packages.
func checkHost(ctx context.Context, t *testing.T, f *fixture, h testbed.Host, key, binSum string) {
	t.Helper()
	node := "/var/lib/chaos/chaos-node/" + h.Name
	script := fmt.Sprintf(`set -e
stat -c '%%n %%F %%a %%U' /opt/chaos /var/lib/chaos %[1]s %[1]s/data /opt/chaos/chaos /var/lib/chaos/authorized_keys
sha256sum /opt/chaos/chaos | cut -d' ' -f1
dpkg-query -W -f '${Package} ${Status}\n' iproute2 iptables procps
command -v iptables ip tc pkill >/dev/null`, node)
	out, err := f.ssh(ctx, h, script)
	require.NoError(t, err, "%s: %s", h.Name, out)
	want := fmt.Sprintf(`/opt/chaos directory 755 root
/var/lib/chaos directory 755 root
%[1]s directory 755 root
%[1]s/data directory 755 root
/opt/chaos/chaos regular file 755 root
/var/lib/chaos/authorized_keys regular file 600 root
%[2]s
iproute2 install ok installed
iptables install ok installed
procps install ok installed
`, node, binSum)
	require.Equal(t, want, out, h.Name)

	// One line, the key; the module may end it with a space for the
	// comment the testbed's key does not have.
	out, err = f.ssh(ctx, h, "cat /var/lib/chaos/authorized_keys")
	require.NoError(t, err, "%s: %s", h.Name, out)
	require.Equal(t, 1, strings.Count(out, "\n"), "%s's authorized_keys:\n%s", h.Name, out)
	require.Equal(t, strings.Fields(key), strings.Fields(out), h.Name)
}

// renderUnit templates the role's chaos-node unit with the role's defaults
// to /tmp/chaos-node.service on every host, as service.yml would to
// /etc/systemd/system, which needs systemd.
const renderUnit = `---
- name: Render the chaos-node unit
  hosts: chaos_nodes
  gather_facts: false
  vars_files:
    - %[1]s/roles/chaos_host/defaults/main.yml
  tasks:
    - name: Template the unit to /tmp
      ansible.builtin.template:
        src: %[1]s/roles/chaos_host/templates/chaos-node.service.j2
        dest: /tmp/chaos-node.service
        mode: "0644"
`

var execStart = regexp.MustCompile(`(?m)^ExecStart=(.*)$`)

// checkServiceUnit renders the chaos-node unit on the hosts, checks its
// command line (the layout `chaos run` uses, every host a peer),
// verifies it with systemd-analyze when there is one, and starts every
// host's command: the nodes must elect one leader.
func checkServiceUnit(ctx context.Context, t *testing.T, f *fixture) {
	t.Helper()
	abs, err := filepath.Abs(".")
	require.NoError(t, err)
	play := filepath.Join(t.TempDir(), "render.yml")
	require.NoError(t, os.WriteFile(play, fmt.Appendf(nil, renderUnit, abs), 0o644))
	out, err := f.playbook(ctx, "-e", `{"chaos_node_extra_args": ["--heartbeat-interval", "20ms", "--election-timeout", "200ms"]}`, play)
	require.NoError(t, err, out)

	var peers []string
	for _, h := range f.hosts {
		peers = append(peers, h.Name+"="+h.Addr+":7001")
	}
	_, noAnalyze := exec.LookPath("systemd-analyze")
	for _, h := range f.hosts {
		unit, err := f.ssh(ctx, h, "cat /tmp/chaos-node.service")
		require.NoError(t, err, unit)
		m := execStart.FindStringSubmatch(unit)
		require.NotNil(t, m, "no ExecStart in %s's unit:\n%s", h.Name, unit)
		want := fmt.Sprintf("/opt/chaos/chaos node --id %[1]s --data-dir /var/lib/chaos/chaos-node/%[1]s/data"+
			" --log-dir /var/lib/chaos/chaos-node/%[1]s --client-addr %[2]s:7000 --peer-addr %[2]s:7001"+
			" --peers %[3]s --heartbeat-interval 20ms --election-timeout 200ms", h.Name, h.Addr, strings.Join(peers, ","))
		require.Equal(t, want, m[1], h.Name)
		if noAnalyze == nil {
			// It also checks that ExecStart's program exists on the host.
			out, err := f.ssh(ctx, h, "systemd-analyze verify /tmp/chaos-node.service")
			require.NoError(t, err, "%s: %s\n%s", h.Name, out, unit)
		}
		// No quoting in want, so the shell splits it as systemd does.
		out, err = f.ssh(ctx, h, "setsid "+m[1]+" </dev/null >/tmp/chaos-node.log 2>&1 &")
		require.NoError(t, err, "%s: %s", h.Name, out)
	}
	waitForLeader(ctx, t, f)
}

// waitForLeader waits until every host's node names the same leader.
func waitForLeader(ctx context.Context, t *testing.T, f *fixture) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	var seen []string
	for time.Now().Before(deadline) {
		seen = seen[:0]
		for _, h := range f.hosts {
			seen = append(seen, leaderOf(client, h))
		}
		if agree(seen) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	var logs strings.Builder
	for _, h := range f.hosts {
		out, _ := f.ssh(ctx, h, "tail -n 20 /tmp/chaos-node.log")
		fmt.Fprintf(&logs, "--- %s\n%s", h.Name, out)
	}
	t.Fatalf("the nodes the units describe elected no common leader (leaders seen: %q); their logs:\n%s", seen, logs.String())
}

// agree says whether every node names the same, non-empty leader.
func agree(leaders []string) bool {
	for _, l := range leaders {
		if l == "" || l != leaders[0] {
			return false
		}
	}
	return true
}

// leaderOf is the leader host h's node names in /status, or "".
func leaderOf(client *http.Client, h testbed.Host) string {
	resp, err := client.Get("http://" + h.Addr + ":7000/status")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var st struct {
		Leader string `json:"leader"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&st) != nil {
		return ""
	}
	return st.Leader
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
