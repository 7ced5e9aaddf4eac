package described

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"chaos/control"
	"chaos/db"
)

// upTimeout bounds one check, whatever ctx allows.
const upTimeout = time.Second

// readyPoll is how often Ready checks again.
const readyPoll = 100 * time.Millisecond

// Ready checks ready (or up) until it passes or ctx ends; the error then
// carries the last failure.
func (s *System) Ready(ctx context.Context, n db.Node) error {
	c := s.desc.Up
	if s.desc.Ready != nil {
		c = *s.desc.Ready
	}
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	var last error
	for {
		err := s.check(ctx, c, n)
		if err == nil {
			return nil
		}
		if last == nil || ctx.Err() == nil { // keep a check's own failure over ctx's end
			last = err
		}
		select {
		case <-ctx.Done():
			return wrap(n, "wait for "+s.desc.Name, fmt.Errorf("not ready: %w (last: %v)", ctx.Err(), last))
		case <-tick.C:
		}
	}
}

// Up checks up once.
func (s *System) Up(ctx context.Context, n db.Node) error {
	return wrap(n, s.desc.Name+" up", s.check(ctx, s.desc.Up, n))
}

// check runs c once against n, within upTimeout.
func (s *System) check(ctx context.Context, c Check, n db.Node) error {
	ctx, cancel := context.WithTimeout(ctx, upTimeout)
	defer cancel()
	v := s.Vars(n)
	switch {
	case c.HTTP.IsSet():
		return s.checkHTTP(ctx, c, v)
	case c.TCP != "":
		port, _ := s.desc.tcpPort(c.TCP) // valid: Load checked it
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(n.Addr, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	}
	return s.runLocal(ctx, c.Command.ExpandShell(v))
}

func (s *System) checkHTTP(ctx context.Context, c Check, v Vars) error {
	req, err := Request{Path: c.HTTP}.NewRequest(ctx, v[VarClientAddr], v)
	if err != nil {
		return err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := ReadAnswer(resp)
	if err != nil {
		return err
	}
	want := c.Status
	if want == 0 {
		want = http.StatusOK
	}
	if resp.StatusCode != want {
		return fmt.Errorf("GET %s: status %d, want %d: %.200s", c.HTTP.Expand(v), resp.StatusCode, want, strings.TrimSpace(string(body)))
	}
	if c.BodyContains != "" && !strings.Contains(string(body), c.BodyContains) {
		return fmt.Errorf("GET %s: the answer lacks %q: %.200s", c.HTTP.Expand(v), c.BodyContains, strings.TrimSpace(string(body)))
	}
	return nil
}

// runLocal runs a shell command on the controller, in the description's
// directory; a non-zero exit is an error.
func (s *System) runLocal(ctx context.Context, cmd string) error {
	r := control.NewLocal("controller")
	return db.Run(ctx, r, "cd "+control.ShellQuote(s.desc.Dir)+" && "+cmd)
}
