package control

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ComposePrefix starts a host list entry that stands for every container
// of a Docker Compose project: "docker:compose:PROJECT".
const ComposePrefix = DockerPrefix + "compose:"

// ExpandCompose replaces each "docker:compose:PROJECT" in hosts by the
// project's containers as "docker:NAME" hosts, ordered by service name and
// then container number (the labels Compose puts on them), so that the
// same project gives the same nodes n1, n2, ... every time. A project with
// no container is an error saying how to start it. Other hosts are kept
// as they are, in place.
func ExpandCompose(ctx context.Context, hosts []string, cfg DockerConfig) ([]string, error) {
	var out []string
	for _, h := range hosts {
		project, ok := strings.CutPrefix(h, ComposePrefix)
		if !ok {
			out = append(out, h)
			continue
		}
		if err := CheckHostName(h); err != nil {
			return nil, err
		}
		names, err := composeContainers(ctx, project, cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h, err)
		}
		for _, n := range names {
			out = append(out, DockerPrefix+n)
		}
	}
	return out, nil
}

// CheckHostName refuses a "docker:" host whose container or compose
// project name Docker could not have given; other hosts pass.
func CheckHostName(h string) error {
	if project, ok := strings.CutPrefix(h, ComposePrefix); ok {
		if !containerNameRE.MatchString(project) {
			return fmt.Errorf("%s: not a compose project name: want docker:compose:PROJECT (as `docker compose ls` shows it)", ShellQuote(h))
		}
		return nil
	}
	_, _, err := ContainerName(h)
	return err
}

// composeContainers lists the containers of project, running or not, in
// service and number order.
func composeContainers(ctx context.Context, project string, cfg DockerConfig) ([]string, error) {
	c := dockerCommand(ctx, cfg, "ps", "-a", "--filter", "label=com.docker.compose.project="+project,
		"--format", `{{.Label "com.docker.compose.service"}}	{{.Label "com.docker.compose.container-number"}}	{{.Names}}`)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		if msg := firstLine(stderr.String()); msg != "" {
			return nil, fmt.Errorf("docker ps: %s", clip(msg, 240))
		}
		return nil, fmt.Errorf("docker ps: %w", err)
	}
	type member struct {
		service string
		number  int
		name    string
	}
	var members []member
	for line := range strings.SplitSeq(strings.TrimSpace(stdout.String()), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		members = append(members, member{f[0], n, f[2]})
	}
	if len(members) == 0 {
		return nil, fmt.Errorf("no container of compose project %s: start them with `docker compose -p %s up -d`", project, project)
	}
	slices.SortFunc(members, func(a, b member) int {
		if c := strings.Compare(a.service, b.service); c != 0 {
			return c
		}
		if a.number != b.number {
			return a.number - b.number
		}
		return strings.Compare(a.name, b.name)
	})
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.name
	}
	return names, nil
}
