//go:build amd64 && !purego

#include "textflag.h"

// func addMul4AVX2(u *float64, t *[4]float64, w0, w1, w2, w3 *float64, groups int)
TEXT ·addMul4AVX2(SB), NOSPLIT, $0-56
	MOVQ u+0(FP), DI
	MOVQ t+8(FP), AX
	MOVQ w0+16(FP), R8
	MOVQ w1+24(FP), R9
	MOVQ w2+32(FP), R10
	MOVQ w3+40(FP), R11
	MOVQ groups+48(FP), CX
	VBROADCASTSD 0(AX), Y8
	VBROADCASTSD 8(AX), Y9
	VBROADCASTSD 16(AX), Y10
	VBROADCASTSD 24(AX), Y11
	XORQ BX, BX

loop4:
	TESTQ CX, CX
	JZ    done4
	VMOVUPD (DI)(BX*8), Y0
	VMULPD  (R8)(BX*8), Y8, Y1
	VADDPD  Y1, Y0, Y0
	VMULPD  (R9)(BX*8), Y9, Y1
	VADDPD  Y1, Y0, Y0
	VMULPD  (R10)(BX*8), Y10, Y1
	VADDPD  Y1, Y0, Y0
	VMULPD  (R11)(BX*8), Y11, Y1
	VADDPD  Y1, Y0, Y0
	VMOVUPD Y0, (DI)(BX*8)
	ADDQ    $4, BX
	DECQ    CX
	JMP     loop4

done4:
	VZEROUPPER
	RET

// func addMulAVX2(u *float64, t float64, w *float64, groups int)
TEXT ·addMulAVX2(SB), NOSPLIT, $0-32
	MOVQ u+0(FP), DI
	MOVQ w+16(FP), R8
	MOVQ groups+24(FP), CX
	VBROADCASTSD t+8(FP), Y8
	XORQ BX, BX

loop1:
	TESTQ CX, CX
	JZ    done1
	VMOVUPD (DI)(BX*8), Y0
	VMULPD  (R8)(BX*8), Y8, Y1
	VADDPD  Y1, Y0, Y0
	VMOVUPD Y0, (DI)(BX*8)
	ADDQ    $4, BX
	DECQ    CX
	JMP     loop1

done1:
	VZEROUPPER
	RET
