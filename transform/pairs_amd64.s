//go:build amd64 && !purego

#include "textflag.h"

// Lane indices for VPERMI2PD that interleave two tables a (indices 0–7)
// and b (8–15) into pairs: a0 b0 a1 b1 a2 b2 a3 b3, then a4 b4 … a7 b7;
// then the sign bit, 1 and 0.5.
DATA pairc<>+0(SB)/8, $0
DATA pairc<>+8(SB)/8, $8
DATA pairc<>+16(SB)/8, $1
DATA pairc<>+24(SB)/8, $9
DATA pairc<>+32(SB)/8, $2
DATA pairc<>+40(SB)/8, $10
DATA pairc<>+48(SB)/8, $3
DATA pairc<>+56(SB)/8, $11
DATA pairc<>+64(SB)/8, $4
DATA pairc<>+72(SB)/8, $12
DATA pairc<>+80(SB)/8, $5
DATA pairc<>+88(SB)/8, $13
DATA pairc<>+96(SB)/8, $6
DATA pairc<>+104(SB)/8, $14
DATA pairc<>+112(SB)/8, $7
DATA pairc<>+120(SB)/8, $15
DATA pairc<>+128(SB)/8, $0x8000000000000000
DATA pairc<>+136(SB)/8, $1.0
DATA pairc<>+144(SB)/8, $0.5
GLOBL pairc<>(SB), RODATA|NOPTR, $152

// func pairStepsAVX512(z, t, x, cut *float64, tau float64, groups int)
TEXT ·pairStepsAVX512(SB), NOSPLIT, $0-48
	MOVQ         z+0(FP), DI
	MOVQ         t+8(FP), SI
	MOVQ         x+16(FP), AX
	MOVQ         cut+24(FP), BX
	VBROADCASTSD tau+32(FP), Z0
	MOVQ         groups+40(FP), CX
	VPBROADCASTQ pairc<>+128(SB), Z1 // the sign bit

steps:
	TESTQ   CX, CX
	JZ      stepsdone
	VMOVUPD (AX), Z2
	VSUBPD  (BX), Z2, Z2 // x − cut
	VDIVPD  Z0, Z2, Z2   // z = (x − cut)/τ
	VMOVUPD Z2, (DI)
	VPORQ   Z1, Z2, Z3   // −|z|: the sign bit set
	VMOVUPD Z3, (SI)
	ADDQ    $64, AX
	ADDQ    $64, BX
	ADDQ    $64, DI
	ADDQ    $64, SI
	DECQ    CX
	JMP     steps

stepsdone:
	VZEROUPPER
	RET

// func pairMembershipsAVX512(mem, dmem, z, e *float64, tau, minm float64, groups int)
TEXT ·pairMembershipsAVX512(SB), NOSPLIT, $0-56
	MOVQ         mem+0(FP), DI
	MOVQ         dmem+8(FP), SI
	MOVQ         z+16(FP), AX
	MOVQ         e+24(FP), BX
	VBROADCASTSD tau+32(FP), Z0
	VBROADCASTSD minm+40(FP), Z4
	MOVQ         groups+48(FP), CX
	VBROADCASTSD pairc<>+136(SB), Z1 // 1
	VBROADCASTSD pairc<>+144(SB), Z2 // 0.5
	VPXORQ       Z3, Z3, Z3          // +0
	VMOVDQU64    pairc<>+0(SB), Z5   // pairs of the lanes 0–3
	VMOVDQU64    pairc<>+64(SB), Z6  // pairs of the lanes 4–7

mems:
	TESTQ     CX, CX
	JZ        memsdone
	VMOVUPD   (AX), Z7                // z
	VMOVUPD   (BX), Z8                // e = exp(−|z|)
	VADDPD    Z8, Z1, Z9              // 1 + e
	VDIVPD    Z9, Z1, Z10             // big = 1/(1+e)
	VDIVPD    Z9, Z8, Z11             // small = e/(1+e)
	VCMPPD    $0x1D, Z3, Z7, K1       // z ≥ 0 (ordered, quiet)
	VBLENDMPD Z10, Z11, K1, Z12       // l = big if z ≥ 0, else small
	VBLENDMPD Z11, Z10, K1, Z13       // lc = small if z ≥ 0, else big
	VMULPD    Z13, Z12, Z14           // l·lc
	VDIVPD    Z0, Z14, Z14            // dl = l·lc/τ
	VSUBPD    Z13, Z1, Z15            // 1 − lc
	VCMPPD    $0x11, Z2, Z12, K2      // l < 0.5 (ordered, quiet)
	VMOVAPD   Z12, K2, Z15            // u = l where l < 0.5
	VMAXPD    Z13, Z4, Z16            // max(lc, minm): lc where either is NaN
	VMAXPD    Z15, Z4, Z17            // max(u, minm)
	VSUBPD    Z14, Z3, Z18            // 0 − dl
	VMOVDQA64 Z5, Z19
	VPERMI2PD Z17, Z16, Z19
	VMOVDQA64 Z6, Z20
	VPERMI2PD Z17, Z16, Z20
	VMOVUPD   Z19, (DI)
	VMOVUPD   Z20, 64(DI)
	VMOVDQA64 Z5, Z21
	VPERMI2PD Z14, Z18, Z21
	VMOVDQA64 Z6, Z22
	VPERMI2PD Z14, Z18, Z22
	VMOVUPD   Z21, (SI)
	VMOVUPD   Z22, 64(SI)
	ADDQ      $64, AX
	ADDQ      $64, BX
	ADDQ      $128, DI
	ADDQ      $128, SI
	DECQ      CX
	JMP       mems

memsdone:
	VZEROUPPER
	RET
