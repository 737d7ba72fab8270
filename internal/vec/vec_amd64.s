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

// func countAtLeastAVX512(dst *uint8, m *uint64, mask uint64, thr *uint64, stride, k, groups int)
TEXT ·countAtLeastAVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ m+8(FP), SI
	VPBROADCASTQ mask+16(FP), Z30
	MOVQ thr+24(FP), DX
	MOVQ stride+32(FP), R8
	SHLQ $3, R8 // the rows' stride in bytes
	MOVQ k+40(FP), R9
	MOVQ groups+48(FP), CX
	MOVQ $1, AX
	VPBROADCASTQ AX, Z31

group:
	VMOVDQU64 (SI), Z0
	VPANDQ    Z30, Z0, Z0
	VPXORQ    Z1, Z1, Z1
	MOVQ      DX, R10
	MOVQ      R9, R11

row:
	VPCMPUQ $5, (R10), Z0, K1 // m ≥ thr (not less than)
	VPADDQ  Z31, Z1, K1, Z1   // +1 where it is
	ADDQ    R8, R10
	DECQ    R11
	JNZ     row

	VPMOVQB   Z1, (DI) // the eight counts as bytes
	ADDQ      $64, SI
	ADDQ      $8, DI
	ADDQ      $64, DX
	DECQ      CX
	JNZ       group

	VZEROUPPER
	RET

// Constants of spinsAVX512: 1, 2⁶⁴, the sign bit (uint64(NaN) on amd64),
// all ones, −1.
DATA spinc<>+0(SB)/8, $1.0
DATA spinc<>+8(SB)/8, $0x43f0000000000000
DATA spinc<>+16(SB)/8, $0x8000000000000000
DATA spinc<>+24(SB)/8, $0xffffffffffffffff
DATA spinc<>+32(SB)/8, $-1.0
GLOBL spinc<>(SB), RODATA|NOPTR, $40

// func spinsAVX512(s, e *float64, w *uint64, groups int)
TEXT ·spinsAVX512(SB), NOSPLIT, $0-32
	MOVQ         s+0(FP), DI
	MOVQ         e+8(FP), SI
	MOVQ         w+16(FP), DX
	MOVQ         groups+24(FP), CX
	VBROADCASTSD spinc<>+0(SB), Z0  // 1
	VBROADCASTSD spinc<>+8(SB), Z1  // 2⁶⁴
	VPBROADCASTQ spinc<>+16(SB), Z2 // the sign bit
	VPBROADCASTQ spinc<>+24(SB), Z3 // all ones
	VBROADCASTSD spinc<>+32(SB), Z4 // −1

spins:
	TESTQ       CX, CX
	JZ          spinsdone
	VMOVUPD     (SI), Z5
	VADDPD      Z5, Z0, Z6      // 1 + e
	VDIVPD      Z6, Z0, Z6      // p = 1/(1 + e)
	VMULPD      Z1, Z6, Z7      // p·2⁶⁴
	VCVTTPD2UQQ Z7, Z8          // ⌊p·2⁶⁴⌋ (exact where p < 1)
	VCMPPD      $0x1D, Z0, Z6, K1 // p ≥ 1 (ordered, quiet)
	VMOVDQA64   Z3, K1, Z8      // saturate at 2⁶⁴ − 1
	VCMPPD      $0x03, Z6, Z6, K2 // p is NaN
	VMOVDQA64   Z2, K2, Z8      // uint64(NaN): the sign bit, as Go on amd64
	VMOVDQU64   (DX), Z9
	VPCMPUQ     $1, Z8, Z9, K3  // w < threshold (unsigned)
	VBLENDMPD   Z0, Z4, K3, Z10 // +1 there, else −1
	VMOVUPD     Z10, (DI)
	ADDQ        $64, DI
	ADDQ        $64, SI
	ADDQ        $64, DX
	DECQ        CX
	JMP         spins

spinsdone:
	VZEROUPPER
	RET
