package optim

import (
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/rng"
)

// refAdam is Adam written out by hand for one value in float64: the
// moments decay and take in g, and x moves by lr·(m/c1)/(√(v/c2) + ε).
// Each expression has the shape of Update's, so that the float64 results
// are equal bit for bit (the same operations in the same order; Go may fuse
// a·b + c only where it does so for both). round is applied to the stored
// moments and position: the identity for float64, rounding to float32 to
// emulate Adam[float32], which keeps M, V and x in float32 and computes in
// float64 in between.
type refAdam struct {
	b1, b2, eps float64
	m, v, x     float64
	round       func(float64) float64
}

func (r *refAdam) step(g, lr, c1, c2 float64) float64 {
	r.m = r.round(r.b1*r.m + (1-r.b1)*g)
	r.v = r.round(r.b2*r.v + (1-r.b2)*g*g)
	step := lr * (r.m / c1) / (math.Sqrt(r.v/c2) + r.eps)
	r.x = r.round(r.x + step)
	return step
}

func identity(v float64) float64  { return v }
func toFloat32(v float64) float64 { return float64(float32(v)) }

// Six steps of Adam[float64] on five values against the hand-written
// reference, exactly: positions, moments and the returned Σ|step|, with
// gradients of both signs, non-default betas and ε, and one step on a
// sub-range [1, 4) that must leave the other values alone.
func TestAdamFloat64MatchesReference(t *testing.T) {
	const size, steps, lr = 5, 6, 0.05
	r := rng.NewKey(21).Rand()
	a := NewAdam[float64](size, 0.8, 0.99, 1e-6)
	x := make([]float64, size)
	refs := make([]refAdam, size)
	for k := range x {
		x[k] = r.NormFloat64()
		refs[k] = refAdam{b1: 0.8, b2: 0.99, eps: 1e-6, x: x[k], round: identity}
	}
	g := make([]float64, size)
	for s := 1; s <= steps; s++ {
		for k := range g {
			g[k] = 2 * r.NormFloat64()
		}
		lo, hi := 0, size
		if s == 4 {
			lo, hi = 1, 4
		}
		c1, c2 := a.Corrections(s)
		tot := a.Update(x, g, lo, hi, lr, c1, c2)
		var want float64
		for k := lo; k < hi; k++ {
			want += math.Abs(refs[k].step(g[k], lr, c1, c2))
		}
		if tot != want {
			t.Errorf("step %d: Update returned Σ|step| = %v; reference %v", s, tot, want)
		}
		for k := range x {
			if x[k] != refs[k].x || a.M[k] != refs[k].m || a.V[k] != refs[k].v {
				t.Fatalf("step %d value %d: x, m, v = %v, %v, %v; reference %v, %v, %v", s, k, x[k], a.M[k], a.V[k], refs[k].x, refs[k].m, refs[k].v)
			}
		}
	}
}

// Adam[float32] equals the float64 reference with its stored moments and
// positions rounded to float32 exactly (the documented arithmetic), and is
// close to the plain float64 reference. The bound of the latter: each step
// rounds m, v and x once, each by at most 2⁻²⁴ relative. With gradients in
// [0.5, 1.5] (one sign, so that m does not cancel) the rounding errors of
// m and v stay within t·2⁻²⁴·κ of their values after t steps, κ = 3 the
// ratio of the largest to the smallest gradient; the step, m̂/√v̂, is then
// off by at most (1 + ½)·t·κ·2⁻²⁴ relative, and x by the sum of those plus
// its own roundings, t·2⁻²⁴·max|x|.
func TestAdamFloat32(t *testing.T) {
	const size, steps, lr = 32, 8, 0.01
	r := rng.NewKey(22).Rand()
	a := NewAdam[float32](size, 0, 0, 0)
	x := make([]float32, size)
	em, ref := make([]refAdam, size), make([]refAdam, size)
	for k := range x {
		x[k] = float32(1e-3 * r.NormFloat64()) // near 0, where float32 resolves a step's rounding
		em[k] = refAdam{b1: DefaultBeta1, b2: DefaultBeta2, eps: DefaultEpsilon, x: float64(x[k]), round: toFloat32}
		ref[k] = em[k]
		ref[k].round = identity
	}
	g := make([]float32, size)
	sumStep := make([]float64, size)
	maxX := make([]float64, size)
	var worst float64
	for s := 1; s <= steps; s++ {
		for k := range g {
			g[k] = float32(0.5 + r.Float64())
		}
		c1, c2 := a.Corrections(s)
		a.Update(x, g, 0, size, lr, c1, c2)
		for k := range x {
			em[k].step(float64(g[k]), lr, c1, c2)
			sumStep[k] += math.Abs(ref[k].step(float64(g[k]), lr, c1, c2))
			maxX[k] = max(maxX[k], math.Abs(ref[k].x))
			if float64(x[k]) != em[k].x || float64(a.M[k]) != em[k].m || float64(a.V[k]) != em[k].v {
				t.Fatalf("step %d value %d: x, m, v = %v, %v, %v; float32-rounded reference %v, %v, %v", s, k, x[k], a.M[k], a.V[k], em[k].x, em[k].m, em[k].v)
			}
			const kappa, u = 3, 0x1p-24
			bound := float64(s) * u * (maxX[k] + 1.5*kappa*sumStep[k])
			diff := math.Abs(float64(x[k]) - ref[k].x)
			if !(diff <= bound) {
				t.Fatalf("step %d value %d: float32 x = %v; float64 reference %v (|diff| %.3g > %.3g)", s, k, x[k], ref[k].x, diff, bound)
			}
			worst = max(worst, diff/bound)
		}
	}
	t.Logf("largest float32 error: %.2g of the bound", worst)
}

// Corrections against 1 − βᵗ from repeated multiplication, whose t
// roundings put it within t·2⁻⁵³ of βᵗ: 1e-13 absolute covers t ≤ 200.
// Step 1 gives exactly 1 − β, and far-off steps 1.
func TestCorrections(t *testing.T) {
	a := NewAdam[float64](1, 0, 0, 0)
	p1, p2 := 1.0, 1.0
	for s := 1; s <= 200; s++ {
		p1 *= DefaultBeta1
		p2 *= DefaultBeta2
		c1, c2 := a.Corrections(s)
		if !(math.Abs(c1-(1-p1)) <= 1e-13 && math.Abs(c2-(1-p2)) <= 1e-13) {
			t.Fatalf("Corrections(%d) = %v, %v; want %v, %v", s, c1, c2, 1-p1, 1-p2)
		}
	}
	b1, b2 := a.Beta1, a.Beta2 // variables: 1 − β rounded as at run time
	if c1, c2 := a.Corrections(1); c1 != 1-b1 || c2 != 1-b2 {
		t.Errorf("Corrections(1) = %v, %v; want 1 − β", c1, c2)
	}
	if c1, _ := a.Corrections(100000); c1 != 1 {
		t.Errorf("Corrections(100000) = %v; want 1", c1)
	}
}

// Reset clears the first moment of [lo, hi) only; the second moment stays.
func TestReset(t *testing.T) {
	a := NewAdam[float32](5, 0, 0, 0)
	x := make([]float32, 5)
	a.Update(x, []float32{1, -2, 3, -4, 5}, 0, 5, 0.1, 0.1, 0.001)
	v := append([]float32(nil), a.V...)
	m := append([]float32(nil), a.M...)
	a.Reset(1, 3)
	for k := range a.M {
		want := m[k]
		if k == 1 || k == 2 {
			want = 0
		}
		if a.M[k] != want || a.V[k] != v[k] {
			t.Fatalf("after Reset(1, 3): M = %v, V = %v; from M = %v, V = %v", a.M, a.V, m, v)
		}
	}
	if m[1] == 0 || m[2] == 0 {
		t.Fatal("the moments to reset were zero: the test checks nothing")
	}
}

func TestNewAdamDefaults(t *testing.T) {
	a := NewAdam[float64](7, 0, 0, 0)
	if a.Beta1 != 0.9 || a.Beta2 != 0.999 || a.Eps != 1e-8 {
		t.Errorf("defaults β1, β2, ε = %v, %v, %v; want 0.9, 0.999, 1e-8", a.Beta1, a.Beta2, a.Eps)
	}
	if len(a.M) != 7 || len(a.V) != 7 {
		t.Errorf("moments of length %d and %d for 7 values", len(a.M), len(a.V))
	}
	for k := range a.M {
		if a.M[k] != 0 || a.V[k] != 0 {
			t.Fatalf("moments start at %v, %v; want zero", a.M, a.V)
		}
	}
	b := NewAdam[float32](2, 0.5, 0.75, 1e-4)
	if b.Beta1 != 0.5 || b.Beta2 != 0.75 || b.Eps != 1e-4 {
		t.Errorf("given β1, β2, ε became %v, %v, %v", b.Beta1, b.Beta2, b.Eps)
	}
}

func TestValidate(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, ok := range [][3]float64{{0.9, 0.999, 1e-8}, {0, 0, 0}, {0.5, 0.9999999, 1}} {
		if err := Validate(ok[0], ok[1], ok[2]); err != nil {
			t.Errorf("Validate%v: %v", ok, err)
		}
	}
	for _, bad := range []float64{-0.1, 1, 1.5, nan, inf, -inf} {
		if err := Validate(bad, 0.999, 1e-8); err == nil || !strings.Contains(err.Error(), "betas") {
			t.Errorf("β1 = %v: error %v", bad, err)
		}
		if err := Validate(0.9, bad, 1e-8); err == nil || !strings.Contains(err.Error(), "betas") {
			t.Errorf("β2 = %v: error %v", bad, err)
		}
	}
	for _, bad := range []float64{-1e-8, nan, inf} {
		if err := Validate(0.9, 0.999, bad); err == nil || !strings.Contains(err.Error(), "epsilon") {
			t.Errorf("ε = %v: error %v", bad, err)
		}
	}
}

// Adam ascends the concave quadratic f(x) = −½ Σ a_q (x_q − c_q)², whose
// gradient is −a(x − c), from x = 0 to its maximum c, for curvatures four
// orders of magnitude apart (Adam's steps do not depend on them). Steps
// are at most about lr, so x reaches c (at most 3 away) within a few
// hundred steps of lr = 0.01; then the oscillations decay, as the second
// moment remembers the larger gradients of the approach. After 4000 steps
// both versions are within 2e-6 of c (float32's spacing near 3 is 2.4e-7);
// the test asks for lr/10 = 1e-3. A step along the wrong sign, or a wrong
// bias correction or normalisation, ends far from c or diverges.
func TestAdamAscendsConcaveQuadratic(t *testing.T) {
	c := []float64{2, -1, 0.5, 3}
	curv := []float64{1, 10, 0.01, 100}
	const lr, steps = 1e-2, 4000
	check := func(name string, x func(q int) float64) {
		for q := range c {
			if !(math.Abs(x(q)-c[q]) <= lr/10) {
				t.Errorf("%s: x[%d] = %v after %d steps; the maximum is at %v", name, q, x(q), steps, c[q])
			}
		}
	}
	a := NewAdam[float64](len(c), 0, 0, 0)
	x, g := make([]float64, len(c)), make([]float64, len(c))
	b := NewAdam[float32](len(c), 0, 0, 0)
	x32, g32 := make([]float32, len(c)), make([]float32, len(c))
	for s := 1; s <= steps; s++ {
		for q := range c {
			g[q] = -curv[q] * (x[q] - c[q])
			g32[q] = float32(-curv[q] * (float64(x32[q]) - c[q]))
		}
		c1, c2 := a.Corrections(s)
		a.Update(x, g, 0, len(c), lr, c1, c2)
		b.Update(x32, g32, 0, len(c), lr, c1, c2)
	}
	check("float64", func(q int) float64 { return x[q] })
	check("float32", func(q int) float64 { return float64(x32[q]) })
}
