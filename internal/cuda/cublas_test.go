package cuda

import (
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/internal/cuda/cudatest"
)

// gemmRef is C = alpha·op(A)·op(B) + beta·C on row-major matrices, by the
// definition.
func gemmRef(g Gemm, a, b, c []float64) {
	lda, ldb, ldc := g.strides()
	for i := range g.M {
		for j := range g.N {
			var s float64
			for l := range g.K {
				var av, bv float64
				if g.TransA {
					av = a[l*lda+i]
				} else {
					av = a[i*lda+l]
				}
				if g.TransB {
					bv = b[j*ldb+l]
				} else {
					bv = b[l*ldb+j]
				}
				s += av * bv
			}
			c[i*ldc+j] = g.Alpha*s + g.Beta*c[i*ldc+j]
		}
	}
}

// testGemm runs the row-major products of every transposition through
// blas (column-major cuBLAS underneath) in float64 and float32 and
// compares them with gemmRef's: float64 to 1e-12 relative, float32 to
// 1e-5 (sums of 7 products of numbers below 1).
func testGemm(t *testing.T, c *Context, blas *BLAS) {
	const m, n, k = 5, 3, 7
	vals := func(size int, seed float64) []float64 {
		v := make([]float64, size)
		for i := range v {
			v[i] = math.Sin(seed + 1.7*float64(i))
		}
		return v
	}
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			g := Gemm{TransA: ta, TransB: tb, M: m, N: n, K: k, Alpha: 1.5, Beta: 0.5}
			a, b, c0 := vals(m*k, 1), vals(k*n, 2), vals(m*n, 3)
			want := append([]float64(nil), c0...)
			gemmRef(g, a, b, want)
			for _, f32 := range []bool{false, true} {
				size := uint64(8)
				if f32 {
					size = 4
				}
				pa, _ := c.Alloc(size * m * k)
				pb, _ := c.Alloc(size * k * n)
				pc, _ := c.Alloc(size * m * n)
				g.A, g.B, g.C = pa, pb, pc
				got := make([]float64, m*n)
				if f32 {
					conv := func(v []float64) []float32 {
						out := make([]float32, len(v))
						for i, x := range v {
							out[i] = float32(x)
						}
						return out
					}
					Upload(c, pa, conv(a))
					Upload(c, pb, conv(b))
					Upload(c, pc, conv(c0))
					if err := blas.Float32(g); err != nil {
						t.Fatal(err)
					}
					out := make([]float32, m*n)
					if err := Download(c, out, pc); err != nil {
						t.Fatal(err)
					}
					for i, v := range out {
						got[i] = float64(v)
					}
				} else {
					Upload(c, pa, a)
					Upload(c, pb, b)
					Upload(c, pc, c0)
					if err := blas.Float64(g); err != nil {
						t.Fatal(err)
					}
					if err := Download(c, got, pc); err != nil {
						t.Fatal(err)
					}
				}
				tol := 1e-12
				if f32 {
					tol = 1e-5
				}
				for i := range got {
					if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
						t.Errorf("transA %v transB %v float32 %v: C[%d] = %v, want %v", ta, tb, f32, i, got[i], want[i])
						break
					}
				}
				c.Free(pa)
				c.Free(pb)
				c.Free(pc)
			}
		}
	}
}

// TestGemmStandIn checks the row-major products through cuBLAS's
// column-major calls on the stand-ins, and that a size over cuBLAS's
// 32-bit arguments is refused.
func TestGemmStandIn(t *testing.T) {
	c := standInContext(t)
	lib, err := openCUBLAS(cudatest.FakeCUBLAS(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	blas, err := lib.NewBLAS(c)
	if err != nil {
		t.Fatal(err)
	}
	defer blas.Close()
	if blas.Version != 130000 {
		t.Errorf("version %d", blas.Version)
	}
	testGemm(t, c, blas)
	if err := blas.Float64(Gemm{M: 1 << 31, N: 1, K: 1}); err == nil || !strings.Contains(err.Error(), "32-bit") {
		t.Errorf("a product of 2³¹ rows: %v", err)
	}
}

// emuSource has kernels of the shapes dstein's use: a 2-D grid over a
// matrix, an atomic histogram, bit casts and a flag.
const emuSource = `
extern "C" __global__ void outer(int m, int n, const REAL *x, const REAL *y, REAL *out) {
	int i = blockIdx.y * blockDim.y + threadIdx.y;
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < m && j < n) out[i * n + j] = x[i] * y[j];
}
extern "C" __global__ void lowbits(int n, const double *x, unsigned *hist, int *flag) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	unsigned long long k = __double_as_longlong(x[i]);
	atomicAdd(&hist[k & 3], 1u);
	if (!isfinite(x[i])) atomicOr(flag, 1);
}
#ifdef DSTEIN_EMULATE
DSTEIN_EXPORT(outer)
DSTEIN_EXPORT(lowbits)
#endif
`

// TestEmulatedKernels runs CUDA C on the host through the emulating NVRTC
// and the stand-in driver: a 2-D grid with partial blocks, a define
// passed as an option, atomics; and a source the compiler refuses fails
// with its log.
func TestEmulatedKernels(t *testing.T) {
	nv, err := openNVRTC(cudatest.EmulatingNVRTC(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	c := standInContext(t)
	ptx, err := nv.Compile(emuSource, "emu.cu", "-DREAL=float", "--gpu-architecture=compute_90")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := c.Load(ptx)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Unload()
	outer, err := mod.Func("outer")
	if err != nil {
		t.Fatal(err)
	}
	const m, n = 5, 7
	x, y := []float32{1, 2, 3, 4, 5}, []float32{1, -1, 2, -2, 3, -3, 0.5}
	px, _ := c.Alloc(4 * m)
	py, _ := c.Alloc(4 * n)
	po, _ := c.Alloc(4 * m * n)
	Upload(c, px, x)
	Upload(c, py, y)
	if err := outer.Launch([3]uint32{2, 3, 1}, [3]uint32{4, 2, 1}, int32(m), int32(n), px, py, po); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, m*n)
	if err := Download(c, out, po); err != nil {
		t.Fatal(err)
	}
	for i := range m {
		for j := range n {
			if out[i*n+j] != x[i]*y[j] {
				t.Fatalf("out[%d][%d] = %v, want %v", i, j, out[i*n+j], x[i]*y[j])
			}
		}
	}
	low, err := mod.Func("lowbits")
	if err != nil {
		t.Fatal(err)
	}
	vals := []float64{math.Float64frombits(4), math.Float64frombits(5), math.Float64frombits(9), math.Float64frombits(7), math.Inf(1)}
	pv, _ := c.Alloc(8 * 5)
	ph, _ := c.Alloc(4 * 4)
	pf, _ := c.Alloc(4)
	Upload(c, pv, vals)
	c.Fill32(ph, 0, 4)
	c.Fill32(pf, 0, 1)
	if err := low.Queue([3]uint32{1, 1, 1}, [3]uint32{8, 1, 1}, int32(5), pv, ph, pf); err != nil {
		t.Fatal(err)
	}
	hist, flag := make([]uint32, 4), make([]int32, 1)
	Download(c, hist, ph)
	Download(c, flag, pf)
	// The low bits: 0, 1, 1, 3 and +Inf's 0.
	if want := []uint32{2, 2, 0, 1}; !equal(hist, want) || flag[0] != 1 {
		t.Errorf("histogram %v flag %d, want %v and 1", hist, flag[0], want)
	}
	if _, err := nv.Compile("extern \"C\" __global__ void bad() { undeclared(); }", "bad.cu"); err == nil || !strings.Contains(err.Error(), "undeclared") {
		t.Errorf("a source that does not compile: %v", err)
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGemmDoesNotAllocate: a GF-SVGD iteration on the GPU makes several
// products, so a product (its arguments handed to the context's thread
// and cuBLAS's status back) allocates nothing once warm, in either
// precision; and a status other than success comes back as an error that
// names the call.
func TestGemmDoesNotAllocate(t *testing.T) {
	c := standInContext(t)
	lib, err := openCUBLAS(cudatest.FakeCUBLAS(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	blas, err := lib.NewBLAS(c)
	if err != nil {
		t.Fatal(err)
	}
	defer blas.Close()
	const m, n, k = 4, 3, 2
	pa, _ := c.Alloc(8 * m * k)
	pb, _ := c.Alloc(8 * k * n)
	pc, _ := c.Alloc(8 * m * n)
	g := Gemm{M: m, N: n, K: k, Alpha: 1, A: pa, B: pb, C: pc}
	for _, f32 := range []bool{false, true} {
		mul := blas.Float64
		if f32 {
			mul = blas.Float32
		}
		if allocs := testing.AllocsPerRun(100, func() {
			if err := mul(g); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("float32 %v: a product allocates %v times", f32, allocs)
		}
	}
	bad := *blas
	bad.h = 0 // the stand-in refuses any other handle with status 1
	if err := bad.Float64(g); err == nil || !strings.Contains(err.Error(), "cublasDgemm failed with cuBLAS status 1") {
		t.Errorf("a product on a bad handle: %v", err)
	}
	if err := bad.Float32(g); err == nil || !strings.Contains(err.Error(), "cublasSgemm failed with cuBLAS status 1") {
		t.Errorf("a float32 product on a bad handle: %v", err)
	}
}
