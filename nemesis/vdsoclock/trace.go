package vdsoclock

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// stopped is a process whose every thread this tracer holds stopped
// (PTRACE_SEIZE, then PTRACE_INTERRUPT): while it is, no thread of it runs
// and none can start another. A tracer that dies lets every thread go on
// (a seized tracee is never left stopped by its tracer's death). All of
// its calls must come from the thread that seized: see stop.
type stopped struct {
	pid     int
	threads []int
	// pending are signals that arrived while a thread was stepped for a
	// syscall of ours, by thread: they are delivered when it is let go.
	pending map[int]unix.Signal
}

// stop seizes and interrupts every thread of pid, listing its threads
// again until no new one appears. The caller must hold its OS thread
// (runtime.LockOSThread) until release: ptrace answers only the thread
// that attached. On an error, the threads seized so far are let go.
func stop(pid int) (*stopped, error) {
	s := &stopped{pid: pid, pending: map[int]unix.Signal{}}
	for {
		tids, err := threadsOf(pid)
		if err != nil {
			s.release()
			return nil, err
		}
		fresh := slices.DeleteFunc(tids, func(t int) bool { return slices.Contains(s.threads, t) })
		if len(fresh) == 0 {
			return s, nil
		}
		for _, tid := range fresh {
			if err := s.seize(tid); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // the thread exited meanwhile
				}
				s.release()
				return nil, err
			}
		}
	}
}

// seize attaches to tid and waits for it to stop.
func (s *stopped) seize(tid int) error {
	if err := unix.PtraceSeize(tid); err != nil {
		return fmt.Errorf("ptrace seize of thread %d of %d: %w", tid, s.pid, seizeHint(err))
	}
	s.threads = append(s.threads, tid)
	if err := unix.PtraceInterrupt(tid); err != nil {
		return fmt.Errorf("ptrace interrupt of thread %d of %d: %w", tid, s.pid, err)
	}
	_, err := s.waitStop(tid)
	return err
}

// seizeHint adds how to fix a refused seize, or a refused look at the
// process's executable or memory (which need the same permission).
func seizeHint(err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Errorf("%w: tracing another process needs root with CAP_SYS_PTRACE (and Yama's ptrace_scope below 3)", err)
	}
	return err
}

// waitStop waits for tid's next stop and returns its signal; a thread
// that exited instead is an error naming it.
func (s *stopped) waitStop(tid int) (unix.Signal, error) {
	for {
		var ws unix.WaitStatus
		_, err := unix.Wait4(tid, &ws, unix.WALL, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return 0, fmt.Errorf("waiting for thread %d of %d: %w", tid, s.pid, err)
		case ws.Exited() || ws.Signaled():
			s.threads = slices.DeleteFunc(s.threads, func(t int) bool { return t == tid })
			return 0, fmt.Errorf("thread %d of %d exited while traced: %w", tid, s.pid, errExited)
		case ws.Stopped():
			return ws.StopSignal(), nil
		}
	}
}

// errExited is why a patch stopped: the process (or the thread used)
// exited or exec'd while it was traced.
var errExited = errors.New("the process exited or exec'd")

// release lets every thread go, each with the signal kept for it. A
// thread of a process stopped by a signal (SIGSTOP, the pause family)
// goes back to that stop: the kernel wakes it only to stop again before
// it runs any of its own code (it shows R for a moment).
func (s *stopped) release() {
	for _, tid := range s.threads {
		_, _, _ = unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(tid), 0, uintptr(s.pending[tid]), 0, 0)
	}
	s.threads = nil
}

// threadsOf lists the threads of pid.
func threadsOf(pid int) ([]int, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("process %d: %w", pid, errExited)
		}
		return nil, err
	}
	var tids []int
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// syscall makes thread tid (stopped) run the syscall nr with args, by
// pointing it at a syscall instruction of its own (at insn) and stepping
// it once, and returns the result; tid's registers are put back after.
// orig_rax is set to -1, so that the kernel does not restart, on our
// step, a syscall the thread was stopped in; restoring the registers
// restores that restart for when the thread goes on.
func (s *stopped) syscall(tid int, insn uint64, nr uintptr, args ...uint64) (uint64, error) {
	var saved unix.PtraceRegs
	if err := unix.PtraceGetRegs(tid, &saved); err != nil {
		return 0, fmt.Errorf("registers of thread %d: %w", tid, err)
	}
	regs := saved
	regs.Rip, regs.Rax, regs.Orig_rax = insn, uint64(nr), ^uint64(0)
	for i, r := range []*uint64{&regs.Rdi, &regs.Rsi, &regs.Rdx, &regs.R10, &regs.R8, &regs.R9} {
		if i < len(args) {
			*r = args[i]
		}
	}
	if err := unix.PtraceSetRegs(tid, &regs); err != nil {
		return 0, fmt.Errorf("setting the registers of thread %d: %w", tid, err)
	}
	if err := s.step(tid, insn); err != nil {
		return 0, err
	}
	var after unix.PtraceRegs
	if err := unix.PtraceGetRegs(tid, &after); err != nil {
		return 0, err
	}
	if err := unix.PtraceSetRegs(tid, &saved); err != nil {
		return 0, fmt.Errorf("restoring the registers of thread %d: %w", tid, err)
	}
	return after.Rax, nil
}

// step single-steps tid until its rip leaves from; a signal that stops
// it first is kept for its release.
func (s *stopped) step(tid int, from uint64) error {
	for range 100 {
		if err := unix.PtraceSingleStep(tid); err != nil {
			return fmt.Errorf("stepping thread %d: %w", tid, err)
		}
		sig, err := s.waitStop(tid)
		if err != nil {
			return err
		}
		if sig != unix.SIGTRAP {
			s.pending[tid] = sig
			continue
		}
		var regs unix.PtraceRegs
		if err := unix.PtraceGetRegs(tid, &regs); err != nil {
			return err
		}
		if regs.Rip != from {
			return nil
		}
	}
	return fmt.Errorf("thread %d did not step past %#x", tid, from)
}

// stepOut steps every thread whose rip lies inside one of spans (but for
// its start) until it does not: a thread stopped inside the bytes a patch
// rewrites would otherwise resume in the middle of another instruction.
func (s *stopped) stepOut(spans [][2]uint64) error {
	inside := func(rip uint64) bool {
		for _, sp := range spans {
			if rip > sp[0] && rip < sp[1] {
				return true
			}
		}
		return false
	}
	for _, tid := range s.threads {
		for range 100 {
			var regs unix.PtraceRegs
			if err := unix.PtraceGetRegs(tid, &regs); err != nil {
				return fmt.Errorf("registers of thread %d: %w", tid, err)
			}
			if !inside(regs.Rip) {
				break
			}
			if err := s.step(tid, regs.Rip); err != nil {
				return err
			}
		}
	}
	return nil
}

// lockThread holds the calling goroutine's OS thread for a tracer's
// calls; the returned func lets it go.
func lockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

// whileStopped runs fn with every thread of pid stopped (see stop) and
// its memory open for writing, and lets the threads go after, whatever
// fn did.
func whileStopped(pid int, fn func(st *stopped, mem *os.File) error) error {
	defer lockThread()()
	st, err := stop(pid)
	if err != nil {
		return err
	}
	defer st.release()
	mem, err := openMem(pid, os.O_RDWR)
	if err != nil {
		return err
	}
	defer mem.Close()
	return fn(st, mem)
}

// openMem opens pid's memory (/proc/PID/mem) with flag.
func openMem(pid, flag int) (*os.File, error) {
	mem, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), flag, 0)
	if err != nil {
		return nil, fmt.Errorf("the memory of %d: %w", pid, seizeHint(err))
	}
	return mem, nil
}
