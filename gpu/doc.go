// Package gpu runs dstein's samplers on NVIDIA GPUs without cgo: the
// driver, the runtime compiler (NVRTC) and cuBLAS are opened when a GPU
// is asked for (package internal/cuda), the kernels are CUDA C compiled
// at run time from the sources embedded here, and the matrix products
// are cuBLAS's.
//
// The GPU samplers compute what their CPU counterparts compute, in
// float64 or float32; their results agree with the CPU's to a tolerance
// the tests state, not bit for bit (cuBLAS sums in its own order). Every
// kernel is written without shared memory or barriers, so that the tests
// run it on the host, thread after thread, through the stand-ins of
// package internal/cuda/cudatest, on machines without a GPU; on a machine
// with one, DSTEIN_GPU_TEST=1 runs the same tests on the device.
package gpu
