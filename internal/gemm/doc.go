// Package gemm computes the matrix products of dstein's hot loops: C = A·Bᵀ
// for row-major A (m×k) and B (n×k), or only its entries below the diagonal,
// with rows split over the worker pool.
//
// # Rounding
//
// Every entry is computed as
//
//	c = 0
//	for k = 0, 1, …, K−1: c = fma(A[i][k], B[j][k], c)
//
// with one rounding per step (a fused multiply-add), in order of increasing
// k, in one accumulator: no split accumulators along k, no reassociation.
// Every kernel of the package does exactly this: the AVX2/FMA and AVX-512
// assembly kernels, the pure-Go kernels (math.FMA, edge entries included), and the
// blocked driver, which stores a partial sum after one slice of k and loads
// it again for the next. Results are therefore bit-identical between the
// assembly and pure-Go paths, on any number of cores, with any cache
// blocking, and on any architecture (NaN payloads aside). They differ in the
// last bits from versions before the FMA kernels, which rounded the product
// and the sum separately.
//
// # Paths
//
// On amd64 with AVX2 and FMA (checked at run time with golang.org/x/sys/cpu;
// not in a build with the purego tag) Mul uses an assembly micro-kernel that
// keeps a 4×12 tile of C in twelve vector registers: each step along k
// broadcasts one element of A per row and multiplies it into three vectors
// of B. Both operands are packed k-major (B in panels of 12 columns, zero
// padded; A in panels of 4 rows, by the worker that uses them), and the
// product is blocked for the cache: slices of k of depth 256 (a panel of B
// stays in L1 while the kernel runs down up to 64 rows of A, which stay in
// L2) and blocks of at most 1008 columns of B (2 MiB packed). Edge tiles (the
// last rows and columns, the diagonal of a lower triangle) run in a scratch
// tile of which only the entries that belong to the product are copied.
//
// Where the CPU and the operating system also have AVX-512F, a second
// kernel keeps a 4×24 tile in twelve 512-bit registers (panels of B 24
// columns wide, slices of k of depth 128 so that a panel still fits in
// L1): the same FMAs in the same order, twice as many a step. It doubles
// the kernel's rate where 512-bit FMAs run at full width (BENCHMARKS.md);
// GODEBUG=cpu.avx512f=off selects the AVX2 kernel, and both give the same
// bits (the tests run each).
//
// Elsewhere, and for tiny products (M·N·K < 256), Mul uses the pure-Go
// kernels: 4×2 register blocks, which keep 8 accumulators and 6 operands in
// the 15 floating-point registers Go allocates on amd64. On amd64 below
// GOAMD64=v3, math.FMA tests the CPU at every call, which makes this path
// slow (a few GFLOP/s); it is the fallback only.
//
// # Memory
//
// Mul works on a copy of its ABt and allocates nothing once warm: packing
// buffers come from free lists that keep them for the next call (about
// 2 MiB for each call of Mul running at the same time and 128 KiB for each
// worker).
package gemm
