//go:build linux && amd64

// Package callc calls machine code with the C calling convention, for
// the tests of vdsoclock's code: Call2 jumps to code mapped with
// syscall.Mmap, as a patched process's vDSO caller would.
package callc

// Call2 calls the C function at fn with two arguments and returns what it
// returns in rax. The function may use 64 bytes of stack, must not block,
// and must keep the registers C callees keep (rbx, rbp, r12-r15).
func Call2(fn, a0, a1 uintptr) uintptr
