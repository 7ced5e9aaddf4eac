package dockerbed

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// Engine runs docker commands: the machine's Docker Engine through the
// docker command (NewEngine), or a test's fake.
type Engine interface {
	// Docker runs `docker ARGS...` with stdin (nil for none) and returns
	// its stdout; an error names the command and the first line of its
	// stderr.
	Docker(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error)
}

// NewEngine is the Engine of the docker command in PATH, with this
// process's environment (DOCKER_HOST, contexts).
func NewEngine() Engine { return cliEngine{} }

type cliEngine struct{}

func (cliEngine) Docker(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	c := exec.CommandContext(ctx, "docker", args...)
	c.Stdin = stdin
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return stdout.Bytes(), fmt.Errorf("docker %s: %s", args[0], msg)
	}
	return stdout.Bytes(), nil
}
