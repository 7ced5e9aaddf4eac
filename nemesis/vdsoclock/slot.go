package vdsoclock

import (
	"encoding/binary"

	"golang.org/x/arch/x86/x86asm"
)

// The slots: how the code calls the kernel's own clock functions once
// their entries jump to it. A slot holds the function's first whole
// instructions, copied (at least the 5 bytes the patch's jump
// overwrites; the rest of the patched word is the function's own), and
// a jump to the instruction after them: the kernel's function runs as it
// would, only its start moved, and returns to the code. Where those
// instructions cannot run elsewhere (one reads memory relative to rip,
// or branches), the slot makes the syscall instead, which costs what a
// syscall costs (hundreds of nanoseconds in a VM, against tens).

// slotOf is, for each entry of code, its slot and its syscall number.
var slotOf = map[int]struct {
	at int
	nr uint32
}{
	entryClockGettime: {slotClockGettime, 228}, // SYS_clock_gettime
	entryGettimeofday: {slotGettimeofday, 96},  // SYS_gettimeofday
	entryTime:         {slotTime, 201},         // SYS_time
}

// fillSlots writes the slot of every entry into codePage (the code page's
// bytes, to be mapped at at): through v's function where it relocates,
// else by the syscall (v nil: every slot by the syscall). It returns the
// vDSO functions whose slots call them directly.
func fillSlots(codePage []byte, at uint64, v *VDSO) (direct []string) {
	for entry, s := range slotOf {
		b := syscallSlot(s.nr)
		if v != nil {
			if off, ok := v.Funcs[entry]; ok {
				if moved, ok := movedStart(v.Image[off:], v.Start+off, at+uint64(s.at)); ok {
					b = moved
					direct = append(direct, vdsoNames[entry])
				}
			}
		}
		copy(codePage[s.at:s.at+slotSize], b)
	}
	return direct
}

// syscallSlot is a slot that makes syscall nr: mov $nr, %eax; syscall;
// ret.
func syscallSlot(nr uint32) []byte {
	b := []byte{0xb8, 0, 0, 0, 0, 0x0f, 0x05, 0xc3}
	binary.LittleEndian.PutUint32(b[1:], nr)
	return b
}

// movedStart is the slot at slotAt for the function at fn whose bytes
// begin fnBytes: its first whole instructions covering patchJump bytes,
// then jmp rel32 to the instruction after them; false when one of them
// cannot run moved.
func movedStart(fnBytes []byte, fn, slotAt uint64) ([]byte, bool) {
	n := 0
	for n < patchJump {
		inst, err := x86asm.Decode(fnBytes[n:], 64)
		if err != nil || !movable(inst) {
			return nil, false
		}
		n += inst.Len
	}
	if n+5 > slotSize {
		return nil, false
	}
	b := append([]byte{}, fnBytes[:n]...)
	rel := int64(fn+uint64(n)) - int64(slotAt+uint64(n)+5)
	if rel != int64(int32(rel)) {
		return nil, false
	}
	b = append(b, 0xe9, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[n+1:], uint32(int32(rel)))
	return b, true
}

// patchJump is how many bytes of a function's start the patch's jump
// overwrites.
const patchJump = 5

// movable reports whether inst does the same wherever it runs: no
// operand relative to rip, no branch, call or return.
func movable(inst x86asm.Inst) bool {
	switch inst.Op {
	case x86asm.CALL, x86asm.RET, x86asm.JMP, x86asm.LCALL, x86asm.LJMP, x86asm.LRET, x86asm.SYSCALL,
		x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JCXZ, x86asm.JE, x86asm.JECXZ, x86asm.JG, x86asm.JGE,
		x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JRCXZ,
		x86asm.JS, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		return false
	}
	for _, a := range inst.Args {
		switch a := a.(type) {
		case x86asm.Rel:
			return false
		case x86asm.Mem:
			if a.Base == x86asm.RIP {
				return false
			}
		}
	}
	return true
}
