package vdsoclock

// code is the machine code chaos maps into a node's process, at the start
// of its code page (x86-64, position independent; the data page is the
// page right after it, which the code reaches RIP-relative). The vDSO's
// clock_gettime, gettimeofday and time are redirected to its entries
// (entryClockGettime, ...): each calls the kernel's own function through
// its slot in the code page (see slot: the function's first instructions,
// copied, and a jump back into it; or the syscall where they cannot be
// copied), then, for a clock whose block the data page names (see Page),
// returns
//
//	t + min(off + ((t - anchor) * k >> 32), lead)
//
// read while the page's sequence counter is even and the same before and
// after (the writer makes it odd while it rewrites the page). It touches
// only the registers the C calling convention lets a callee clobber (rax,
// rcx, rdx, rdi, rsi, r8-r11), and the stack the kernel's function uses
// and 32 bytes more. A failed call's -errno is returned as the vDSO
// returns it.
//
// Assembled from this source with GNU as (as --64; objdump -d gives the
// listing beside the bytes):
//
//	start:
//	clock_gettime:                 # (edi clockid, rsi *timespec)
//		push %rdi
//		push %rsi
//		sub $8, %rsp               # the stack 16-byte aligned at the call
//		call start+0x300           # the kernel's clock_gettime (its slot)
//		add $8, %rsp
//		pop %rsi
//		pop %rdi
//		test %eax, %eax
//		jnz .Lret                  # -errno, as the kernel said
//		cmp $15, %edi
//		ja .Lok                    # CPU-time clocks and the like: untouched
//		mov %edi, %ecx
//		lea start+4096(%rip), %r9
//		movzbl 16(%r9,%rcx), %ecx  # the clock's block, 0 for none
//		test %ecx, %ecx
//		jz .Lok
//		add %rcx, %r9
//	1:	mov (%rsi), %rax
//		imul $1000000000, %rax, %rax
//		add 8(%rsi), %rax
//		call .Lfake
//		call .Lsplit
//		mov %rax, (%rsi)
//		mov %rdx, 8(%rsi)
//	.Lok:	xor %eax, %eax
//	.Lret:	ret
//
//		.balign 16
//	gettimeofday:                  # (rdi *timeval, rsi *timezone)
//		push %rdi
//		push %rsi
//		sub $8, %rsp
//		call start+0x340           # the kernel's gettimeofday
//		add $8, %rsp
//		pop %rsi
//		pop %rdi
//		test %eax, %eax
//		jnz .Lret
//		test %rdi, %rdi
//		jz .Lok
//		mov (%rdi), %rax
//		imul $1000000000, %rax, %rax
//		imul $1000, 8(%rdi), %rcx
//		add %rcx, %rax
//		lea start+4096+32(%rip), %r9
//		call .Lfake
//		call .Lsplit
//		mov %rax, (%rdi)
//		mov %rdx, %rax
//		xor %edx, %edx
//		mov $1000, %ecx
//		div %rcx
//		mov %rax, 8(%rdi)
//		jmp .Lok
//
//		.balign 16
//	time:                          # (rdi *time_t)
//		push %rdi
//		xor %edi, %edi
//		call start+0x380           # the kernel's time(NULL)
//		pop %rsi
//		imul $1000000000, %rax, %rax
//		lea start+4096+32(%rip), %r9
//		call .Lfake
//		call .Lsplit
//		test %rsi, %rsi
//		jz 1f
//		mov %rax, (%rsi)
//	1:	ret
//
//	# .Lfake: rax = t (ns), r9 = the clock's block {off, anchor}; returns
//	# rax = t + min(off + ((t - anchor) * k >> 32), lead), read while the
//	# counter at the data page's start is even and unchanged. Clobbers rdx,
//	# r8, r10, r11.
//	.Lfake:
//		mov %rax, %r8
//		lea start+4096(%rip), %r11
//	2:	mov (%r11), %r10
//		test $1, %r10
//		jnz 3f
//		mov %r8, %rax
//		sub 8(%r9), %rax
//		imulq 8(%r11)
//		shrd $32, %rdx, %rax
//		add (%r9), %rax            # how far ahead of t
//		mov 96(%r11), %rdx
//		cmp %rdx, %rax
//		cmovg %rdx, %rax           # at most the page's lead
//		cmp (%r11), %r10
//		jne 2b
//		add %r8, %rax
//		ret
//	3:	pause
//		jmp 2b
//
//	# .Lsplit: rax ns -> rax seconds, rdx nanoseconds (0..1e9-1). Clobbers rcx.
//	.Lsplit:
//		mov $1000000000, %ecx
//		cqo
//		idiv %rcx
//		test %rdx, %rdx
//		jns 4f
//		add %rcx, %rdx
//		dec %rax
//	4:	ret
var code = [...]byte{
	// clock_gettime
	0x57,                   // 000: push %rdi
	0x56,                   // 001: push %rsi
	0x48, 0x83, 0xec, 0x08, // 002: sub $0x8,%rsp
	0xe8, 0xf5, 0x02, 0x00, 0x00, // 006: call 300
	0x48, 0x83, 0xc4, 0x08, // 00b: add $0x8,%rsp
	0x5e,       // 00f: pop %rsi
	0x5f,       // 010: pop %rdi
	0x85, 0xc0, // 011: test %eax,%eax
	0x75, 0x3c, // 013: jne 51
	0x83, 0xff, 0x0f, // 015: cmp $0xf,%edi
	0x77, 0x35, // 018: ja 4f
	0x89, 0xf9, // 01a: mov %edi,%ecx
	0x4c, 0x8d, 0x0d, 0xdd, 0x0f, 0x00, 0x00, // 01c: lea 0xfdd(%rip),%r9
	0x41, 0x0f, 0xb6, 0x4c, 0x09, 0x10, // 023: movzbl 0x10(%r9,%rcx,1),%ecx
	0x85, 0xc9, // 029: test %ecx,%ecx
	0x74, 0x22, // 02b: je 4f
	0x49, 0x01, 0xc9, // 02d: add %rcx,%r9
	0x48, 0x8b, 0x06, // 030: mov (%rsi),%rax
	0x48, 0x69, 0xc0, 0x00, 0xca, 0x9a, 0x3b, // 033: imul $0x3b9aca00,%rax,%rax
	0x48, 0x03, 0x46, 0x08, // 03a: add 0x8(%rsi),%rax
	0xe8, 0xa7, 0x00, 0x00, 0x00, // 03e: call ea
	0xe8, 0xe3, 0x00, 0x00, 0x00, // 043: call 12b
	0x48, 0x89, 0x06, // 048: mov %rax,(%rsi)
	0x48, 0x89, 0x56, 0x08, // 04b: mov %rdx,0x8(%rsi)
	0x31, 0xc0, // 04f: xor %eax,%eax
	0xc3,                                                             // 051: ret
	0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, // 052: data16 cs nopw 0x0(%rax,%rax,1)
	0x0f, 0x1f, 0x00, // 05d: nopl (%rax)
	// gettimeofday
	0x57,                   // 060: push %rdi
	0x56,                   // 061: push %rsi
	0x48, 0x83, 0xec, 0x08, // 062: sub $0x8,%rsp
	0xe8, 0xd5, 0x02, 0x00, 0x00, // 066: call 340
	0x48, 0x83, 0xc4, 0x08, // 06b: add $0x8,%rsp
	0x5e,       // 06f: pop %rsi
	0x5f,       // 070: pop %rdi
	0x85, 0xc0, // 071: test %eax,%eax
	0x75, 0xdc, // 073: jne 51
	0x48, 0x85, 0xff, // 075: test %rdi,%rdi
	0x74, 0xd5, // 078: je 4f
	0x48, 0x8b, 0x07, // 07a: mov (%rdi),%rax
	0x48, 0x69, 0xc0, 0x00, 0xca, 0x9a, 0x3b, // 07d: imul $0x3b9aca00,%rax,%rax
	0x48, 0x69, 0x4f, 0x08, 0xe8, 0x03, 0x00, 0x00, // 084: imul $0x3e8,0x8(%rdi),%rcx
	0x48, 0x01, 0xc8, // 08c: add %rcx,%rax
	0x4c, 0x8d, 0x0d, 0x8a, 0x0f, 0x00, 0x00, // 08f: lea 0xf8a(%rip),%r9
	0xe8, 0x4f, 0x00, 0x00, 0x00, // 096: call ea
	0xe8, 0x8b, 0x00, 0x00, 0x00, // 09b: call 12b
	0x48, 0x89, 0x07, // 0a0: mov %rax,(%rdi)
	0x48, 0x89, 0xd0, // 0a3: mov %rdx,%rax
	0x31, 0xd2, // 0a6: xor %edx,%edx
	0xb9, 0xe8, 0x03, 0x00, 0x00, // 0a8: mov $0x3e8,%ecx
	0x48, 0xf7, 0xf1, // 0ad: div %rcx
	0x48, 0x89, 0x47, 0x08, // 0b0: mov %rax,0x8(%rdi)
	0xeb, 0x99, // 0b4: jmp 4f
	0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, // 0b6: cs nopw 0x0(%rax,%rax,1)
	// time
	0x57,       // 0c0: push %rdi
	0x31, 0xff, // 0c1: xor %edi,%edi
	0xe8, 0xb8, 0x02, 0x00, 0x00, // 0c3: call 380
	0x5e,                                     // 0c8: pop %rsi
	0x48, 0x69, 0xc0, 0x00, 0xca, 0x9a, 0x3b, // 0c9: imul $0x3b9aca00,%rax,%rax
	0x4c, 0x8d, 0x0d, 0x49, 0x0f, 0x00, 0x00, // 0d0: lea 0xf49(%rip),%r9
	0xe8, 0x0e, 0x00, 0x00, 0x00, // 0d7: call ea
	0xe8, 0x4a, 0x00, 0x00, 0x00, // 0dc: call 12b
	0x48, 0x85, 0xf6, // 0e1: test %rsi,%rsi
	0x74, 0x03, // 0e4: je e9
	0x48, 0x89, 0x06, // 0e6: mov %rax,(%rsi)
	0xc3, // 0e9: ret
	// .Lfake
	0x49, 0x89, 0xc0, // 0ea: mov %rax,%r8
	0x4c, 0x8d, 0x1d, 0x0c, 0x0f, 0x00, 0x00, // 0ed: lea 0xf0c(%rip),%r11
	0x4d, 0x8b, 0x13, // 0f4: mov (%r11),%r10
	0x49, 0xf7, 0xc2, 0x01, 0x00, 0x00, 0x00, // 0f7: test $0x1,%r10
	0x75, 0x27, // 0fe: jne 127
	0x4c, 0x89, 0xc0, // 100: mov %r8,%rax
	0x49, 0x2b, 0x41, 0x08, // 103: sub 0x8(%r9),%rax
	0x49, 0xf7, 0x6b, 0x08, // 107: imulq 0x8(%r11)
	0x48, 0x0f, 0xac, 0xd0, 0x20, // 10b: shrd $0x20,%rdx,%rax
	0x49, 0x03, 0x01, // 110: add (%r9),%rax
	0x49, 0x8b, 0x53, 0x60, // 113: mov 0x60(%r11),%rdx
	0x48, 0x39, 0xd0, // 117: cmp %rdx,%rax
	0x48, 0x0f, 0x4f, 0xc2, // 11a: cmovg %rdx,%rax
	0x4d, 0x3b, 0x13, // 11e: cmp (%r11),%r10
	0x75, 0xd1, // 121: jne f4
	0x4c, 0x01, 0xc0, // 123: add %r8,%rax
	0xc3,       // 126: ret
	0xf3, 0x90, // 127: pause
	0xeb, 0xc9, // 129: jmp f4
	// .Lsplit
	0xb9, 0x00, 0xca, 0x9a, 0x3b, // 12b: mov $0x3b9aca00,%ecx
	0x48, 0x99, // 130: cqto
	0x48, 0xf7, 0xf9, // 132: idiv %rcx
	0x48, 0x85, 0xd2, // 135: test %rdx,%rdx
	0x79, 0x06, // 138: jns 140
	0x48, 0x01, 0xca, // 13a: add %rcx,%rdx
	0x48, 0xff, 0xc8, // 13d: dec %rax
	0xc3, // 140: ret
}

// The entries of code, by the vDSO function each replaces, and the slots
// they call the kernel's functions through (slotSize bytes each).
const (
	entryClockGettime = 0x000
	entryGettimeofday = 0x060
	entryTime         = 0x0c0

	slotClockGettime = 0x300
	slotGettimeofday = 0x340
	slotTime         = 0x380
	slotSize         = 0x40
)
