// Package vec holds small vector loops in AVX2 assembly that give the same
// bits as their Go forms: each lane runs the same multiplications and
// additions, in the same order, with no fused multiply-add. Other CPUs,
// other architectures and purego builds run the Go forms, which round each
// product explicitly (float64(a*b)) so that no compiler setting (GOAMD64=v3
// fuses a*b + c otherwise) changes their bits.
package vec
