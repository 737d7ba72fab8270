//go:build amd64 && !purego

package vec

import "golang.org/x/sys/cpu"

// useAsm selects the AVX2 loops; tests flip it to compare the paths.
var useAsm = cpu.X86.HasAVX && cpu.X86.HasAVX2 // GODEBUG=cpu.avx=off turns it off

// useWide selects the AVX-512 loops (integer ones: AVX-512F and DQ);
// GODEBUG=cpu.avx512f=off turns it off.
var useWide = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// countAtLeastAVX512 is CountAtLeastBytes's loop over groups of eight
// elements.
//
//go:noescape
func countAtLeastAVX512(dst *uint8, m *uint64, mask uint64, thr *uint64, stride, k, groups int)

//go:noescape
func addMul4AVX2(u *float64, t *[4]float64, w0, w1, w2, w3 *float64, groups int)

//go:noescape
func addMulAVX2(u *float64, t float64, w *float64, groups int)

// spinsAVX512 is Spins's loop over groups of eight elements.
//
//go:noescape
func spinsAVX512(s, e *float64, w *uint64, groups int)
