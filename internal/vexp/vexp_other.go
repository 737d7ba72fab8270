//go:build !amd64 || purego

package vexp

// useAsm is false: there is no vector kernel on this architecture or in a
// purego build.
var useAsm = false

// useWide is false: no AVX-512 kernel either.
var useWide = false

func expAVX2(dst, x *float64, groups int) int { panic("vexp: no vector kernel") }

func expAVX512(dst, x *float64, groups int) int { panic("vexp: no vector kernel") }

// useLog is false: no AVX-512 logarithm either.
var useLog = false

func logAVX512(dst, x *float64, groups int) int { panic("vexp: no vector kernel") }
