package described

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"chaos/control"
	"chaos/db"
)

// A described system under a fake clock (db.FakeClocker): its start
// command runs with libfaketime preloaded, or with the control file named
// for chaos-node, when the program it runs allows. That program is the
// binary key's, or else start's first word (after exec): when it is an
// upload's destination, the uploaded file is inspected on this machine;
// otherwise the file the host has under that path or name.

var _ db.FakeClocker = (*System)(nil)

func (s *System) ClockFile(n db.Node) string { return db.ClockFileIn(s.nodeDir(n)) }

// FakeClock inspects the program n's start runs (see db.ClockReach).
func (s *System) FakeClock(ctx context.Context, r control.Remote, n db.Node) (db.FakeClock, error) {
	if !s.cfg.Faketime {
		return db.FakeClock{}, db.ErrNoFakeClock
	}
	return s.fakeClocks.Get(ctx, n, func() (db.FakeClock, error) {
		return db.ProbeFakeClock(ctx, r, s.ClockFile(n), func() (string, error) { return s.programReach(ctx, r, n) })
	})
}

// programReach is db.ClockReach of the program n's start runs.
func (s *System) programReach(ctx context.Context, r control.Remote, n db.Node) (string, error) {
	prog, err := s.program(n)
	if err != nil {
		return "", err
	}
	v := s.Vars(n)
	for _, u := range s.desc.Upload {
		if u.Dest.Expand(v) == prog {
			return db.ClockReach(s.source(u))
		}
	}
	return db.HostClockReach(ctx, r, prog, &s.reach)
}

// notPrograms are first words of a shell line that run no program of the
// system's own: shell syntax, builtins, and programs that run another.
var notPrograms = []string{"sh", "bash", "dash", "env", "nohup", "nice", "timeout", "sudo", "cd", "export", "set",
	"eval", ".", "source", "if", "for", "while", "case", "{", "("}

// program is the program n's start runs: binary expanded, or start's
// first word after an exec.
func (s *System) program(n db.Node) (string, error) {
	if s.desc.Binary.IsSet() {
		return strings.TrimSpace(s.desc.Binary.Expand(s.Vars(n))), nil
	}
	words := strings.Fields(s.desc.Start.Expand(s.Vars(n).With(VarBugFlags, "")))
	if len(words) > 1 && words[0] == "exec" {
		words = words[1:]
	}
	if len(words) == 0 || slices.Contains(notPrograms, words[0]) || strings.ContainsAny(words[0], "=;&|<>(){}$`'\"\\") {
		first := ""
		if len(words) > 0 {
			first = words[0]
		}
		return "", fmt.Errorf("start begins with %q, which is not the program that serves: name that program with the description's binary key", first)
	}
	return words[0], nil
}
