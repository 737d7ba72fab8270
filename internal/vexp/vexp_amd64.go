//go:build amd64 && !purego

package vexp

import "golang.org/x/sys/cpu"

// useAsm selects the AVX2 kernel. math.Exp takes its FMA path whenever the
// CPU has AVX and FMA, so with AVX2 and FMA both follow the same operations.
// Tests flip it to compare the paths.
var useAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// expAVX2 evaluates groups of four elements from x into dst, at most groups
// of them, and returns the number of elements done: it stops before the
// first group with an argument outside [lo, hi] (or NaN).
//
//go:noescape
func expAVX2(dst, x *float64, groups int) int
