//go:build amd64 && !purego

package vexp

import "golang.org/x/sys/cpu"

// useAsm selects the AVX2 kernel. math.Exp takes its FMA path when the CPU
// has AVX and FMA (as its package's cpu flags say, GODEBUG=cpu.avx=off and
// cpu.fma=off included), so the kernel runs only under the same two flags,
// and AVX2 for its integer lanes. Tests flip it to compare the paths.
var useAsm = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA

// useWide selects the AVX-512 kernel (eight lanes) where the CPU and the
// operating system have AVX-512F, under the same flags as useAsm
// (GODEBUG=cpu.avx512f=off leaves the AVX2 kernel).
var useWide = useAsm && cpu.X86.HasAVX512F

// useLog selects the AVX-512 logarithm. math.Log's amd64 kernel uses no
// fused multiply-adds, so this one runs under AVX-512F alone
// (GODEBUG=cpu.avx512f=off turns it off); tests flip it.
var useLog = cpu.X86.HasAVX512F

// expAVX2 evaluates groups of four elements from x into dst, at most groups
// of them, and returns the number of elements done: it stops before the
// first group with an argument outside [−708, 709] (or NaN).
//
//go:noescape
func expAVX2(dst, x *float64, groups int) int

// expAVX512 is expAVX2 in groups of eight elements.
//
//go:noescape
func expAVX512(dst, x *float64, groups int) int

// logAVX512 evaluates math.Log on groups of eight elements from x into
// dst, at most groups of them, and returns the number of elements done:
// it stops before the first group with an argument that is not positive
// and finite.
//
//go:noescape
func logAVX512(dst, x *float64, groups int) int
