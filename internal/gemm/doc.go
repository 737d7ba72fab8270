// Package gemm computes the matrix products of dstein's hot loops in pure
// Go: C = A·Bᵀ for row-major A (m×k) and B (n×k), with 4×4 register blocks
// and rows split over the worker pool.
//
// Every entry of C is accumulated in one register, in order of increasing
// k, whichever block kernel computes it and however the rows are split, so
// results are bit-identical on any number of cores. The kernels are written
// as c += a*b: the default amd64 build (GOAMD64=v1) rounds the product and
// the sum separately; a build with GOAMD64=v3 fuses them into FMA
// instructions, which is about twice as fast and changes the last bits.
//
// The 4×2 register block keeps 8 accumulators and 6 operands in the 15
// floating-point registers Go allocates on amd64; larger blocks spill.
package gemm
