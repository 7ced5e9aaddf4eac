package db

import (
	"context"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"chaos/control"
	"chaos/internal/fakeclock"
)

// Which programs a fake clock reaches. libfaketime is preloaded by the
// dynamic linker and replaces libc's clock functions, so it reaches a
// program that is dynamically linked (its ELF file names an interpreter,
// PT_INTERP) and reads the time through libc: C, C++, Java, Python. It
// cannot reach a statically linked program (no dynamic linker runs), nor
// a Go program, which reads the clock through the vDSO without libc even
// when it is dynamically linked. chaos's own binary is a Go program that
// reads the control file itself (chaos-node, package fakeclock).

// Why a program's clock cannot be faked.
var (
	ErrStaticProgram = errors.New("statically linked: libfaketime cannot reach its clock")
	ErrGoProgram     = errors.New("a Go program, which reads the clock through the vDSO and not through libc: libfaketime cannot reach its clock")
	ErrNotELF        = errors.New("not an ELF program (a script?): name the program that serves with the description's binary key")
)

// chaosModule is the module path chaos's binaries are built from: a Go
// program built from it is chaos, whose node reads the control file.
const chaosModule = "chaos"

// ClockReach says who can fake the clock of the program in the local
// file name: fakeclock.Native for chaos, fakeclock.Libfaketime for a
// dynamically linked program that is not Go; otherwise an error wrapping
// ErrStaticProgram, ErrGoProgram or ErrNotELF, naming the file.
func ClockReach(name string) (string, error) {
	f, err := elf.Open(name)
	if err != nil {
		if _, serr := os.Stat(name); serr != nil {
			return "", serr
		}
		return "", fmt.Errorf("%s: %w", name, ErrNotELF)
	}
	dynamic := false
	for _, p := range f.Progs {
		dynamic = dynamic || p.Type == elf.PT_INTERP
	}
	f.Close()
	bi, goErr := buildinfo.ReadFile(name)
	switch {
	case goErr == nil && bi.Main.Path == chaosModule:
		return fakeclock.Native, nil
	case !dynamic:
		return "", fmt.Errorf("%s: %w", name, ErrStaticProgram)
	case goErr == nil:
		return "", fmt.Errorf("%s: %w", name, ErrGoProgram)
	}
	return fakeclock.Libfaketime, nil
}

// HostClockReach is ClockReach of the program a node's start runs, which
// is on r's host: word is a path, or a name looked up on the host's PATH.
// The file (symlinks resolved) is copied to this machine to be read;
// seen remembers the answers by path, size and modification time, so
// that nodes running the same program copy it once.
func HostClockReach(ctx context.Context, r control.Remote, word string, seen *ReachCache) (string, error) {
	cmd := fmt.Sprintf(`p=$(command -v %s) || exit 3; p=$(readlink -f "$p") && stat -L -c '%%s %%Y' "$p" && echo "$p"`, control.ShellQuote(word))
	res, err := r.Run(ctx, cmd)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if res.ExitCode != 0 || len(lines) != 2 {
		return "", fmt.Errorf("%s: no such program on the host", word)
	}
	key := lines[1] + " " + lines[0]
	return seen.get(key, func() (string, error) {
		dir, err := os.MkdirTemp("", "chaos-clockreach-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(dir)
		local := filepath.Join(dir, "program")
		if err := r.Download(ctx, lines[1], local); err != nil {
			return "", fmt.Errorf("copy %s to inspect it: %w", lines[1], err)
		}
		mech, err := ClockReach(local)
		for _, why := range []error{ErrStaticProgram, ErrGoProgram, ErrNotELF} {
			if errors.Is(err, why) {
				return "", fmt.Errorf("%s: %w", lines[1], why) // the host's file, not the copy
			}
		}
		return mech, err
	})
}

// ReachCache remembers HostClockReach's answers. Safe for concurrent use;
// the zero value is ready.
type ReachCache struct {
	mu      sync.Mutex
	answers map[string]reachAnswer
}

type reachAnswer struct {
	mech string
	err  error
}

// get returns key's answer, asking probe the first time.
func (c *ReachCache) get(key string, probe func() (string, error)) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.answers[key]; ok {
		return a.mech, a.err
	}
	mech, err := probe()
	if err != nil && !errors.Is(err, ErrStaticProgram) && !errors.Is(err, ErrGoProgram) && !errors.Is(err, ErrNotELF) {
		return mech, err // a failure to look: ask again next time
	}
	if c.answers == nil {
		c.answers = map[string]reachAnswer{}
	}
	c.answers[key] = reachAnswer{mech, err}
	return mech, err
}
