//go:build amd64 && !purego

package vec

import "golang.org/x/sys/cpu"

// useAsm selects the AVX2 loops; tests flip it to compare the paths.
var useAsm = cpu.X86.HasAVX && cpu.X86.HasAVX2 // GODEBUG=cpu.avx=off turns it off

//go:noescape
func addMul4AVX2(u *float64, t *[4]float64, w0, w1, w2, w3 *float64, groups int)

//go:noescape
func addMulAVX2(u *float64, t float64, w *float64, groups int)
