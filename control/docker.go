package control

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"chaos/internal/secret"
)

// DockerPrefix starts a host that is a Docker container: "docker:NAME"
// (its name or id), in --nodes and nodes files beside "user@host:port".
const DockerPrefix = "docker:"

// ContainerName is the container of host "docker:NAME", and whether host
// names one at all. A name that Docker could not have given a container
// (empty, or any byte outside [A-Za-z0-9_.-], or not starting with a
// letter or digit) is an error: it would otherwise reach the docker command
// line, where "-H..." is a flag.
func ContainerName(host string) (name string, isContainer bool, err error) {
	name, ok := strings.CutPrefix(host, DockerPrefix)
	if !ok {
		return "", false, nil
	}
	if !containerNameRE.MatchString(name) {
		return "", true, fmt.Errorf("%s: not a container name: want docker:NAME, NAME made of letters, digits, '_', '.' and '-' (as `docker ps` shows it)", ShellQuote(host))
	}
	return name, true, nil
}

// containerNameRE is what Docker accepts as a container name (ids are of
// this form too), up to 253 bytes.
var containerNameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,252}$`)

// DockerConfig says how to reach the Docker Engine.
type DockerConfig struct {
	// Bin is the docker command ("" looks "docker" up in PATH).
	Bin string
	// Host is the Engine's address (DOCKER_HOST); "" keeps this process's
	// environment and docker context.
	Host string
	// Stopped makes DialDocker accept a stopped container: one that is
	// itself the node, which a run starts (db.ContainerNodes).
	Stopped bool
	// Mode is how commands run: DockerAuto (""), DockerExec or
	// DockerNsenter.
	Mode string
	// Unpause makes DialDocker unpause a paused container instead of
	// refusing it (heal: chaos pauses containers only as a fault).
	Unpause bool
	// Log gets what cannot be returned: a cancelled command that could not
	// be killed. nil discards it.
	Log *slog.Logger
}

// dockerRemote is a Remote for a running container, through the docker
// command: `docker exec` runs commands (as uid 0), `docker cp` (the
// Engine's archive API) moves files. The CLI rather than the Engine's Go
// client: it honours the user's DOCKER_HOST, contexts, TLS and credentials
// as their own docker commands do, and costs no dependency tree; each call
// is one short-lived process, a few milliseconds beside the exec itself.
type dockerRemote struct {
	host      string // the node's name in errors ("n3")
	container string
	addr      string // its IP address, on the first of its networks by name
	cfg       DockerConfig
	mode      string   // DockerExec or DockerNsenter
	ns        nsTarget // DockerNsenter: the process whose namespaces commands join
	closed    atomic.Bool
}

// DialDocker checks that the Engine answers and that container is running,
// and returns its Remote, named host in errors. Each failure is one line
// saying what to do: the daemon is down, no such container, or it is
// stopped or paused.
func DialDocker(ctx context.Context, host, container string, cfg DockerConfig) (Remote, error) {
	if cfg.Bin == "" {
		bin, err := exec.LookPath("docker")
		if err != nil {
			return nil, fmt.Errorf("%s: the docker command is not installed (apt-get install docker.io)", dialName(host, container))
		}
		cfg.Bin = bin
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	mode, err := pickMode(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dialName(host, container), err)
	}
	r := &dockerRemote{host: host, container: container, cfg: cfg, mode: mode}
	out, stderr, err := r.docker(ctx, nil, "inspect", "--type", "container", "--format",
		inspectStateAddr, container)
	if err != nil {
		return nil, r.dialError(stderr, err)
	}
	fields := strings.Fields(string(out))
	if len(fields) > 0 && fields[0] == "paused" && cfg.Unpause {
		if _, stderr, err := r.docker(ctx, nil, "unpause", container); err != nil {
			return nil, fmt.Errorf("%s: docker unpause: %s", dialName(host, container), clip(firstLine(string(stderr)), 240))
		}
		fields[0] = "running"
	}
	stoppedOK := cfg.Stopped && len(fields) > 0 && (fields[0] == "exited" || fields[0] == "created")
	if len(fields) == 0 || (fields[0] != "running" && !stoppedOK) {
		state := strings.Join(fields[:min(1, len(fields))], "")
		return nil, fmt.Errorf("%s: the container is %s, not running: %s", dialName(host, container), state, startHint(state, container))
	}
	if len(fields) > 1 {
		r.addr = fields[1]
	}
	return r, nil
}

// Addr implements Addressed: the container's IP address.
func (r *dockerRemote) Addr() string { return r.addr }

// inspectStateAddr is the `docker inspect` format of a container's state
// and its address on each network: the one it has, or when it has none
// (stopped) the fixed one it was given (--ip, compose ipv4_address).
const inspectStateAddr = `{{.State.Status}}{{range .NetworkSettings.Networks}} ` +
	`{{if .IPAddress}}{{.IPAddress}}{{else if .IPAMConfig}}{{.IPAMConfig.IPv4Address}}{{end}}{{end}}`

// dialName names host and its container in DialDocker's errors: "n1:
// docker:NAME", or "docker:NAME" alone when that is the host's name.
func dialName(host, container string) string {
	if host == DockerPrefix+container {
		return host
	}
	return host + ": " + DockerPrefix + container
}

// dialError says why `docker inspect` failed, on one line.
func (r *dockerRemote) dialError(stderr []byte, err error) error {
	msg := firstLine(string(stderr))
	prefix := dialName(r.host, r.container) + ":"
	switch {
	case strings.Contains(msg, "No such container") || strings.Contains(msg, "No such object"):
		return fmt.Errorf("%s no such container (`docker ps -a` lists them)", prefix)
	case daemonDown(msg):
		return fmt.Errorf("%s the Docker daemon does not answer (%s): start dockerd, or set DOCKER_HOST", prefix, clip(msg, 160))
	case msg != "":
		return fmt.Errorf("%s docker inspect: %s", prefix, clip(msg, 240))
	}
	return fmt.Errorf("%s docker inspect: %w", prefix, err)
}

// daemonDown says whether the docker command's error line means the
// Engine could not be reached.
func daemonDown(msg string) bool {
	return strings.Contains(msg, "Cannot connect to the Docker daemon") ||
		strings.Contains(msg, "error during connect") ||
		strings.Contains(msg, "connection refused")
}

// startHint is the command that makes a container in state running.
func startHint(state, container string) string {
	if state == "paused" {
		return "`docker unpause " + container + "` (or `chaos heal`)"
	}
	return "`docker start " + container + "`"
}

func (r *dockerRemote) Host() string { return r.host }

func (r *dockerRemote) Close() error {
	r.closed.Store(true)
	return nil
}

// errClosed is the error of a call after Close.
func (r *dockerRemote) errClosed(what string) error {
	return fmt.Errorf("%s: %s: the remote is closed", r.host, what)
}

// docker runs the docker command with args and stdin, to its end or ctx's,
// and returns its stdout and stderr; err is non-nil when it did not exit 0.
func (r *dockerRemote) docker(ctx context.Context, stdin *os.File, args ...string) (stdout, stderr []byte, err error) {
	c := r.command(ctx, args...)
	if stdin != nil {
		c.Stdin = stdin
	}
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err = c.Run()
	return out.Bytes(), errOut.Bytes(), err
}

// command is the docker command with args, for r's Engine.
func (r *dockerRemote) command(ctx context.Context, args ...string) *exec.Cmd {
	return dockerCommand(ctx, r.cfg, args...)
}

// dockerCommand is the docker command of cfg with args, ended (SIGKILL)
// with ctx, in this process's environment less its secrets, with cfg's
// Engine address.
func dockerCommand(ctx context.Context, cfg DockerConfig, args ...string) *exec.Cmd {
	bin := cfg.Bin
	if bin == "" {
		bin = "docker"
	}
	c := exec.CommandContext(ctx, bin, args...)
	c.Env = secret.Environ(os.Environ())
	if cfg.Host != "" {
		c.Env = append(c.Env, "DOCKER_HOST="+cfg.Host)
	}
	c.WaitDelay = time.Second
	return c
}

// killGroup kills process group pgid in the container, with an exec of its
// own: closing an exec's stream or killing the docker command does not stop
// what it runs. Without pgid (the command never reported it) it kills the
// groups of the processes whose command line holds token, with grep from
// the image. A paused container refuses it (heal unpauses first); a
// failure is logged, there is nothing more to do.
func (r *dockerRemote) killGroup(ctx context.Context, pgid int64, token string) {
	kill := fmt.Sprintf("kill -KILL -%d", pgid)
	if pgid <= 1 {
		// The group never reported itself: find its shell by the token
		// on its command line (the brackets keep grep from finding itself).
		pattern := ShellQuote("[" + token[:1] + "]" + token[1:])
		kill = "for f in $(grep -l " + pattern + " /proc/[0-9]*/cmdline 2>/dev/null); do p=${f#/proc/}; kill -KILL -${p%/cmdline}; done"
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killTimeout)
	defer cancel()
	_, stderr, err := r.docker(ctx, nil, "exec", "-u", "0", r.container, "sh", "-c", kill)
	if err != nil {
		r.cfg.Log.Warn("docker: cancelled command not killed", "host", r.host, "pgid", pgid,
			"err", errors.Join(err, errors.New(firstLine(string(stderr)))))
	}
}

// Container is the Docker container a Remote reaches (ContainerOf): the
// Engine's own verbs on it, for a container that is itself the node (its
// main process the server).
type Container interface {
	// Name is the container's name.
	Name() string
	// Do runs `docker VERB ARGS... NAME` (kill, start, stop, pause,
	// unpause, restart); an error carries the docker command's message.
	Do(ctx context.Context, verb string, args ...string) error
	// Logs writes the container's output (`docker logs`) to w.
	Logs(ctx context.Context, w io.Writer) error
	// RestartPolicy is the container's restart policy ("no", "always",
	// "unless-stopped", "on-failure").
	RestartPolicy(ctx context.Context) (string, error)
	// Inspect returns the container's state ("running", "paused",
	// "exited", ...) and its IP address on its first network.
	Inspect(ctx context.Context) (state, addr string, err error)
}

// ContainerOf is the container r reaches, when r is a Docker Remote (or
// any Remote that is also a Container: a test's fake).
func ContainerOf(r Remote) (Container, bool) {
	if n, ok := r.(*netSideRemote); ok {
		return n.dockerRemote, true
	}
	c, ok := r.(Container)
	return c, ok
}

func (r *dockerRemote) Name() string { return r.container }

func (r *dockerRemote) Do(ctx context.Context, verb string, args ...string) error {
	argv := append(append([]string{verb}, args...), r.container)
	if _, stderr, err := r.docker(ctx, nil, argv...); err != nil {
		msg := firstLine(string(stderr))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("docker %s %s: %s", verb, r.container, clip(msg, 240))
	}
	return nil
}

func (r *dockerRemote) Logs(ctx context.Context, w io.Writer) error {
	c := r.command(ctx, "logs", r.container)
	c.Stdout, c.Stderr = w, w
	if err := c.Run(); err != nil {
		return fmt.Errorf("docker logs %s: %w", r.container, err)
	}
	return nil
}

func (r *dockerRemote) Inspect(ctx context.Context) (state, addr string, err error) {
	out, stderr, err := r.docker(ctx, nil, "inspect", "--type", "container", "--format",
		inspectStateAddr, r.container)
	if err != nil {
		return "", "", r.dialError(stderr, err)
	}
	f := strings.Fields(string(out))
	if len(f) > 0 {
		state = f[0]
	}
	if len(f) > 1 {
		addr = f[1]
	}
	return state, addr, nil
}

func (r *dockerRemote) RestartPolicy(ctx context.Context) (string, error) {
	out, stderr, err := r.docker(ctx, nil, "inspect", "--type", "container", "--format", "{{.HostConfig.RestartPolicy.Name}}", r.container)
	if err != nil {
		return "", r.dialError(stderr, err)
	}
	return strings.TrimSpace(string(out)), nil
}
