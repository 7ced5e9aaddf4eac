package vdsoclock

// code is the machine code chaos maps into a node's process, at the start
// of its code page (x86-64, position independent; the data page is the
// page right after it, which the code reaches RIP-relative). The vDSO's
// clock_gettime, gettimeofday and time are redirected to its entries
// (entryClockGettime, entryGettimeofday, entryTime): each reads the
// kernel's clock by the syscall (the vDSO itself can no longer be called:
// its entry jumps here), then, for a clock whose block the data page names
// (see Page), returns
//
//	t + off + ((t - anchor) * k >> 32)
//
// read while the page's sequence counter is even and the same before and
// after (the writer makes it odd while it rewrites the page). It touches
// only the registers the C calling convention lets a callee clobber (rax,
// rcx, rdx, rdi, rsi, r8-r11) and 8 bytes of stack for its own calls. A
// failed syscall's -errno is returned as the vDSO returns it.
//
// Assembled from this source with GNU as (as --64; objdump -d gives the
// listing beside the bytes):
//
//	start:
//	clock_gettime:                  # (edi clockid, rsi *timespec)
//		mov $228, %eax              # SYS_clock_gettime
//		syscall
//		test %eax, %eax
//		jnz .Lret                   # -errno, as the kernel said
//		cmp $15, %edi
//		ja .Lok                     # CPU-time clocks and the like: untouched
//		mov %edi, %ecx
//		lea start+4096(%rip), %r9
//		movzbl 16(%r9,%rcx), %ecx   # the clock's block, 0 for none
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
//		.balign 16
//	gettimeofday:                   # (rdi *timeval, rsi *timezone)
//		mov $96, %eax               # SYS_gettimeofday
//		syscall
//		test %eax, %eax
//		jnz .Lret
//		test %rdi, %rdi
//		jz .Lok
//		mov (%rdi), %rax
//		imul $1000000000, %rax, %rax
//		imul $1000, 8(%rdi), %rcx
//		add %rcx, %rax
//		lea start+4096+32(%rip), %r9  # the realtime block
//		call .Lfake
//		call .Lsplit
//		mov %rax, (%rdi)
//		mov %rdx, %rax
//		xor %edx, %edx
//		mov $1000, %ecx
//		div %rcx
//		mov %rax, 8(%rdi)
//		jmp .Lok
//		.balign 16
//	time:                           # (rdi *time_t)
//		mov %rdi, %rsi
//		xor %edi, %edi
//		mov $201, %eax              # SYS_time
//		syscall
//		imul $1000000000, %rax, %rax
//		lea start+4096+32(%rip), %r9
//		call .Lfake
//		call .Lsplit
//		test %rsi, %rsi
//		jz 1f
//		mov %rax, (%rsi)
//	1:	ret
//	.Lfake:                         # rax t, r9 block {off, anchor}
//		mov %rax, %r8
//		lea start+4096(%rip), %r11
//	2:	mov (%r11), %r10            # the counter
//		test $1, %r10
//		jnz 3f
//		mov %r8, %rax
//		sub 8(%r9), %rax            # t - anchor
//		imulq 8(%r11)               # rdx:rax = (t - anchor) * k
//		shrd $32, %rdx, %rax
//		add (%r9), %rax             # + off
//		cmp (%r11), %r10
//		jne 2b                      # rewritten meanwhile: again
//		add %r8, %rax
//		ret
//	3:	pause
//		jmp 2b
//	.Lsplit:                        # rax ns -> rax s, rdx ns in [0, 1e9)
//		mov $1000000000, %ecx
//		cqo
//		idiv %rcx
//		test %rdx, %rdx
//		jns 4f
//		add %rcx, %rdx
//		dec %rax
//	4:	ret
var code = [...]byte{
	// clock_gettime(edi clockid, rsi *timespec)
	0xb8, 0xe4, 0x00, 0x00, 0x00, // 000: mov $0xe4,%eax
	0x0f, 0x05, // 005: syscall
	0x85, 0xc0, // 007: test %eax,%eax
	0x75, 0x3c, // 009: jne 47
	0x83, 0xff, 0x0f, // 00b: cmp $0xf,%edi
	0x77, 0x35, // 00e: ja 45
	0x89, 0xf9, // 010: mov %edi,%ecx
	0x4c, 0x8d, 0x0d, 0xe7, 0x0f, 0x00, 0x00, // 012: lea 0xfe7(%rip),%r9
	0x41, 0x0f, 0xb6, 0x4c, 0x09, 0x10, // 019: movzbl 0x10(%r9,%rcx,1),%ecx
	0x85, 0xc9, // 01f: test %ecx,%ecx
	0x74, 0x22, // 021: je 45
	0x49, 0x01, 0xc9, // 023: add %rcx,%r9
	0x48, 0x8b, 0x06, // 026: mov (%rsi),%rax
	0x48, 0x69, 0xc0, 0x00, 0xca, 0x9a, 0x3b, // 029: imul $0x3b9aca00,%rax,%rax
	0x48, 0x03, 0x46, 0x08, // 030: add 0x8(%rsi),%rax
	0xe8, 0x94, 0x00, 0x00, 0x00, // 034: call cd
	0xe8, 0xc5, 0x00, 0x00, 0x00, // 039: call 103
	0x48, 0x89, 0x06, // 03e: mov %rax,(%rsi)
	0x48, 0x89, 0x56, 0x08, // 041: mov %rdx,0x8(%rsi)
	0x31, 0xc0, // 045: xor %eax,%eax
	0xc3,                                           // 047: ret
	0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, // 048: nopl 0x0(%rax,%rax,1)
	// gettimeofday(rdi *timeval, rsi *timezone)
	0xb8, 0x60, 0x00, 0x00, 0x00, // 050: mov $0x60,%eax
	0x0f, 0x05, // 055: syscall
	0x85, 0xc0, // 057: test %eax,%eax
	0x75, 0xec, // 059: jne 47
	0x48, 0x85, 0xff, // 05b: test %rdi,%rdi
	0x74, 0xe5, // 05e: je 45
	0x48, 0x8b, 0x07, // 060: mov (%rdi),%rax
	0x48, 0x69, 0xc0, 0x00, 0xca, 0x9a, 0x3b, // 063: imul $0x3b9aca00,%rax,%rax
	0x48, 0x69, 0x4f, 0x08, 0xe8, 0x03, 0x00, 0x00, // 06a: imul $0x3e8,0x8(%rdi),%rcx
	0x48, 0x01, 0xc8, // 072: add %rcx,%rax
	0x4c, 0x8d, 0x0d, 0xa4, 0x0f, 0x00, 0x00, // 075: lea 0xfa4(%rip),%r9
	0xe8, 0x4c, 0x00, 0x00, 0x00, // 07c: call cd
	0xe8, 0x7d, 0x00, 0x00, 0x00, // 081: call 103
	0x48, 0x89, 0x07, // 086: mov %rax,(%rdi)
	0x48, 0x89, 0xd0, // 089: mov %rdx,%rax
	0x31, 0xd2, // 08c: xor %edx,%edx
	0xb9, 0xe8, 0x03, 0x00, 0x00, // 08e: mov $0x3e8,%ecx
	0x48, 0xf7, 0xf1, // 093: div %rcx
	0x48, 0x89, 0x47, 0x08, // 096: mov %rax,0x8(%rdi)
	0xeb, 0xa9, // 09a: jmp 45
	0x0f, 0x1f, 0x40, 0x00, // 09c: nopl 0x0(%rax)
	// time(rdi *time_t)
	0x48, 0x89, 0xfe, // 0a0: mov %rdi,%rsi
	0x31, 0xff, // 0a3: xor %edi,%edi
	0xb8, 0xc9, 0x00, 0x00, 0x00, // 0a5: mov $0xc9,%eax
	0x0f, 0x05, // 0aa: syscall
	0x48, 0x69, 0xc0, 0x00, 0xca, 0x9a, 0x3b, // 0ac: imul $0x3b9aca00,%rax,%rax
	0x4c, 0x8d, 0x0d, 0x66, 0x0f, 0x00, 0x00, // 0b3: lea 0xf66(%rip),%r9
	0xe8, 0x0e, 0x00, 0x00, 0x00, // 0ba: call cd
	0xe8, 0x3f, 0x00, 0x00, 0x00, // 0bf: call 103
	0x48, 0x85, 0xf6, // 0c4: test %rsi,%rsi
	0x74, 0x03, // 0c7: je cc
	0x48, 0x89, 0x06, // 0c9: mov %rax,(%rsi)
	0xc3, // 0cc: ret
	// fake: rax = t + off + ((t - anchor) * k >> 32), r9 the block, under the counter
	0x49, 0x89, 0xc0, // 0cd: mov %rax,%r8
	0x4c, 0x8d, 0x1d, 0x29, 0x0f, 0x00, 0x00, // 0d0: lea 0xf29(%rip),%r11
	0x4d, 0x8b, 0x13, // 0d7: mov (%r11),%r10
	0x49, 0xf7, 0xc2, 0x01, 0x00, 0x00, 0x00, // 0da: test $0x1,%r10
	0x75, 0x1c, // 0e1: jne ff
	0x4c, 0x89, 0xc0, // 0e3: mov %r8,%rax
	0x49, 0x2b, 0x41, 0x08, // 0e6: sub 0x8(%r9),%rax
	0x49, 0xf7, 0x6b, 0x08, // 0ea: imulq 0x8(%r11)
	0x48, 0x0f, 0xac, 0xd0, 0x20, // 0ee: shrd $0x20,%rdx,%rax
	0x49, 0x03, 0x01, // 0f3: add (%r9),%rax
	0x4d, 0x3b, 0x13, // 0f6: cmp (%r11),%r10
	0x75, 0xdc, // 0f9: jne d7
	0x4c, 0x01, 0xc0, // 0fb: add %r8,%rax
	0xc3,       // 0fe: ret
	0xf3, 0x90, // 0ff: pause
	0xeb, 0xd4, // 101: jmp d7
	// split: rax ns -> rax s, rdx ns
	0xb9, 0x00, 0xca, 0x9a, 0x3b, // 103: mov $0x3b9aca00,%ecx
	0x48, 0x99, // 108: cqto
	0x48, 0xf7, 0xf9, // 10a: idiv %rcx
	0x48, 0x85, 0xd2, // 10d: test %rdx,%rdx
	0x79, 0x06, // 110: jns 118
	0x48, 0x01, 0xca, // 112: add %rcx,%rdx
	0x48, 0xff, 0xc8, // 115: dec %rax
	0xc3, // 118: ret
}

// The entries of code, by the vDSO function each replaces.
const (
	entryClockGettime = 0x000
	entryGettimeofday = 0x050
	entryTime         = 0x0a0
)
