//go:build amd64 && !purego

package transform

import "golang.org/x/sys/cpu"

// usePairs selects the AVX-512 kernels for the soft memberships of runs of
// two-state coordinates (GODEBUG=cpu.avx512f=off turns them off; tests
// flip it to compare the paths).
var usePairs = cpu.X86.HasAVX512F

// pairStepsAVX512 writes, for groups of eight coordinates, z = (x − cut)/τ
// and t = −|z|.
//
//go:noescape
func pairStepsAVX512(z, t, x, cut *float64, tau float64, groups int)

// pairMembershipsAVX512 writes, for groups of eight two-state coordinates
// from z and e = exp(−|z|), the pairs of memberships and of their
// derivatives that rowMemberships' two-state branch writes, with the same
// operations (so the same bits, but for the payload of a NaN: VMAXPD keeps
// a NaN as it is, Go's max does not).
//
//go:noescape
func pairMembershipsAVX512(mem, dmem, z, e *float64, tau, minm float64, groups int)
