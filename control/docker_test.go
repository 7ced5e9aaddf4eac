package control

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"chaos/control/dockertest"
)

// testImage is the image of the Docker tests' containers: a static
// busybox and its applets, nothing else, built offline by importing a root
// file system.
const testImage = "chaos-control-test:busybox"

// requireDocker skips the test when no Docker daemon answers (under CI it
// fails: test.sh installs and starts one) and makes testImage when it is
// missing.
func requireDocker(t *testing.T) {
	t.Helper()
	why := ""
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		why = "no Docker daemon answers: " + firstLine(string(out))
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	if exec.Command("docker", "image", "inspect", testImage).Run() == nil {
		return
	}
	busybox, err := exec.LookPath("busybox")
	if err != nil && !aptInstall(t, "busybox-static") {
		t.Fatal("busybox is missing: apt-get install busybox-static")
	}
	if busybox, err = exec.LookPath("busybox"); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, d := range []string{"bin", "tmp", "etc"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	data, err := os.ReadFile(busybox)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "bin", "busybox"), data, 0o755))
	applets, err := exec.Command(busybox, "--list").Output()
	require.NoError(t, err)
	for _, a := range strings.Fields(string(applets)) {
		if a != "busybox" {
			require.NoError(t, os.Symlink("busybox", filepath.Join(root, "bin", a)))
		}
	}
	imp := exec.Command("sh", "-c", "tar -C "+ShellQuote(root)+" -c . | docker import - "+testImage)
	out, err := imp.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// startContainer runs a container of testImage until the test ends and
// returns its name.
func startContainer(t *testing.T, args ...string) string {
	t.Helper()
	requireDocker(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "chaos-ctl-" + hex.EncodeToString(b[:])
	runArgs := append([]string{"run", "-d", "--name", name}, args...)
	runArgs = append(runArgs, testImage, "sleep", "1000000")
	out, err := exec.Command("docker", runArgs...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", name).Run() })
	return name
}

// dialContainer is the Remote of container in mode, named n1, closed when
// the test ends.
func dialContainer(t *testing.T, container, mode string) Remote {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := DialDocker(ctx, "n1", container, DockerConfig{Mode: mode})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

// mkdirIn makes a new empty directory on r's host and returns it.
func mkdirIn(t *testing.T, r Remote) string {
	t.Helper()
	out := run(t, r, "mktemp -d /tmp/contract.XXXXXX")
	require.Zero(t, out.ExitCode, "%s", out.Stderr)
	return strings.TrimSpace(string(out.Stdout))
}

func TestContainerName(t *testing.T) {
	for host, want := range map[string]string{"docker:n1": "n1", "docker:etcd-1.a_b": "etcd-1.a_b",
		"docker:0123abcd": "0123abcd"} {
		name, ok, err := ContainerName(host)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want, name)
	}
	_, ok, err := ContainerName("root@10.0.0.1:22")
	require.NoError(t, err)
	require.False(t, ok, "an SSH host")
	for _, bad := range []string{"docker:", "docker:-H tcp://x", "docker:a b", "docker:a;rm -rf /", "docker:../x",
		"docker:" + strings.Repeat("a", 254), "docker:-x"} {
		_, ok, err := ContainerName(bad)
		require.True(t, ok)
		require.ErrorContains(t, err, "not a container name: want docker:NAME", bad)
		require.NotContains(t, err.Error(), "\n")
	}
}

func TestTailBufferTakesTheExitReportOut(t *testing.T) {
	var b tailBuffer
	b.head.max = 1 << 10
	for _, chunk := range []string{"some err", "or\n", "\nchaos-ex", "it=42\n"} {
		_, _ = b.Write([]byte(chunk))
	}
	status, ok := b.exit()
	require.True(t, ok)
	require.Equal(t, 42, status)
	require.Equal(t, "some error\n", b.head.buf.String())

	var cut tailBuffer
	cut.head.max = 1 << 10
	_, _ = cut.Write([]byte("out\nchaos-exit=1"))
	_, ok = cut.exit()
	require.False(t, ok, "a report cut short is none")
}

func TestDialDockerRefusals(t *testing.T) {
	requireDocker(t)
	ctx := context.Background()
	_, err := DialDocker(ctx, "n1", "chaos-no-such-container", DockerConfig{})
	require.EqualError(t, err, "n1: docker:chaos-no-such-container: no such container (`docker ps -a` lists them)")

	stopped := startContainer(t)
	require.NoError(t, exec.Command("docker", "stop", "-t", "0", stopped).Run())
	_, err = DialDocker(ctx, "n2", stopped, DockerConfig{})
	require.EqualError(t, err, "n2: docker:"+stopped+": the container is exited, not running: `docker start "+stopped+"`")

	paused := startContainer(t)
	require.NoError(t, exec.Command("docker", "pause", paused).Run())
	_, err = DialDocker(ctx, "n3", paused, DockerConfig{})
	require.EqualError(t, err, "n3: docker:"+paused+": the container is paused, not running: `docker unpause "+paused+"` (or `chaos heal`)")
	require.NoError(t, exec.Command("docker", "unpause", paused).Run())

	down := "unix://" + filepath.Join(t.TempDir(), "no-daemon.sock")
	_, err = DialDocker(ctx, "n4", paused, DockerConfig{Host: down})
	require.ErrorContains(t, err, "n4: docker:"+paused+": the Docker daemon does not answer (")
	require.ErrorContains(t, err, "): start dockerd, or set DOCKER_HOST")
	require.NotContains(t, err.Error(), "\n")

	_, err = DialDocker(ctx, "n5", "x", DockerConfig{Bin: filepath.Join(t.TempDir(), "docker")})
	require.ErrorContains(t, err, "n5: docker:x: docker inspect: ")
}

// A command in a container that stops under it, or one refused because the
// container is paused, is an error naming the host, never a hang.
func TestDockerRunRefusedOrKilled(t *testing.T) {
	name := startContainer(t)
	r := dialContainer(t, name, DockerExec)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	require.NoError(t, exec.Command("docker", "pause", name).Run())
	_, err := r.Run(ctx, "true")
	require.ErrorContains(t, err, "n1: `true`: docker exec: Error response from daemon: ")
	require.ErrorContains(t, err, "paused")
	require.NotErrorIs(t, err, ErrConnectionLost, "a refused exec did not run")
	require.NoError(t, exec.Command("docker", "unpause", name).Run())

	done := make(chan struct{})
	var res Result
	go func() {
		defer close(done)
		res, err = r.Run(ctx, "touch /tmp/started; sleep 600")
	}()
	require.Eventually(t, func() bool { return run(t, r, "test -e /tmp/started").ExitCode == 0 },
		30*time.Second, 50*time.Millisecond)
	require.NoError(t, exec.Command("docker", "kill", name).Run())
	<-done
	require.NoError(t, err)
	require.Equal(t, 137, res.ExitCode, "killed with its container: 128+SIGKILL")
}

// The Engine's connection dropping mid-command is ErrConnectionLost: the
// command started and its end is unknown.
func TestDockerRunConnectionLost(t *testing.T) {
	name := startContainer(t)
	sock := filepath.Join(t.TempDir(), "docker.sock")
	px := startProxyOn(t, "unix", sock, "unix", "/var/run/docker.sock")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := DialDocker(ctx, "n1", name, DockerConfig{Host: "unix://" + sock, Mode: DockerExec})
	require.NoError(t, err)
	direct := dialContainer(t, name, DockerExec)

	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, "touch /tmp/started; sleep 600")
		done <- err
	}()
	require.Eventually(t, func() bool { return run(t, direct, "test -e /tmp/started").ExitCode == 0 },
		30*time.Second, 50*time.Millisecond)
	px.stop()
	err = <-done
	require.ErrorIs(t, err, ErrConnectionLost)
	require.True(t, strings.HasPrefix(err.Error(), "n1: `touch /tmp/started; sleep 600`: "), err.Error())
	require.NotContains(t, err.Error(), "\n")
	require.NoError(t, ctx.Err())
}

func TestDockerCallsAfterCloseFail(t *testing.T) {
	r := dialContainer(t, startContainer(t), DockerExec)
	require.NoError(t, r.Close())
	_, err := r.Run(context.Background(), "true")
	require.EqualError(t, err, "n1: `true`: the remote is closed")
	require.ErrorContains(t, r.Upload(context.Background(), "/etc/hostname", "/tmp/x", 0o644), "the remote is closed")
}

// A compose project's containers, in service and number order, in place of
// docker:compose:PROJECT; other hosts stay where they are.
func TestExpandComposeListsTheProjectsContainers(t *testing.T) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	project := "chaosp" + hex.EncodeToString(b[:])
	label := func(service, number string) []string {
		return []string{"--label", "com.docker.compose.project=" + project,
			"--label", "com.docker.compose.service=" + service, "--label", "com.docker.compose.container-number=" + number}
	}
	db2 := startContainer(t, label("db", "2")...)
	api := startContainer(t, label("api", "1")...)
	db1 := startContainer(t, label("db", "1")...)
	db10 := startContainer(t, label("db", "10")...)
	ctx := context.Background()
	hosts, err := ExpandCompose(ctx, []string{"10.0.0.1", ComposePrefix + project, "docker:x"}, DockerConfig{})
	require.NoError(t, err)
	require.Equal(t, []string{"10.0.0.1", "docker:" + api, "docker:" + db1, "docker:" + db2, "docker:" + db10, "docker:x"}, hosts)

	_, err = ExpandCompose(ctx, []string{ComposePrefix + project + "none"}, DockerConfig{})
	require.EqualError(t, err, "docker:compose:"+project+"none: no container of compose project "+project+
		"none: start them with `docker compose -p "+project+"none up -d`")
	_, err = ExpandCompose(ctx, []string{ComposePrefix + "-H"}, DockerConfig{})
	require.ErrorContains(t, err, "not a compose project name")
}

// A cluster of containers needs no SSH configuration: keys and known_hosts
// are read only when some host is reached over SSH. A container's node is
// at the container's address.
func TestDialerReadsSSHFilesOnlyForSSHHosts(t *testing.T) {
	name := startContainer(t)
	ssh := SSHConfig{KnownHosts: filepath.Join(t.TempDir(), "missing_known_hosts")}
	d, err := NewDialer([]string{"docker:" + name}, ssh, DockerConfig{})
	require.NoError(t, err)
	r, err := d.Dial(context.Background(), "docker:"+name)
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, "docker:"+name, r.Host())
	out, err := exec.Command("docker", "inspect", "--format", "{{.NetworkSettings.IPAddress}}", name).Output()
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(string(out)), r.(Addressed).Addr())

	_, err = NewDialer([]string{"docker:" + name, "10.0.0.1"}, ssh, DockerConfig{})
	require.ErrorContains(t, err, "ssh: nothing to log in with", "an SSH host needs a way to log in")
	_, err = NewDialer([]string{"docker:a;b"}, ssh, DockerConfig{})
	require.ErrorContains(t, err, "not a container name")
}

// Heal dials with Unpause: a container left paused is unpaused, not refused.
func TestDialDockerUnpausesForHeal(t *testing.T) {
	name := startContainer(t)
	require.NoError(t, exec.Command("docker", "pause", name).Run())
	r, err := DialDocker(context.Background(), "n1", name, DockerConfig{Unpause: true})
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, "ok\n", string(run(t, r, "echo ok").Stdout))
}

// In nsenter mode a paused container's commands are refused, as docker
// exec refuses them, instead of freezing with it; a restarted container
// (a new init process) is found again.
func TestDockerNsenterPausedAndRestarted(t *testing.T) {
	name := startContainer(t)
	r := dialContainer(t, name, DockerNsenter)
	require.Equal(t, "n1\n", string(run(t, r, "echo n1").Stdout))
	require.NoError(t, exec.Command("docker", "pause", name).Run())
	_, err := r.Run(context.Background(), "true")
	require.ErrorIs(t, err, errPaused)
	require.NoError(t, exec.Command("docker", "unpause", name).Run())

	before := string(run(t, r, "cat /proc/1/stat").Stdout)
	require.NoError(t, exec.Command("docker", "restart", "-t", "0", name).Run())
	after := string(run(t, r, "cat /proc/1/stat").Stdout)
	require.NotEqual(t, before, after, "commands run in the restarted container")

	require.NoError(t, exec.Command("docker", "stop", "-t", "0", name).Run())
	_, err = r.Run(context.Background(), "true")
	require.ErrorContains(t, err, "n1: `true`: the container is exited, not running")
}

// Commands run with nsenter are in the container's cgroups: its limits
// apply to what they start.
func TestDockerNsenterJoinsTheContainersCgroups(t *testing.T) {
	name := startContainer(t)
	r := dialContainer(t, name, DockerNsenter)
	init := run(t, r, "cat /proc/1/cgroup").Stdout
	self := run(t, r, "cat /proc/self/cgroup").Stdout
	require.Equal(t, string(init), string(self))
}

// Via and NetMechanism say how a Remote reaches its host, for results.json.
func TestViaNamesHowAHostIsReached(t *testing.T) {
	require.Equal(t, "local", Via(NewLocal("n1")))
	require.Equal(t, "", NetMechanism(NewLocal("n1")))
	name := startContainer(t)
	nsenter := dialContainer(t, name, DockerNsenter)
	require.Equal(t, "docker-nsenter", Via(nsenter))
	require.Equal(t, "nsenter", NetMechanism(nsenter))
	execed := dialContainer(t, name, DockerExec)
	require.Equal(t, "docker-exec", Via(execed))
	require.Equal(t, "", NetMechanism(execed), "docker exec reaches the network from inside")
}

// With the Engine on another machine (here this machine's, over TCP) the
// commands run through docker exec, and the container's network side is
// out of reach: it runs nothing and says why.
func TestRemoteEngineLeavesTheNetworkSideOutOfReach(t *testing.T) {
	name := startContainer(t)
	engine := dockertest.EngineOverTCP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := DialDocker(ctx, "n1", name, DockerConfig{Host: engine})
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, "docker-exec", Via(r))
	require.Equal(t, NetOutOfReach, NetMechanism(r))
	require.Equal(t, "n1\n", string(run(t, r, "echo n1").Stdout), "commands run through the remote Engine")
	_, err = NetSide(r).Run(ctx, "iptables -S")
	var oor *NetOutOfReachError
	require.ErrorAs(t, err, &oor)
	require.Equal(t, engine, oor.Engine)
	require.ErrorContains(t, err, "the Docker host is out of reach (the Engine at "+engine+" is on another machine)")
	_, err = DialDocker(ctx, "n1", name, DockerConfig{Host: engine, Mode: DockerNsenter})
	require.ErrorContains(t, err, "docker mode nsenter needs root, nsenter (util-linux) and the Engine on this machine")
}

// A command cancelled before it reported its process group (the exec had
// not started yet) is found by the token on its shell's command line.
func TestDockerKillGroupFindsAnUnreportedCommandByItsToken(t *testing.T) {
	name := startContainer(t)
	r := dialContainer(t, name, DockerExec).(*dockerRemote)
	token := runToken()
	out, err := exec.Command("docker", "exec", "-d", name, "sh", "-c", "sleep 765.4321 & sleep 765.4321; wait", token).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Eventually(t, func() bool { return liveWith(t, r, "765.4321") == 3 }, 10*time.Second, 50*time.Millisecond, "the shell and two sleeps")
	r.killGroup(context.Background(), 0, token)
	require.Eventually(t, func() bool { return liveWith(t, r, "765.4321") == 0 }, 10*time.Second, 50*time.Millisecond,
		"the shell and both sleeps are killed")
}
