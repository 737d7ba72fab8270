package svgd

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/rng"
)

// Tolerances of the comparisons with the brute-force reference.
//
// The reference sums every term w_j k_ij (s_jq + (2/h)(x_iq − x_jq)) in
// float64 straight from the coordinate differences. The fast path gets the
// squared distances from the Gram trick and regroups the repulsive term as
// (2/h)(x_iq Σ_j a_ij − Σ_j a_ij x_jq), so the two differ by rounding only:
// a sum of n terms is off by at most about n·2⁻⁵³ ≈ 1e-14 (n ≤ 64 here) of
// the sum of the terms' absolute values, and the Gram trick's cancellation
// perturbs each exponent by about 2⁻⁵³(‖x_i‖² + ‖x_j‖²)/h ≲ 1e-14 for these
// particles. Both are compared against
//
//	scale_iq = Σ_j w_j k_ij (|s_jq| + (2/h)(|x_iq| + |x_jq|)),
//
// the sum of the terms' absolute values, which bounds how far rounding can
// move the sum, with relative tolerance relTol = 1e-10:
// four orders of magnitude above the rounding, while a wrong factor, sign,
// bandwidth or missing term is an error of order scale itself. absTol
// covers terms the kernels skip because their exp underflows (< e⁻⁷⁰⁰).
const (
	relTol = 1e-10
	absTol = 1e-300
	// f32Out is the rounding of a float64 result to float32 (round to
	// nearest: at most 2⁻²⁴ of its magnitude). The float32 instantiation
	// does the same float64 arithmetic on the widened particles and rounds
	// once at the end, so its error bound is f32Out·|want| on top of the
	// float64 one (taken twice, as the rounded value itself carries it).
	f32Out = 0x1p-24
	// f32Abs covers float32 results in the subnormal range (half the
	// smallest subnormal).
	f32Abs = 0x1p-150
)

// refH is the bandwidth of the rule from the brute-force median of the
// squared distances (over the distinct pairs, or over all n² ordered pairs
// with the n zeros when IncludeDiagonal), written from the rules' formulas
// independently of kernel.Bandwidth.FromMedian.
func refH(x []float64, n, d int, bw kernel.Bandwidth) float64 {
	scale := bw.Scale
	if scale == 0 {
		scale = 1
	}
	if bw.Rule == kernel.RuleFixed {
		return scale * bw.H
	}
	var ds []float64
	for i := range n {
		for j := range n {
			if j < i || bw.IncludeDiagonal {
				ds = append(ds, sqDist(x, d, i, j))
			}
		}
	}
	return scale * hFromMedian(median(ds), n, bw.Rule)
}

// refCoordH is the bandwidth of coordinate q under the rule: the median over
// the distinct pairs of (x_iq − x_jq)². The coordinatewise kernel always
// takes the median over distinct pairs: IncludeDiagonal does not apply.
func refCoordH(x []float64, n, d, q int, bw kernel.Bandwidth) float64 {
	scale := bw.Scale
	if scale == 0 {
		scale = 1
	}
	if bw.Rule == kernel.RuleFixed {
		return scale * bw.H
	}
	var ds []float64
	for i := range n {
		for j := range i {
			e := x[i*d+q] - x[j*d+q]
			ds = append(ds, e*e)
		}
	}
	return scale * hFromMedian(median(ds), n, bw.Rule)
}

func hFromMedian(med2 float64, n int, r kernel.Rule) float64 {
	var h float64
	switch r {
	case kernel.RuleMedianSVGD:
		h = med2 / math.Log(float64(n+1))
	case kernel.RuleMedianPaper:
		h = med2 / (2 * math.Log(float64(n+1)))
	case kernel.RuleMedian:
		h = med2
	default:
		panic("unexpected rule")
	}
	if h <= 0 {
		h = 1 // coincident points or n = 1: the documented fallback
	}
	return h
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = append([]float64(nil), v...)
	sort.Float64s(v)
	m := len(v)
	return (v[(m-1)/2] + v[m/2]) / 2
}

func sqDist(x []float64, d, i, j int) float64 {
	var s float64
	for q := range d {
		e := x[i*d+q] - x[j*d+q]
		s += e * e
	}
	return s
}

// reference is the brute-force direction with its driving and repulsive
// parts and the scales of the error bounds.
type reference struct {
	dir, drive, rep     []float64 // n×d
	scale               []float64 // n×d: Σ_j |terms|, the bound's scale
	scaleDrive, scaleRp []float64 // n×d: the same for each part
	h                   float64
	offdiag             float64 // mean k over i ≠ j (RBF)
}

// refRBF is the O(n²d) definition Δx_i = Σ_j w_j [k_ij s_j + (2/h)(x_i −
// x_j) k_ij], summed over every j (zero weights included).
func refRBF(x, s, w []float64, n, d int, bw kernel.Bandwidth) reference {
	h := refH(x, n, d, bw)
	r := newReference(n, d)
	r.h = h
	for i := range n {
		for j := range n {
			k := math.Exp(-sqDist(x, d, i, j) / h)
			if i != j {
				r.offdiag += k / float64(n*(n-1))
			}
			for q := range d {
				xi, xj, sj := x[i*d+q], x[j*d+q], s[j*d+q]
				r.drive[i*d+q] += w[j] * k * sj
				r.rep[i*d+q] += w[j] * (2 / h) * (xi - xj) * k
				r.scaleDrive[i*d+q] += w[j] * k * math.Abs(sj)
				r.scaleRp[i*d+q] += w[j] * k * (2 / h) * (math.Abs(xi) + math.Abs(xj))
			}
		}
	}
	r.finish()
	return r
}

// refCoord is the coordinatewise definition Δx_iq = Σ_j w_j e_ijq [s_jq +
// (2/h_q)(x_iq − x_jq)], e_ijq = exp(−(x_iq − x_jq)²/h_q); its h is the mean
// of the h_q.
func refCoord(x, s, w []float64, n, d int, bw kernel.Bandwidth) reference {
	r := newReference(n, d)
	for q := range d {
		h := refCoordH(x, n, d, q, bw)
		r.h += h / float64(d)
		for i := range n {
			for j := range n {
				xi, xj, sj := x[i*d+q], x[j*d+q], s[j*d+q]
				e := math.Exp(-(xi - xj) * (xi - xj) / h)
				r.drive[i*d+q] += w[j] * e * sj
				r.rep[i*d+q] += w[j] * e * (2 / h) * (xi - xj)
				r.scaleDrive[i*d+q] += w[j] * e * math.Abs(sj)
				r.scaleRp[i*d+q] += w[j] * e * (2 / h) * (math.Abs(xi) + math.Abs(xj))
			}
		}
	}
	r.finish()
	return r
}

func newReference(n, d int) reference {
	m := func() []float64 { return make([]float64, n*d) }
	return reference{dir: m(), drive: m(), rep: m(), scale: m(), scaleDrive: m(), scaleRp: m()}
}

func (r *reference) finish() {
	for k := range r.dir {
		r.dir[k] = r.drive[k] + r.rep[k]
		r.scale[k] = r.scaleDrive[k] + r.scaleRp[k]
	}
}

// repulsion is the brute-force RepulsionRatio and a bound on its error:
// ‖a‖ computed from components each off by at most e_q is off by at most
// ‖e‖, so the ratio ‖rep‖/‖drive‖ is off by at most ratio·(‖e_rep‖/‖rep‖ +
// ‖e_drive‖/‖drive‖) to first order.
func (r *reference) repulsion(n, d int) (mean, bound float64) {
	for i := range n {
		var nd, nr, ed, er float64
		for q := range d {
			k := i*d + q
			nd += r.drive[k] * r.drive[k]
			nr += r.rep[k] * r.rep[k]
			ed += r.scaleDrive[k] * r.scaleDrive[k]
			er += r.scaleRp[k] * r.scaleRp[k]
		}
		if nd == 0 {
			continue
		}
		ratio := math.Sqrt(nr / nd)
		mean += ratio / float64(n)
		rel := relTol * math.Sqrt(ed/nd)
		if nr > 0 {
			rel += relTol * math.Sqrt(er/nr)
		}
		bound += ratio * rel / float64(n)
	}
	return mean, bound + absTol
}

// randomCase draws particles (offset from the origin, so that the Gram
// trick cancels), scores and log weights; every third particle from the
// second on has log weight −Inf, so every case with n ≥ 2 has an inactive
// particle.
func randomCase(seed uint64, n, d int) (x, s, logw []float64) {
	r := rng.NewKey(seed).Rand()
	x, s, logw = make([]float64, n*d), make([]float64, n*d), make([]float64, n)
	for k := range x {
		x[k] = 3 + 1.5*r.NormFloat64()
		s[k] = r.NormFloat64()
	}
	for j := range logw {
		logw[j] = r.NormFloat64()
		if j%3 == 1 {
			logw[j] = math.Inf(-1)
		}
	}
	return x, s, logw
}

func widen[T Float](v []T) []float64 {
	out := make([]float64, len(v))
	for k, e := range v {
		out[k] = float64(e)
	}
	return out
}

func convert[T Float](v []float64) []T {
	out := make([]T, len(v))
	for k, e := range v {
		out[k] = T(e)
	}
	return out
}

// checkAgainst compares dst with the reference within the bounds above
// (out is the relative rounding of the output type, 0 for float64).
func checkAgainst[T Float](t *testing.T, name string, dst []T, ref reference, out, abs float64) {
	t.Helper()
	bound := relTol
	if out > 0 {
		bound = 2 * relTol
	}
	for k, g := range dst {
		got, want := float64(g), ref.dir[k]
		tol := bound*ref.scale[k] + out*math.Abs(want) + abs
		if !(math.Abs(got-want) <= tol) {
			t.Fatalf("%s: Δx[%d] = %.17g; brute force %.17g (|diff| %.3g > %.3g)", name, k, got, want, math.Abs(got-want), tol)
		}
	}
}

var testBandwidths = []kernel.Bandwidth{
	{}, // svgd rule
	{Rule: kernel.RuleMedianPaper, Scale: 2},
	{Rule: kernel.RuleMedian},
	{IncludeDiagonal: true},
	{Rule: kernel.RuleMedian, Scale: 0.5, IncludeDiagonal: true},
	{Rule: kernel.RuleFixed, H: 0.7},
	{Rule: kernel.RuleFixed, H: 40, Scale: 3},
}

var testSizes = [][2]int{{1, 3}, {2, 1}, {2, 4}, {3, 2}, {7, 5}, {9, 1}, {37, 3}, {64, 6}}

// The direction of both kernels against the brute-force definition, for
// several sizes (n = 1 and 2 included, and n ≥ 8 for the blocked product),
// both weightings (with zero weights), and every bandwidth rule, with a
// scale and with the median over all pairs. One workspace per size and
// kernel serves every call, so a call that reads state left by the previous
// one (a different active set) fails. The float32 instantiation is checked
// against the same reference on the widened particles; with the
// coordinatewise kernel it must equal the float64 instantiation's result
// rounded to float32 exactly (the same arithmetic), while the RBF kernel's
// float32 path sums distances directly rather than through the Gram matrix,
// so only the reference bound applies to it.
func TestDirectionMatchesBruteForce(t *testing.T) {
	for _, kind := range []Kernel{RBF, Coordinatewise} {
		for si, sz := range testSizes {
			n, d := sz[0], sz[1]
			x, s, logw := randomCase(uint64(100+si), n, d)
			x32, s32 := convert[float32](x), convert[float32](s)
			xw, sw := widen(x32), widen(s32)
			c64, c32 := New[float64](n, d, kind), New[float32](n, d, kind)
			for _, wk := range []Weighting{SelfNormalized, Rank} {
				w := make([]float64, n)
				Weights(w, logw, wk, 1, nil)
				for _, bw := range testBandwidths {
					name := fmt.Sprintf("%v n=%d d=%d %v %+v", kind, n, d, wk, bw)
					ref := refRef(kind, x, s, w, n, d, bw)
					dst := nanSlice[float64](n * d)
					h := c64.Compute(dst, x, s, w, bw)
					if !(math.Abs(h-ref.h) <= relTol*ref.h) {
						t.Fatalf("%s: h = %v; brute force %v", name, h, ref.h)
					}
					checkAgainst(t, name, dst, ref, 0, absTol)
					// Inactive particles are moved: the direction of a
					// zero-weight particle is not zero (n ≥ 2 has one).
					for j := range n {
						if w[j] == 0 && rowZero(dst[j*d:(j+1)*d]) {
							t.Fatalf("%s: particle %d of weight 0 is not moved", name, j)
						}
					}

					ref32 := refRef(kind, xw, sw, w, n, d, bw)
					d32 := nanSlice[float32](n * d)
					h32 := c32.Compute(d32, x32, s32, w, bw)
					if !(math.Abs(h32-ref32.h) <= relTol*ref32.h) {
						t.Fatalf("%s float32: h = %v; brute force %v", name, h32, ref32.h)
					}
					checkAgainst(t, name+" float32", d32, ref32, f32Out, f32Abs)
					if kind == RBF {
						continue
					}
					dw := make([]float64, n*d)
					if hw := c64.Compute(dw, xw, sw, w, bw); hw != h32 {
						t.Fatalf("%s: float32 h = %v, float64 on the same particles %v", name, h32, hw)
					}
					for k := range d32 {
						if d32[k] != float32(dw[k]) {
							t.Fatalf("%s: float32 Δx[%d] = %v; float64 on the same particles rounds to %v", name, k, d32[k], float32(dw[k]))
						}
					}
				}
			}
		}
	}
}

func refRef(kind Kernel, x, s, w []float64, n, d int, bw kernel.Bandwidth) reference {
	if kind == Coordinatewise {
		return refCoord(x, s, w, n, d, bw)
	}
	return refRBF(x, s, w, n, d, bw)
}

func nanSlice[T Float](m int) []T {
	v := make([]T, m)
	for k := range v {
		v[k] = T(math.NaN())
	}
	return v
}

func rowZero[T Float](v []T) bool {
	for _, e := range v {
		if e != 0 {
			return false
		}
	}
	return true
}

// Closed forms of the smallest cases. One particle: k = 1 and no
// repulsion, so Δx = w s, and the median rules fall back to h = scale.
// Two particles at squared distance D under the svgd rule: h = D/log 3,
// so k = exp(−log 3) = 1/3 and the weight-zero particle 1 moves by
// (1/3)(s_0 + (2 log 3/D)(x_1 − x_0)); particle 0 by its own score
// alone. The coordinatewise kernel gives the same per coordinate with
// D_q = (x_0q − x_1q)². No weight at all gives no direction.
func TestDirectionSmallCases(t *testing.T) {
	for _, kind := range []Kernel{RBF, Coordinatewise} {
		c := New[float64](1, 2, kind)
		dst := nanSlice[float64](2)
		h := c.Compute(dst, []float64{0.3, -2}, []float64{1.5, -0.25}, []float64{1}, kernel.Bandwidth{Scale: 2.5})
		if h != 2.5 || dst[0] != 1.5 || dst[1] != -0.25 {
			t.Errorf("%v n=1: h = %v, Δx = %v; want 2.5 and the score (1.5, -0.25)", kind, h, dst)
		}
		h = c.Compute(dst, []float64{0.3, -2}, []float64{1.5, -0.25}, []float64{0}, kernel.Bandwidth{Rule: kernel.RuleFixed, H: 4})
		if h != 4 || dst[0] != 0 || dst[1] != 0 {
			t.Errorf("%v n=1 weight 0: h = %v, Δx = %v; want 4 and no move", kind, h, dst)
		}

		x := []float64{0, 1, 2, -1} // particles (0, 1) and (2, −1)
		s := []float64{0.5, -1, 3, 7}
		c2 := New[float64](2, 2, kind)
		dst = nanSlice[float64](4)
		h = c2.Compute(dst, x, s, []float64{1, 0}, kernel.Bandwidth{})
		var want []float64
		var wantH float64
		if kind == RBF {
			D := 4.0 + 4.0
			wantH = D / math.Log(3)
			g := 2 * math.Log(3) / D
			want = []float64{0.5, -1, (0.5 + g*(2-0)) / 3, (-1 + g*(-1-1)) / 3}
		} else {
			wantH = 4 / math.Log(3) // both coordinates have D_q = 4
			g := 2 * math.Log(3) / 4
			want = []float64{0.5, -1, (0.5 + g*(2-0)) / 3, (-1 + g*(-1-1)) / 3}
		}
		// A few roundings of numbers of order 1: 1e-14 absolute.
		if !(math.Abs(h-wantH) <= 1e-14) {
			t.Errorf("%v n=2: h = %v; want %v", kind, h, wantH)
		}
		for k := range want {
			if !(math.Abs(dst[k]-want[k]) <= 1e-14) {
				t.Errorf("%v n=2: Δx = %v; want %v", kind, dst, want)
				break
			}
		}
		c2.Compute(dst, x, s, []float64{0, 0}, kernel.Bandwidth{})
		if !rowZero(dst) {
			t.Errorf("%v n=2 without weights: Δx = %v; want zero", kind, dst)
		}
	}
}

// RepulsionRatio and KernelOffDiagonal against brute force, with the error
// bound of reference.repulsion; and the direction under Diagnose is the
// same as without.
func TestDiagnose(t *testing.T) {
	for si, sz := range [][2]int{{1, 3}, {2, 4}, {7, 5}, {37, 3}, {64, 6}} {
		n, d := sz[0], sz[1]
		x, s, logw := randomCase(uint64(200+si), n, d)
		w := make([]float64, n)
		Weights(w, logw, SelfNormalized, 1, nil)
		for _, bw := range []kernel.Bandwidth{{}, {Rule: kernel.RuleMedianPaper}, {Rule: kernel.RuleFixed, H: 2}} {
			name := fmt.Sprintf("n=%d d=%d %+v", n, d, bw)
			ref := refRBF(x, s, w, n, d, bw)
			c := New[float64](n, d, RBF)
			c.Diagnose = true
			dst := nanSlice[float64](n * d)
			c.Compute(dst, x, s, w, bw)
			checkAgainst(t, name+" Diagnose", dst, ref, 0, absTol)
			want, bound := ref.repulsion(n, d)
			if got := c.RepulsionRatio(); !(math.Abs(got-want) <= bound) {
				t.Errorf("%s: RepulsionRatio = %.17g; brute force %.17g (bound %.3g)", name, got, want, bound)
			}
			if n > 1 && !(want > 0) {
				t.Errorf("%s: brute-force repulsion %v: the case checks nothing", name, want)
			}
			// A mean of kernel values each off by about 1e-14 relative.
			if got := c.KernelOffDiagonal(); !(math.Abs(got-ref.offdiag) <= relTol*ref.offdiag+absTol) {
				t.Errorf("%s: KernelOffDiagonal = %.17g; brute force %.17g", name, got, ref.offdiag)
			}
			if n == 1 && c.KernelOffDiagonal() != 0 {
				t.Errorf("n=1: KernelOffDiagonal = %v; want 0", c.KernelOffDiagonal())
			}
		}
	}
}

// After the first call, Compute allocates nothing: both kernels, both
// particle types, with Diagnose.
func TestComputeDoesNotAllocate(t *testing.T) {
	n, d := 50, 8
	x, s, logw := randomCase(300, n, d)
	w := make([]float64, n)
	Weights(w, logw, SelfNormalized, 1, nil)
	for _, kind := range []Kernel{RBF, Coordinatewise} {
		c := New[float64](n, d, kind)
		c.Diagnose = true
		dst := make([]float64, n*d)
		c.Compute(dst, x, s, w, kernel.Bandwidth{})
		if a := testing.AllocsPerRun(20, func() { c.Compute(dst, x, s, w, kernel.Bandwidth{}) }); a != 0 {
			t.Errorf("%v float64: %v allocations per Compute", kind, a)
		}
		c32 := New[float32](n, d, kind)
		x32, s32, d32 := convert[float32](x), convert[float32](s), make([]float32, n*d)
		c32.Compute(d32, x32, s32, w, kernel.Bandwidth{Rule: kernel.RuleMedianPaper})
		if a := testing.AllocsPerRun(20, func() { c32.Compute(d32, x32, s32, w, kernel.Bandwidth{Rule: kernel.RuleMedianPaper}) }); a != 0 {
			t.Errorf("%v float32: %v allocations per Compute", kind, a)
		}
	}
}

// Results are bit-identical on one and two cores (the rows split into
// different chunks; every entry is summed in the same order).
func TestSameBitsAtAnyGOMAXPROCS(t *testing.T) {
	n, d := 300, 16
	x, s, logw := randomCase(400, n, d)
	w := make([]float64, n)
	Weights(w, logw, Rank, 1, nil)
	x32, s32 := convert[float32](x), convert[float32](s)
	type result struct {
		d64      []float64
		d32      []float32
		h, ratio float64
		h32, off float64
	}
	run := func(kind Kernel, procs int) result {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		c := New[float64](n, d, kind)
		c.Diagnose = true
		r := result{d64: make([]float64, n*d), d32: make([]float32, n*d)}
		r.h = c.Compute(r.d64, x, s, w, kernel.Bandwidth{})
		r.ratio, r.off = c.RepulsionRatio(), c.KernelOffDiagonal()
		r.h32 = New[float32](n, d, kind).Compute(r.d32, x32, s32, w, kernel.Bandwidth{})
		return r
	}
	for _, kind := range []Kernel{RBF, Coordinatewise} {
		a := run(kind, 1)
		for _, procs := range []int{2, 16} {
			b := run(kind, procs)
			if a.h != b.h || a.h32 != b.h32 || a.ratio != b.ratio || a.off != b.off {
				t.Errorf("%v: h %v/%v, float32 h %v/%v, repulsion %v/%v, off-diagonal %v/%v at GOMAXPROCS 1/%d", kind, a.h, b.h, a.h32, b.h32, a.ratio, b.ratio, a.off, b.off, procs)
			}
			for k := range a.d64 {
				if math.Float64bits(a.d64[k]) != math.Float64bits(b.d64[k]) || math.Float32bits(a.d32[k]) != math.Float32bits(b.d32[k]) {
					t.Fatalf("%v: Δx[%d] differs at GOMAXPROCS 1 and %d: %v vs %v (float32 %v vs %v)", kind, k, procs, a.d64[k], b.d64[k], a.d32[k], b.d32[k])
				}
			}
		}
	}
}

func TestComputePanicsOnMismatchedLengths(t *testing.T) {
	n, d := 3, 2
	ok := func() [][]float64 {
		return [][]float64{make([]float64, n*d), make([]float64, n*d), make([]float64, n*d), {0.5, 0.5, 0}}
	}
	for bad := range 4 {
		for _, kind := range []Kernel{RBF, Coordinatewise} {
			a := ok()
			a[bad] = a[bad][:len(a[bad])-1]
			func() {
				defer func() {
					r := recover()
					if msg, _ := r.(string); !strings.HasPrefix(msg, "svgd: Compute") {
						t.Errorf("%v: argument %d one short: recovered %v; want the svgd: Compute panic", kind, bad, r)
					}
				}()
				New[float64](n, d, kind).Compute(a[0], a[1], a[2], a[3], kernel.Bandwidth{})
			}()
		}
	}
}

// BenchmarkDirection times Compute with the RBF kernel and the default
// bandwidth: a sampler-sized float64 case, a large one (the n² kernel and
// the n×n·2d product dominate), and a float32 ensemble of a few networks
// with many weights (the n·d conversion and transposition dominate).
func BenchmarkDirection(b *testing.B) {
	bench := func(name string, n, d int, f32 bool) {
		b.Run(name, func(b *testing.B) {
			x, s, logw := randomCase(500, n, d)
			w := make([]float64, n)
			Weights(w, logw, SelfNormalized, 1, nil)
			b.ReportAllocs()
			if f32 {
				c := New[float32](n, d, RBF)
				x32, s32, dst := convert[float32](x), convert[float32](s), make([]float32, n*d)
				c.Compute(dst, x32, s32, w, kernel.Bandwidth{}) // the first call may start the worker pool
				for b.Loop() {
					c.Compute(dst, x32, s32, w, kernel.Bandwidth{})
				}
				return
			}
			c := New[float64](n, d, RBF)
			dst := make([]float64, n*d)
			c.Compute(dst, x, s, w, kernel.Bandwidth{})
			for b.Loop() {
				c.Compute(dst, x, s, w, kernel.Bandwidth{})
			}
		})
	}
	bench("float64/n=100/d=100", 100, 100, false)
	bench("float64/n=1000/d=100", 1000, 100, false)
	bench("float32/n=5/d=100000", 5, 100000, true)
}
