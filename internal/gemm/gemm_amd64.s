//go:build amd64 && !purego

#include "textflag.h"

// One step along k of the 4×12 tile: three vectors of the packed panel of B
// (at boff from DI) and, for each of the four rows of the packed panel of A
// (at aoff from SI, one row after the other), one broadcast element times
// the three vectors into that row's three accumulators.
#define STEP(aoff, boff) \
	VMOVUPD      boff+0(DI), Y12       \
	VMOVUPD      boff+32(DI), Y13      \
	VMOVUPD      boff+64(DI), Y14      \
	VBROADCASTSD aoff+0(SI), Y15       \
	VFMADD231PD  Y12, Y15, Y0          \
	VFMADD231PD  Y13, Y15, Y1          \
	VFMADD231PD  Y14, Y15, Y2          \
	VBROADCASTSD aoff+8(SI), Y15       \
	VFMADD231PD  Y12, Y15, Y3          \
	VFMADD231PD  Y13, Y15, Y4          \
	VFMADD231PD  Y14, Y15, Y5          \
	VBROADCASTSD aoff+16(SI), Y15      \
	VFMADD231PD  Y12, Y15, Y6          \
	VFMADD231PD  Y13, Y15, Y7          \
	VFMADD231PD  Y14, Y15, Y8          \
	VBROADCASTSD aoff+24(SI), Y15      \
	VFMADD231PD  Y12, Y15, Y9          \
	VFMADD231PD  Y13, Y15, Y10         \
	VFMADD231PD  Y14, Y15, Y11

// func kern4x12(kb int, a *float64, b *float64, c *float64, ldc int, load bool)
TEXT ·kern4x12(SB), NOSPLIT, $0-41
	MOVQ    kb+0(FP), CX
	MOVQ    a+8(FP), SI
	MOVQ    b+16(FP), DI
	MOVQ    c+24(FP), DX
	MOVQ    ldc+32(FP), R10
	SHLQ    $3, R10                // R10 = ldc in bytes
	LEAQ    (DX)(R10*2), R11       // R11 = row 2 of C; rows 1, 3 are +R10
	MOVBLZX load+40(FP), AX

	// Prefetch the tile below (the caller's next tile): its rows of C are
	// likely out of cache, and the kernel's first loads would wait for them.
	// A prefetch never faults, whatever the address.
	LEAQ       (R11)(R10*2), R12
	PREFETCHT0 0(R12)
	PREFETCHT0 64(R12)
	PREFETCHT0 95(R12)
	PREFETCHT0 0(R12)(R10*1)
	PREFETCHT0 64(R12)(R10*1)
	PREFETCHT0 95(R12)(R10*1)
	LEAQ       (R12)(R10*2), R12
	PREFETCHT0 0(R12)
	PREFETCHT0 64(R12)
	PREFETCHT0 95(R12)
	PREFETCHT0 0(R12)(R10*1)
	PREFETCHT0 64(R12)(R10*1)
	PREFETCHT0 95(R12)(R10*1)

	TESTQ AX, AX
	JZ    zero
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 0(DX)(R10*1), Y3
	VMOVUPD 32(DX)(R10*1), Y4
	VMOVUPD 64(DX)(R10*1), Y5
	VMOVUPD 0(R11), Y6
	VMOVUPD 32(R11), Y7
	VMOVUPD 64(R11), Y8
	VMOVUPD 0(R11)(R10*1), Y9
	VMOVUPD 32(R11)(R10*1), Y10
	VMOVUPD 64(R11)(R10*1), Y11
	JMP     loop4

zero:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11

loop4:
	CMPQ CX, $4
	JLT  tail
	STEP(0, 0)
	STEP(32, 96)
	STEP(64, 192)
	STEP(96, 288)
	ADDQ $128, SI
	ADDQ $384, DI
	SUBQ $4, CX
	JMP  loop4

tail:
	TESTQ CX, CX
	JZ    store
	STEP(0, 0)
	ADDQ  $32, SI
	ADDQ  $96, DI
	DECQ  CX
	JMP   tail

store:
	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 0(DX)(R10*1)
	VMOVUPD Y4, 32(DX)(R10*1)
	VMOVUPD Y5, 64(DX)(R10*1)
	VMOVUPD Y6, 0(R11)
	VMOVUPD Y7, 32(R11)
	VMOVUPD Y8, 64(R11)
	VMOVUPD Y9, 0(R11)(R10*1)
	VMOVUPD Y10, 32(R11)(R10*1)
	VMOVUPD Y11, 64(R11)(R10*1)
	VZEROUPPER
	RET

// func fmaPeak(n int)
TEXT ·fmaPeak(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	TESTQ  CX, CX
	JZ     peakdone

peakloop:
	VFMADD231PD Y12, Y13, Y0
	VFMADD231PD Y12, Y13, Y1
	VFMADD231PD Y12, Y13, Y2
	VFMADD231PD Y12, Y13, Y3
	VFMADD231PD Y12, Y13, Y4
	VFMADD231PD Y12, Y13, Y5
	VFMADD231PD Y12, Y13, Y6
	VFMADD231PD Y12, Y13, Y7
	VFMADD231PD Y12, Y13, Y8
	VFMADD231PD Y12, Y13, Y9
	VFMADD231PD Y12, Y13, Y10
	VFMADD231PD Y12, Y13, Y11
	DECQ        CX
	JNZ         peakloop

peakdone:
	VZEROUPPER
	RET

// One step along k of the 4×24 tile (AVX-512): three vectors of 8 packed
// elements of B (at boff from DI) and, for each of the four rows of A (at
// aoff from SI), one broadcast element times the three vectors into that
// row's three accumulators.
#define STEPZ(aoff, boff) \
	VMOVUPD      boff+0(DI), Z12       \
	VMOVUPD      boff+64(DI), Z13      \
	VMOVUPD      boff+128(DI), Z14     \
	VBROADCASTSD aoff+0(SI), Z15       \
	VFMADD231PD  Z12, Z15, Z0          \
	VFMADD231PD  Z13, Z15, Z1          \
	VFMADD231PD  Z14, Z15, Z2          \
	VBROADCASTSD aoff+8(SI), Z15       \
	VFMADD231PD  Z12, Z15, Z3          \
	VFMADD231PD  Z13, Z15, Z4          \
	VFMADD231PD  Z14, Z15, Z5          \
	VBROADCASTSD aoff+16(SI), Z15      \
	VFMADD231PD  Z12, Z15, Z6          \
	VFMADD231PD  Z13, Z15, Z7          \
	VFMADD231PD  Z14, Z15, Z8          \
	VBROADCASTSD aoff+24(SI), Z15      \
	VFMADD231PD  Z12, Z15, Z9          \
	VFMADD231PD  Z13, Z15, Z10         \
	VFMADD231PD  Z14, Z15, Z11

// func kern4x24(kb int, a *float64, b *float64, c *float64, ldc int, load bool)
//
// kern4x12's contract for a tile of 4 rows × 24 columns, in twelve 512-bit
// accumulators (AVX-512F only: VPXORQ, not VXORPD, clears them).
TEXT ·kern4x24(SB), NOSPLIT, $0-41
	MOVQ    kb+0(FP), CX
	MOVQ    a+8(FP), SI
	MOVQ    b+16(FP), DI
	MOVQ    c+24(FP), DX
	MOVQ    ldc+32(FP), R10
	SHLQ    $3, R10
	LEAQ    (DX)(R10*2), R11
	MOVBLZX load+40(FP), AX

	// Prefetch the tile below: 24 columns are 192 bytes a row.
	LEAQ       (R11)(R10*2), R12
	PREFETCHT0 0(R12)
	PREFETCHT0 64(R12)
	PREFETCHT0 128(R12)
	PREFETCHT0 191(R12)
	PREFETCHT0 0(R12)(R10*1)
	PREFETCHT0 64(R12)(R10*1)
	PREFETCHT0 128(R12)(R10*1)
	PREFETCHT0 191(R12)(R10*1)
	LEAQ       (R12)(R10*2), R12
	PREFETCHT0 0(R12)
	PREFETCHT0 64(R12)
	PREFETCHT0 128(R12)
	PREFETCHT0 191(R12)
	PREFETCHT0 0(R12)(R10*1)
	PREFETCHT0 64(R12)(R10*1)
	PREFETCHT0 128(R12)(R10*1)
	PREFETCHT0 191(R12)(R10*1)

	TESTQ AX, AX
	JZ    zeroz
	VMOVUPD 0(DX), Z0
	VMOVUPD 64(DX), Z1
	VMOVUPD 128(DX), Z2
	VMOVUPD 0(DX)(R10*1), Z3
	VMOVUPD 64(DX)(R10*1), Z4
	VMOVUPD 128(DX)(R10*1), Z5
	VMOVUPD 0(R11), Z6
	VMOVUPD 64(R11), Z7
	VMOVUPD 128(R11), Z8
	VMOVUPD 0(R11)(R10*1), Z9
	VMOVUPD 64(R11)(R10*1), Z10
	VMOVUPD 128(R11)(R10*1), Z11
	JMP     loopz

zeroz:
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	VPXORQ Z8, Z8, Z8
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11

loopz:
	CMPQ CX, $4
	JLT  tailz
	STEPZ(0, 0)
	STEPZ(32, 192)
	STEPZ(64, 384)
	STEPZ(96, 576)
	ADDQ $128, SI
	ADDQ $768, DI
	SUBQ $4, CX
	JMP  loopz

tailz:
	TESTQ CX, CX
	JZ    storez
	STEPZ(0, 0)
	ADDQ  $32, SI
	ADDQ  $192, DI
	DECQ  CX
	JMP   tailz

storez:
	VMOVUPD Z0, 0(DX)
	VMOVUPD Z1, 64(DX)
	VMOVUPD Z2, 128(DX)
	VMOVUPD Z3, 0(DX)(R10*1)
	VMOVUPD Z4, 64(DX)(R10*1)
	VMOVUPD Z5, 128(DX)(R10*1)
	VMOVUPD Z6, 0(R11)
	VMOVUPD Z7, 64(R11)
	VMOVUPD Z8, 128(R11)
	VMOVUPD Z9, 0(R11)(R10*1)
	VMOVUPD Z10, 64(R11)(R10*1)
	VMOVUPD Z11, 128(R11)(R10*1)
	VZEROUPPER
	RET

// func fmaPeak512(n int)
TEXT ·fmaPeak512(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	VPXORQ Z8, Z8, Z8
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11
	VPXORQ Z12, Z12, Z12
	VPXORQ Z13, Z13, Z13
	TESTQ  CX, CX
	JZ     peakdonez

peakloopz:
	VFMADD231PD Z12, Z13, Z0
	VFMADD231PD Z12, Z13, Z1
	VFMADD231PD Z12, Z13, Z2
	VFMADD231PD Z12, Z13, Z3
	VFMADD231PD Z12, Z13, Z4
	VFMADD231PD Z12, Z13, Z5
	VFMADD231PD Z12, Z13, Z6
	VFMADD231PD Z12, Z13, Z7
	VFMADD231PD Z12, Z13, Z8
	VFMADD231PD Z12, Z13, Z9
	VFMADD231PD Z12, Z13, Z10
	VFMADD231PD Z12, Z13, Z11
	DECQ        CX
	JNZ         peakloopz

peakdonez:
	VZEROUPPER
	RET
