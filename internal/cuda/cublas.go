package cuda

import (
	"fmt"
	"math"
	"os"
	"unsafe"
)

// CUBLASEnv names the environment variable that gives cuBLAS's path (or
// soname) instead of libcublas.so.13 or .12.
const CUBLASEnv = "DSTEIN_CUDA_CUBLAS"

// cublasSonames are tried in turn when CUBLASEnv is unset, as NVRTC's are.
var cublasSonames = []string{"libcublas.so.13", "libcublas.so.12",
	"/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.12",
	"/usr/local/cuda/targets/x86_64-linux/lib/libcublas.so.13", "/usr/local/cuda/targets/x86_64-linux/lib/libcublas.so.12"}

// CUBLAS is the loaded cuBLAS library: its matrix products on a context's
// device memory.
type CUBLAS struct {
	Path string

	cublasCreate          func(handle *uintptr) int32
	cublasDestroy         func(handle uintptr) int32
	cublasGetVersion      func(handle uintptr, v *int32) int32
	cublasSetMathMode     func(handle uintptr, mode int32) int32
	cublasGetStatusString func(res int32) *byte
	// dgemm and sgemm are cublasDgemm_v2's and cublasSgemm_v2's
	// addresses, called through purego.SyscallN (14 integer arguments) by
	// a rawCall: a function bound by RegisterFunc goes through reflection
	// and allocates at every call, and a sampler's iteration makes several
	// products.
	dgemm, sgemm uintptr
}

// LoadCUBLAS opens cuBLAS (CUBLASEnv's, else by soname), once per library.
func LoadCUBLAS() (*CUBLAS, error) {
	return LoadCUBLASFor(0)
}

// LoadCUBLASFor is LoadCUBLAS that tries the sonames of the driver's major
// version first (driver as cuDriverGetVersion gives it; 0: any): cuBLAS 13
// needs a CUDA 13 driver, and was tried first on 12.x drivers.
func LoadCUBLASFor(driver int) (*CUBLAS, error) {
	path := os.Getenv(CUBLASEnv)
	return cached(fmt.Sprintf("cublas:%s:%d", path, driver), func() (*CUBLAS, error) { return openCUBLAS(path, driver) })
}

func openCUBLAS(path string, driver int) (*CUBLAS, error) {
	lib := library{env: CUBLASEnv, what: "cuBLAS library", missing: "cuBLAS is not installed",
		fix: "install the CUDA toolkit's libcublas", names: majorFirst(cublasSonames, driver)}
	handle, path, err := lib.open(path)
	if err != nil {
		return nil, err
	}
	b := &CUBLAS{Path: path}
	if err := bind(handle, path, "cuBLAS", []symbol{
		{"cublasCreate_v2", &b.cublasCreate},
		{"cublasDestroy_v2", &b.cublasDestroy},
		{"cublasGetVersion_v2", &b.cublasGetVersion},
		{"cublasSetMathMode", &b.cublasSetMathMode},
		{"cublasGetStatusString", &b.cublasGetStatusString},
	}); err != nil {
		return nil, err
	}
	if err := bindAddrs(handle, path, "cuBLAS", []addr{{"cublasDgemm_v2", &b.dgemm}, {"cublasSgemm_v2", &b.sgemm}}); err != nil {
		return nil, err
	}
	return b, nil
}

// describe names a failed cuBLAS call with cuBLAS's words for res.
func (b *CUBLAS) describe(call string, res int32) string {
	msg := ""
	if p := b.cublasGetStatusString(res); p != nil {
		msg = ": " + goString(p)
	}
	return fmt.Sprintf("%s failed with cuBLAS status %d%s", call, res, msg)
}

// BLAS is a cuBLAS handle bound to a context: its calls run on the
// context's thread, queued after the context's earlier work.
type BLAS struct {
	b       *CUBLAS
	c       *Context
	h       uintptr
	Version int
}

// NewBLAS creates a cuBLAS handle on c, in cuBLAS's default math mode
// (no TF32 for single precision: products in the type's own precision).
func (b *CUBLAS) NewBLAS(c *Context) (*BLAS, error) {
	h := &BLAS{b: b, c: c}
	err := c.do(func() error {
		if res := b.cublasCreate(&h.h); res != 0 {
			return fmt.Errorf("%s", b.describe("cublasCreate", res))
		}
		var v int32
		if res := b.cublasGetVersion(h.h, &v); res != 0 {
			b.cublasDestroy(h.h)
			return fmt.Errorf("%s", b.describe("cublasGetVersion", res))
		}
		h.Version = int(v)
		const defaultMath = 0 // CUBLAS_DEFAULT_MATH
		if res := b.cublasSetMathMode(h.h, defaultMath); res != 0 {
			b.cublasDestroy(h.h)
			return fmt.Errorf("%s", b.describe("cublasSetMathMode", res))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// Close destroys the handle.
func (h *BLAS) Close() error {
	return h.c.do(func() error {
		if res := h.b.cublasDestroy(h.h); res != 0 {
			return fmt.Errorf("%s", h.b.describe("cublasDestroy", res))
		}
		return nil
	})
}

// Gemm is a product of row-major matrices in device memory,
// C = alpha·op(A)·op(B) + beta·C with C m×n and op(A) m×k, where op
// transposes when TransA (TransB) is set; Lda, Ldb and Ldc are the row
// strides (the number of columns of the stored matrices when 0).
type Gemm struct {
	TransA, TransB bool
	M, N, K        int
	Alpha, Beta    float64
	A, B, C        Ptr
	Lda, Ldb, Ldc  int
}

// strides returns the row strides with their defaults.
func (g Gemm) strides() (lda, ldb, ldc int) {
	lda, ldb, ldc = g.Lda, g.Ldb, g.Ldc
	if lda == 0 {
		lda = g.K
		if g.TransA {
			lda = g.M
		}
	}
	if ldb == 0 {
		ldb = g.N
		if g.TransB {
			ldb = g.K
		}
	}
	if ldc == 0 {
		ldc = g.N
	}
	return
}

// args returns cuBLAS's column-major arguments for g: the row-major
// C = op(A)·op(B) is the column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, so the operands
// swap and each keeps its own transposition flag.
func (g Gemm) args() (ta, tb, m, n, k, lda, ldb, ldc int32, a, b Ptr) {
	la, lb, lc := g.strides()
	op := func(t bool) int32 {
		if t {
			return 1 // CUBLAS_OP_T
		}
		return 0
	}
	return op(g.TransB), op(g.TransA), int32(g.N), int32(g.M), int32(g.K), int32(lb), int32(la), int32(lc), g.B, g.A
}

// check refuses sizes that do not fit cuBLAS's 32-bit arguments.
func (g Gemm) check() error {
	la, lb, lc := g.strides()
	for _, v := range []int{g.M, g.N, g.K, la, lb, lc} {
		if v < 0 || v > 1<<31-1 {
			return fmt.Errorf("cuda: a matrix product of %d×%d by %d: a size over cuBLAS's 32-bit limit", g.M, g.K, g.N)
		}
	}
	return nil
}

// Float64 queues g on float64 matrices. It allocates nothing once warm.
func (h *BLAS) Float64(g Gemm) error {
	return h.gemm(g, false)
}

// Float32 queues g on float32 matrices (Alpha and Beta rounded to
// float32). It allocates nothing once warm.
func (h *BLAS) Float32(g Gemm) error {
	return h.gemm(g, true)
}

// gemm hands g to the context's thread as a pooled rawCall and returns
// cuBLAS's status as an error.
func (h *BLAS) gemm(g Gemm, f32 bool) error {
	if err := g.check(); err != nil {
		return err
	}
	ta, tb, m, n, k, lda, ldb, ldc, a, b := g.args()
	sym, name := h.b.dgemm, "cublasDgemm"
	if f32 {
		sym, name = h.b.sgemm, "cublasSgemm"
	}
	r := rawCalls.get(newRawCall)
	if f32 {
		r.alpha = uint64(math.Float32bits(float32(g.Alpha)))
		r.beta = uint64(math.Float32bits(float32(g.Beta)))
	} else {
		r.alpha, r.beta = math.Float64bits(g.Alpha), math.Float64bits(g.Beta)
	}
	// The scalars' addresses point into r, on the heap (which does not
	// move), reachable until the reply; a float32's bits are the low half
	// of its slot (little-endian).
	r.sym, r.n = sym, 14
	r.args = [14]uintptr{h.h, uintptr(ta), uintptr(tb), uintptr(m), uintptr(n), uintptr(k),
		uintptr(unsafe.Pointer(&r.alpha)), uintptr(a), uintptr(lda), uintptr(b), uintptr(ldb),
		uintptr(unsafe.Pointer(&r.beta)), uintptr(g.C), uintptr(ldc)}
	if res := h.c.raw(r); res != 0 {
		return fmt.Errorf("%s", h.b.describe(name, res))
	}
	return nil
}
