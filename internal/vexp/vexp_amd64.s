//go:build amd64 && !purego

#include "textflag.h"

// The constants of math.Exp's amd64 kernel (math/exp_amd64.s), each
// repeated in the four lanes of a YMM word.
#define QUAD(name, off, v) \
	DATA name+(off+0)(SB)/8, v  \
	DATA name+(off+8)(SB)/8, v  \
	DATA name+(off+16)(SB)/8, v \
	DATA name+(off+24)(SB)/8, v

QUAD(vexpc<>, 0, $1.4426950408889634073599246810018920)            // log2(e)
QUAD(vexpc<>, 32, $0.69314718055966295651160180568695068359375)    // ln 2, upper part
QUAD(vexpc<>, 64, $0.28235290563031577122588448175013436025525412068e-12) // ln 2, lower part
QUAD(vexpc<>, 96, $0.0625)
QUAD(vexpc<>, 128, $2.4801587301587301587e-5)
QUAD(vexpc<>, 160, $1.9841269841269841270e-4)
QUAD(vexpc<>, 192, $1.3888888888888888889e-3)
QUAD(vexpc<>, 224, $8.3333333333333333333e-3)
QUAD(vexpc<>, 256, $4.1666666666666666667e-2)
QUAD(vexpc<>, 288, $1.6666666666666666667e-1)
QUAD(vexpc<>, 320, $0.5)
QUAD(vexpc<>, 352, $1.0)
QUAD(vexpc<>, 384, $2.0)
QUAD(vexpc<>, 416, $-708.0) // lo
QUAD(vexpc<>, 448, $709.0)  // hi
DATA vexpc<>+480(SB)/4, $1023 // the exponent bias, in four int32 lanes
DATA vexpc<>+484(SB)/4, $1023
DATA vexpc<>+488(SB)/4, $1023
DATA vexpc<>+492(SB)/4, $1023
DATA vexpc<>+496(SB)/8, $1023 // the exponent bias, as an int64
GLOBL vexpc<>(SB), RODATA|NOPTR, $504

// func expAVX2(dst, x *float64, groups int) int
TEXT ·expAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ groups+16(FP), CX
	XORQ AX, AX // elements done

loop:
	TESTQ CX, CX
	JZ    done
	VMOVUPD (SI)(AX*8), Y0

	// Stop before a group with an argument outside [lo, hi] or NaN
	// (ordered, quiet comparisons: NaN compares false).
	VCMPPD    $0x1D, vexpc<>+416(SB), Y0, Y4 // x >= lo
	VCMPPD    $0x12, vexpc<>+448(SB), Y0, Y5 // x <= hi
	VANDPD    Y4, Y5, Y4
	VMOVMSKPD Y4, DX
	CMPQ      DX, $15
	JNE       done

	// k = round(x·log2 e), as an int32 and back as a double.
	VMULPD     vexpc<>+0(SB), Y0, Y1
	VCVTPD2DQY Y1, X2
	VCVTDQ2PD  X2, Y1

	// x − k·ln2 in two parts, then /16.
	VFNMADD231PD vexpc<>+32(SB), Y1, Y0
	VFNMADD231PD vexpc<>+64(SB), Y1, Y0
	VMULPD       vexpc<>+96(SB), Y0, Y0

	// The polynomial, in math.Exp's order.
	VMOVUPD      vexpc<>+128(SB), Y1
	VFMADD213PD  vexpc<>+160(SB), Y0, Y1
	VFMADD213PD  vexpc<>+192(SB), Y0, Y1
	VFMADD213PD  vexpc<>+224(SB), Y0, Y1
	VFMADD213PD  vexpc<>+256(SB), Y0, Y1
	VFMADD213PD  vexpc<>+288(SB), Y0, Y1
	VFMADD213PD  vexpc<>+320(SB), Y0, Y1
	VFMADD213PD  vexpc<>+352(SB), Y0, Y1
	VMULPD       Y1, Y0, Y0

	// Four squarings of (1 + y): y ← y·(y + 2), the last one plus 1.
	VADDPD      vexpc<>+384(SB), Y0, Y1
	VMULPD      Y1, Y0, Y0
	VADDPD      vexpc<>+384(SB), Y0, Y1
	VMULPD      Y1, Y0, Y0
	VADDPD      vexpc<>+384(SB), Y0, Y1
	VMULPD      Y1, Y0, Y0
	VADDPD      vexpc<>+384(SB), Y0, Y1
	VFMADD213PD vexpc<>+352(SB), Y1, Y0

	// Times 2^k: (k + 1023) << 52 is the double 2^k.
	VPADDD    vexpc<>+480(SB), X2, X2
	VPMOVSXDQ X2, Y3
	VPSLLQ    $52, Y3, Y3
	VMULPD    Y3, Y0, Y0

	VMOVUPD Y0, (DI)(AX*8)
	ADDQ    $4, AX
	DECQ    CX
	JMP     loop

done:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func expAVX512(dst, x *float64, groups int) int
//
// expAVX2's operations on eight lanes of a ZMM word (AVX-512F), each
// constant broadcast from the first lane of its entry in vexpc: the same
// roundings in the same order, lane by lane. The exponent bias is added
// after sign extension (in int64 lanes) rather than before (int32): k is in
// [−1021, 1023] for x in [−708, 709], so the sum is the same integer.
TEXT ·expAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ groups+16(FP), CX
	XORQ AX, AX // elements done

loopz:
	TESTQ CX, CX
	JZ    donez
	VMOVUPD (SI)(AX*8), Z0

	// Stop before a group with an argument outside [lo, hi] or NaN.
	VCMPPD.BCST $0x1D, vexpc<>+416(SB), Z0, K1     // x >= lo
	VCMPPD.BCST $0x12, vexpc<>+448(SB), Z0, K1, K2 // and x <= hi
	KMOVW       K2, DX
	CMPQ        DX, $255
	JNE         donez

	// k = round(x·log2 e), as an int32 and back as a double.
	VMULPD.BCST vexpc<>+0(SB), Z0, Z1
	VCVTPD2DQ   Z1, Y2
	VCVTDQ2PD   Y2, Z1

	// x − k·ln2 in two parts, then /16.
	VFNMADD231PD.BCST vexpc<>+32(SB), Z1, Z0
	VFNMADD231PD.BCST vexpc<>+64(SB), Z1, Z0
	VMULPD.BCST       vexpc<>+96(SB), Z0, Z0

	// The polynomial, in math.Exp's order.
	VBROADCASTSD     vexpc<>+128(SB), Z1
	VFMADD213PD.BCST vexpc<>+160(SB), Z0, Z1
	VFMADD213PD.BCST vexpc<>+192(SB), Z0, Z1
	VFMADD213PD.BCST vexpc<>+224(SB), Z0, Z1
	VFMADD213PD.BCST vexpc<>+256(SB), Z0, Z1
	VFMADD213PD.BCST vexpc<>+288(SB), Z0, Z1
	VFMADD213PD.BCST vexpc<>+320(SB), Z0, Z1
	VFMADD213PD.BCST vexpc<>+352(SB), Z0, Z1
	VMULPD           Z1, Z0, Z0

	// Four squarings of (1 + y): y ← y·(y + 2), the last one plus 1.
	VADDPD.BCST      vexpc<>+384(SB), Z0, Z1
	VMULPD           Z1, Z0, Z0
	VADDPD.BCST      vexpc<>+384(SB), Z0, Z1
	VMULPD           Z1, Z0, Z0
	VADDPD.BCST      vexpc<>+384(SB), Z0, Z1
	VMULPD           Z1, Z0, Z0
	VADDPD.BCST      vexpc<>+384(SB), Z0, Z1
	VFMADD213PD.BCST vexpc<>+352(SB), Z1, Z0

	// Times 2^k: (k + 1023) << 52 is the double 2^k.
	VPMOVSXDQ        Y2, Z3
	VPADDQ.BCST      vexpc<>+496(SB), Z3, Z3
	VPSLLQ           $52, Z3, Z3
	VMULPD           Z3, Z0, Z0

	VMOVUPD Z0, (DI)(AX*8)
	ADDQ    $8, AX
	DECQ    CX
	JMP     loopz

donez:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// The constants of math.Log's amd64 kernel (math/log_amd64.s), one per
// entry, for broadcasting.
DATA vlogc<>+0(SB)/8, $0x0000000000000000  // 0 (as an integer)
DATA vlogc<>+8(SB)/8, $0x7FF0000000000000  // +Inf's bits
DATA vlogc<>+16(SB)/8, $0x000FFFFFFFFFFFFF // the mantissa's bits
DATA vlogc<>+24(SB)/8, $0x3FE0000000000000 // 0.5
DATA vlogc<>+32(SB)/8, $0x7FF              // the exponent's bits, shifted
DATA vlogc<>+40(SB)/8, $0x3FE              // its bias − 1
DATA vlogc<>+48(SB)/8, $7.07106781186547524401e-01 // sqrt(2)/2
DATA vlogc<>+56(SB)/8, $1.0
DATA vlogc<>+64(SB)/8, $2.0
DATA vlogc<>+72(SB)/8, $6.666666666666735130e-01 // L1
DATA vlogc<>+80(SB)/8, $3.999999999940941908e-01 // L2
DATA vlogc<>+88(SB)/8, $2.857142874366239149e-01 // L3
DATA vlogc<>+96(SB)/8, $2.222219843214978396e-01 // L4
DATA vlogc<>+104(SB)/8, $1.818357216161805012e-01 // L5
DATA vlogc<>+112(SB)/8, $1.531383769920937332e-01 // L6
DATA vlogc<>+120(SB)/8, $1.479819860511658591e-01 // L7
DATA vlogc<>+128(SB)/8, $6.93147180369123816490e-01 // Ln2Hi
DATA vlogc<>+136(SB)/8, $1.90821492927058770002e-10 // Ln2Lo
GLOBL vlogc<>(SB), RODATA|NOPTR, $144

// func logAVX512(dst, x *float64, groups int) int
//
// math.Log's amd64 operations (math/log_amd64.s) on eight lanes of a ZMM
// word (AVX-512F), without fused multiply-adds, in the same order: the
// same bits lane by lane. It stops before the first group with an
// argument that is not positive and finite (math.Log's special cases).
TEXT ·logAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ groups+16(FP), CX
	XORQ AX, AX // elements done

loopl:
	TESTQ CX, CX
	JZ    donel
	VMOVUPD (SI)(AX*8), Z0

	// Stop before a group with an argument ≤ 0 (or −0), +Inf or NaN:
	// its bits, as signed integers, must lie in (0, +Inf's).
	VPCMPQ.BCST $6, vlogc<>+0(SB), Z0, K1     // bits > 0
	VPCMPQ.BCST $1, vlogc<>+8(SB), Z0, K1, K2 // and bits < +Inf's
	KMOVW       K2, DX
	CMPQ        DX, $255
	JNE         donel

	// f1 = the mantissa with the exponent of 0.5; k = exponent − 0x3FE.
	VPANDQ.BCST vlogc<>+16(SB), Z0, Z2
	VPORQ.BCST  vlogc<>+24(SB), Z2, Z2
	VPSRLQ      $52, Z0, Z1
	VPANDQ.BCST vlogc<>+32(SB), Z1, Z1
	VPSUBQ.BCST vlogc<>+40(SB), Z1, Z1
	VPMOVQD     Z1, Y1
	VCVTDQ2PD   Y1, Z1

	// Where f1 ≤ sqrt(2)/2 (math's CMPSD not-less-than): k −= 1, f1 *= 2,
	// as 1 or 0 subtracted and 2 or 1 multiplied.
	VCMPPD.BCST  $2, vlogc<>+48(SB), Z2, K3
	VPXORQ       Z3, Z3, Z3
	VBROADCASTSD vlogc<>+56(SB), K3, Z3
	VSUBPD       Z3, Z1, Z1
	VADDPD.BCST  vlogc<>+56(SB), Z3, Z3
	VMULPD       Z3, Z2, Z2

	// f = f1 − 1; s = f/(2 + f); s2 = s·s; s4 = s2·s2.
	VSUBPD.BCST vlogc<>+56(SB), Z2, Z2
	VADDPD.BCST vlogc<>+64(SB), Z2, Z0
	VDIVPD      Z0, Z2, Z3
	VMULPD      Z3, Z3, Z4
	VMULPD      Z4, Z4, Z5

	// t1 = s2·(L1 + s4·(L3 + s4·(L5 + s4·L7))).
	VMULPD.BCST vlogc<>+120(SB), Z5, Z6
	VADDPD.BCST vlogc<>+104(SB), Z6, Z6
	VMULPD      Z5, Z6, Z6
	VADDPD.BCST vlogc<>+88(SB), Z6, Z6
	VMULPD      Z5, Z6, Z6
	VADDPD.BCST vlogc<>+72(SB), Z6, Z6
	VMULPD      Z6, Z4, Z4

	// t2 = s4·(L2 + s4·(L4 + s4·L6)); R = t1 + t2.
	VMULPD.BCST vlogc<>+112(SB), Z5, Z6
	VADDPD.BCST vlogc<>+96(SB), Z6, Z6
	VMULPD      Z5, Z6, Z6
	VADDPD.BCST vlogc<>+80(SB), Z6, Z6
	VMULPD      Z6, Z5, Z5
	VADDPD      Z5, Z4, Z4

	// hfsq = 0.5·f·f; k·Ln2Hi − ((hfsq − (s·(hfsq + R) + k·Ln2Lo)) − f).
	VMULPD.BCST vlogc<>+24(SB), Z2, Z0
	VMULPD      Z2, Z0, Z0
	VADDPD      Z0, Z4, Z4
	VMULPD      Z4, Z3, Z3
	VMULPD.BCST vlogc<>+136(SB), Z1, Z4
	VADDPD      Z4, Z3, Z3
	VSUBPD      Z3, Z0, Z0
	VSUBPD      Z2, Z0, Z0
	VMULPD.BCST vlogc<>+128(SB), Z1, Z1
	VSUBPD      Z0, Z1, Z1

	VMOVUPD Z1, (DI)(AX*8)
	ADDQ    $8, AX
	DECQ    CX
	JMP     loopl

donel:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET
