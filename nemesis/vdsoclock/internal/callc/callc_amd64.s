#include "textflag.h"

// func Call2(fn, a0, a1 uintptr) uintptr
TEXT ·Call2(SB), NOSPLIT, $128-32
	MOVQ fn+0(FP), AX
	MOVQ a0+8(FP), DI
	MOVQ a1+16(FP), SI
	CALL AX
	MOVQ AX, ret+24(FP)
	RET
