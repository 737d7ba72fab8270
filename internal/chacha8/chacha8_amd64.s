//go:build amd64 && !purego

#include "textflag.h"

// The block counters 0 … 15, one per 32-bit lane.
DATA lanes<>+0(SB)/8, $0x0000000100000000
DATA lanes<>+8(SB)/8, $0x0000000300000002
DATA lanes<>+16(SB)/8, $0x0000000500000004
DATA lanes<>+24(SB)/8, $0x0000000700000006
DATA lanes<>+32(SB)/8, $0x0000000900000008
DATA lanes<>+40(SB)/8, $0x0000000b0000000a
DATA lanes<>+48(SB)/8, $0x0000000d0000000c
DATA lanes<>+56(SB)/8, $0x0000000f0000000e
GLOBL lanes<>(SB), RODATA|NOPTR, $64

// QR is the ChaCha quarter round on the words A, B, C, D of sixteen blocks.
#define QR(A, B, C, D) \
	VPADDD B, A, A; VPXORD A, D, D; VPROLD $16, D, D; \
	VPADDD D, C, C; VPXORD C, B, B; VPROLD $12, B, B; \
	VPADDD B, A, A; VPXORD A, D, D; VPROLD $8, D, D;  \
	VPADDD D, C, C; VPXORD C, B, B; VPROLD $7, B, B

// KEY adds the seed's 32-bit word K back to the state word Z.
#define KEY(K, Z) \
	VPBROADCASTD (4*K)(AX), Z16; \
	VPADDD Z16, Z, Z

// OUT stores state word W (register Z): the 128-bit lane q holds blocks
// 4q … 4q+3, which are numbers 32q + 2W and 32q + 2W + 1.
#define OUT(W, Z) \
	VEXTRACTI32X4 $0, Z, (16*W)(BX);     \
	VEXTRACTI32X4 $1, Z, (256+16*W)(BX); \
	VEXTRACTI32X4 $2, Z, (512+16*W)(BX); \
	VEXTRACTI32X4 $3, Z, (768+16*W)(BX)

// func period16(seed *[4]uint64, out *[128]uint64)
TEXT ·period16(SB), NOSPLIT, $0-16
	MOVQ seed+0(FP), AX
	MOVQ out+8(FP), BX

	MOVL $0x61707865, DX
	VPBROADCASTD DX, Z0
	MOVL $0x3320646e, DX
	VPBROADCASTD DX, Z1
	MOVL $0x79622d32, DX
	VPBROADCASTD DX, Z2
	MOVL $0x6b206574, DX
	VPBROADCASTD DX, Z3
	VPBROADCASTD 0(AX), Z4
	VPBROADCASTD 4(AX), Z5
	VPBROADCASTD 8(AX), Z6
	VPBROADCASTD 12(AX), Z7
	VPBROADCASTD 16(AX), Z8
	VPBROADCASTD 20(AX), Z9
	VPBROADCASTD 24(AX), Z10
	VPBROADCASTD 28(AX), Z11
	VMOVDQU32 lanes<>(SB), Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

	MOVQ $4, CX // four double rounds: ChaCha8

rounds:
	QR(Z0, Z4, Z8, Z12)
	QR(Z1, Z5, Z9, Z13)
	QR(Z2, Z6, Z10, Z14)
	QR(Z3, Z7, Z11, Z15)
	QR(Z0, Z5, Z10, Z15)
	QR(Z1, Z6, Z11, Z12)
	QR(Z2, Z7, Z8, Z13)
	QR(Z3, Z4, Z9, Z14)
	DECQ CX
	JNZ  rounds

	KEY(0, Z4)
	KEY(1, Z5)
	KEY(2, Z6)
	KEY(3, Z7)
	KEY(4, Z8)
	KEY(5, Z9)
	KEY(6, Z10)
	KEY(7, Z11)

	OUT(0, Z0)
	OUT(1, Z1)
	OUT(2, Z2)
	OUT(3, Z3)
	OUT(4, Z4)
	OUT(5, Z5)
	OUT(6, Z6)
	OUT(7, Z7)
	OUT(8, Z8)
	OUT(9, Z9)
	OUT(10, Z10)
	OUT(11, Z11)
	OUT(12, Z12)
	OUT(13, Z13)
	OUT(14, Z14)
	OUT(15, Z15)

	VZEROUPPER
	RET
