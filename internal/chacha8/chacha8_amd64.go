//go:build amd64 && !purego

package chacha8

import "golang.org/x/sys/cpu"

// hasKernel selects the AVX-512 kernel (AVX-512F: 32-bit lanes and
// rotations in ZMM registers; GODEBUG=cpu.avx512f=off turns it off).
var hasKernel = cpu.X86.HasAVX512F

// period16 computes a period's sixteen blocks, one per 32-bit lane.
//
//go:noescape
func period16(seed *[4]uint64, out *[periodLen]uint64)
