package gof

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/stein"
	"github.com/dstein/dstein/transform"
)

// tableModel is a model given by a full table of log-probabilities, with
// variables of 3, 2 and 4 states, and no optional interfaces: it exercises
// the generic paths.
type tableModel struct {
	k  []int
	lp []float64
}

func newTableModel(r *rand.Rand) *tableModel {
	m := &tableModel{k: []int{3, 2, 4}}
	m.lp = make([]float64, 3*2*4)
	for i := range m.lp {
		m.lp[i] = r.NormFloat64()
	}
	return m
}

func (m *tableModel) Dim() int { return len(m.k) }
func (m *tableModel) States(i int) []float64 {
	s := make([]float64, m.k[i])
	for j := range s {
		s[j] = float64(j)
	}
	return s
}
func (m *tableModel) index(z []int) int { return (z[0]*2+z[1])*4 + z[2] }
func (m *tableModel) LogProb(z []int) float64 {
	return m.lp[m.index(z)]
}

// forEachState calls f for every joint state of m.
func forEachState(m model.Model, f func(z []int)) {
	d := m.Dim()
	z := make([]int, d)
	for {
		f(z)
		l := 0
		for l < d {
			z[l]++
			if z[l] < len(m.States(l)) {
				break
			}
			z[l] = 0
			l++
		}
		if l == d {
			return
		}
	}
}

func hammingKernel(a, b []int) float64 {
	h := 0
	for l := range a {
		if a[l] != b[l] {
			h++
		}
	}
	return math.Exp(-float64(h) / float64(len(a)))
}

func randomSamples(m model.Model, n int, r *rand.Rand) *sampler.Samples {
	s := sampler.NewSamples(n, m.Dim())
	for i := range n {
		for l := range m.Dim() {
			s.Z[i*m.Dim()+l] = r.IntN(len(m.States(l)))
		}
	}
	return s
}

// DKSD's matrix is the Stein kernel at ℓ = d on every pair, for models
// with and without model.Delta, impossible states and single-state
// variables.
func TestDKSDMatrixIsTheSteinKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ism, err := ising.Grid(2, 3, false, 0.4, []float64{0.1, -0.2, 0.3, 0, 0.05, -0.1})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{-1, -0.5, 0, 0.5, 1}, Probs: []float64{0.1, 0.2, 0.3, 0.1, 0.3}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0.25, 0.25}},
	})
	if err != nil {
		t.Fatal(err)
	}
	zeros, err := categorical.New([]categorical.Variable{
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0, 0.5}},
		{States: []float64{7}, Probs: []float64{1}},
		{States: []float64{0, 1, 2, 3}, Probs: []float64{0.1, 0.2, 0.3, 0.4}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]model.Model{"table": newTableModel(r), "ising": ism, "categorical": cat, "zeros": zeros} {
		s := randomSamples(m, 12, r)
		if name == "zeros" {
			for i := range s.N {
				s.Z[i*3] = 2 * (i % 2) // possible states only
			}
		}
		h, err := dksdMatrix(m, s)
		if err != nil {
			t.Fatal(err)
		}
		pts, err := stein.Prepare(m, s.Z, s.N)
		if err != nil {
			t.Fatal(err)
		}
		k, _ := stein.NewKernel(m.Dim(), float64(m.Dim()))
		for i := range s.N {
			for j := range s.N {
				want := k.Eval(pts, i, pts, j) // checked against its definition in package stein
				if got := h[i*s.N+j]; math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("%s: H[%d][%d] = %.15g, the Stein kernel %.15g", name, i, j, got, want)
				}
			}
		}
	}
}

// The Stein identity: Σ_z p(z) κ(z, z') = 0 for every z', by enumeration.
// It holds only if the score, the operator and the closed form agree.
func TestDKSDSteinIdentity(t *testing.T) {
	zeros, err := categorical.New([]categorical.Variable{
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0, 0.5}},
		{States: []float64{7}, Probs: []float64{1}},
		{States: []float64{0, 1, 2, 3}, Probs: []float64{0.1, 0.2, 0.3, 0.4}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := rbm.Random(8, 3, 0.7, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	ism, err := ising.Grid(3, 3, true, 0.4, []float64{0.3, -0.2, 0.1, 0, 0.5, -0.4, 0.2, 0.1, -0.3})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []model.Model{newTableModel(rand.New(rand.NewPCG(3, 4))), zeros, r, ism} {
		steinIdentity(t, m)
	}
}

func steinIdentity(t *testing.T, m model.Model) {
	res, err := exact.Enumerate(m, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	var all [][]int
	forEachState(m, func(z []int) {
		if !math.IsInf(m.LogProb(z), -1) {
			all = append(all, append([]int(nil), z...))
		}
	})
	s := sampler.NewSamples(len(all), m.Dim())
	for i, z := range all {
		copy(s.Row(i), z)
	}
	h, err := dksdMatrix(m, s)
	if err != nil {
		t.Fatal(err)
	}
	for j := range all {
		var e, scale float64
		for i, z := range all {
			p := math.Exp(m.LogProb(z) - res.LogZ)
			e += p * h[i*len(all)+j]
			scale += p * math.Abs(h[i*len(all)+j])
		}
		if math.Abs(e) > 1e-12*scale {
			t.Fatalf("E_p κ(z, z'_%d) = %g (scale %g), want 0", j, e, scale)
		}
	}
}

// bruteGFKSD evaluates w_i κ_ρ(x_i, x_j) w_j with the kernel's derivatives
// taken by central finite differences.
func bruteGFKSD(k func(a, b []float64) float64, xi, xj, si, sj []float64, wi, wj float64) float64 {
	const e = 1e-4
	d := len(xi)
	a := append([]float64(nil), xi...)
	b := append([]float64(nil), xj...)
	kv := k(a, b)
	var ss, t1, t2, tr float64
	for l := range d {
		ss += si[l] * sj[l]
		b[l] += e
		kp := k(a, b)
		b[l] -= 2 * e
		km := k(a, b)
		b[l] += e
		t1 += si[l] * (kp - km) / (2 * e) // s_i·∇_{x_j} k
		a[l] += e
		kp = k(a, b)
		a[l] -= 2 * e
		km = k(a, b)
		a[l] += e
		t2 += sj[l] * (kp - km) / (2 * e) // s_j·∇_{x_i} k
		// ∂²k/∂a_l∂b_l by the four-point stencil.
		var c [4]float64
		for q, sg := range [4][2]float64{{1, 1}, {1, -1}, {-1, 1}, {-1, -1}} {
			a[l] += sg[0] * e
			b[l] += sg[1] * e
			c[q] = k(a, b)
			a[l] -= sg[0] * e
			b[l] -= sg[1] * e
		}
		tr += (c[0] - c[1] - c[2] + c[3]) / (4 * e * e)
	}
	return wi * (ss*kv + t1 + t2 + tr) * wj
}

func TestGFKSDMatchesBruteForce(t *testing.T) {
	ism, err := ising.Grid(2, 2, false, 0.5, []float64{0.2, -0.1, 0, 0.3})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{0, 1, 2}, Probs: []float64{0.2, 0.3, 0.5}},
		{States: []float64{-1, 1}, Probs: []float64{0.4, 0.6}},
		{States: []float64{0, 1, 2, 3}, Probs: []float64{0.1, 0.2, 0.3, 0.4}},
	})
	if err != nil {
		t.Fatal(err)
	}
	gfksdBruteForce(t, ism)
	gfksdBruteForce(t, cat)
}

func gfksdBruteForce(t *testing.T, m model.Model) {
	r := rand.New(rand.NewPCG(5, 6))
	tr, err := transform.ForModel(transform.Normal{}, m)
	if err != nil {
		t.Fatal(err)
	}
	rel, ok := m.(model.Relaxed)
	if !ok {
		t.Fatal("test model without a relaxed form")
	}
	off := model.Offsets(m)
	for _, c := range []struct{ sur, kern string }{{"base", "rbf"}, {"relaxed", "rbf"}, {"base", "soft"}, {"relaxed", "soft"}} {
		surName := c.sur + "/" + c.kern
		sur, err := buildSurrogate(c.sur, m, tr, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		s := randomSamples(m, 7, r)
		x, err := Lift(tr, s, rng.NewKey(9))
		if err != nil {
			t.Fatal(err)
		}
		const h, kernTemp = 1.7, 0.7
		var feat *features
		phi := func(v []float64) []float64 { return v }
		if c.kern == "soft" {
			feat, err = softFeatures(m, tr, x, s.N, kernTemp)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := transform.NewRelaxed(tr, rel, kernTemp)
			if err != nil {
				t.Fatal(err)
			}
			phi = func(v []float64) []float64 {
				out := make([]float64, off[len(v)])
				dm := make([]float64, len(out))
				for l, xl := range v {
					rs.Memberships(out[off[l]:off[l+1]], dm[off[l]:off[l+1]], l, xl)
				}
				return out
			}
		}
		kf := func(a, b []float64) float64 {
			pa, pb := phi(a), phi(b)
			var d2 float64
			for l := range pa {
				d2 += (pa[l] - pb[l]) * (pa[l] - pb[l])
			}
			return math.Exp(-d2 / h)
		}
		g, err := newGFKSDMatrix(m, tr, sur, s, x, kernel.Bandwidth{Rule: kernel.RuleFixed, H: h}, feat)
		if err != nil {
			t.Fatal(err)
		}
		d, n := s.D, s.N
		score := make([]float64, n*d)
		w := make([]float64, n)
		var sw float64
		for i := range n {
			w[i] = math.Exp(sur.LogProbScore(score[i*d:(i+1)*d], x[i*d:(i+1)*d]) - tr.LogBase(x[i*d:(i+1)*d]) - m.LogProb(s.Row(i)))
			sw += w[i]
		}
		for i := range w {
			w[i] *= float64(n) / sw
		}
		for i := range n {
			for j := range n {
				want := bruteGFKSD(kf, x[i*d:(i+1)*d], x[j*d:(j+1)*d], score[i*d:(i+1)*d], score[j*d:(j+1)*d], w[i], w[j])
				// Finite differences with step 1e-4: second derivatives are
				// good to about 1e-6 of the kernel's scale.
				if got := g.h[i*n+j]; math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
					t.Fatalf("%s: H[%d][%d] = %.10g, finite differences %.10g", surName, i, j, got, want)
				}
			}
		}
	}
}

func TestQuadFormsMatchLoops(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n, rows = 13, 5
	h := make([]float64, n*n)
	for i := range n {
		for j := 0; j <= i; j++ {
			v := r.NormFloat64()
			h[i*n+j], h[j*n+i] = v, v
		}
	}
	q := newQuadBatch(h, n)
	for i := range q.v[:rows*n] {
		q.v[i] = r.NormFloat64()
	}
	got := append([]float64(nil), q.eval(rows)...)
	for b := range rows {
		v := q.v[b*n : (b+1)*n]
		var want float64
		for i := range n {
			for j := range n {
				if i != j {
					want += v[i] * h[i*n+j] * v[j]
				}
			}
		}
		if math.Abs(got[b]-want) > 1e-12*(1+math.Abs(want)) {
			t.Fatalf("form %d = %g, loops %g", b, got[b], want)
		}
	}
}

func TestDecide(t *testing.T) {
	boot := []float64{5, 1, 4, 2, 3, 9, 8, 7, 6, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19} // B = 19
	// α(B+1) = 1: reject only when S exceeds every draw.
	for _, c := range []struct {
		stat   float64
		p      float64
		reject bool
	}{{19.5, 0.05, true}, {19, 0.1, false}, {0, 1, false}, {10, 0.55, false}} {
		b := append([]float64(nil), boot...)
		p, crit, rej := decide(c.stat, b, 0.05)
		if math.Abs(p-c.p) > 1e-12 || rej != c.reject || crit != 19 {
			t.Errorf("S = %v: p %v crit %v reject %v, want p %v crit 19 reject %v", c.stat, p, crit, rej, c.p, c.reject)
		}
		if rej != (c.stat > crit) {
			t.Errorf("S = %v: decision %v disagrees with S > crit (%v)", c.stat, rej, crit)
		}
	}
	if _, crit, rej := decide(100, []float64{1, 2, 3}, 0.05); rej || !math.IsInf(crit, 1) {
		t.Errorf("B = 3 at α = 0.05 can never reject; got reject %v crit %v", rej, crit)
	}
}

func bruteMMD2(s, ref *sampler.Samples) float64 {
	avg := func(a, b *sampler.Samples, same bool) float64 {
		var sum float64
		var cnt int
		for i := range a.N {
			for j := range b.N {
				if same && i == j {
					continue
				}
				sum += hammingKernel(a.Row(i), b.Row(j))
				cnt++
			}
		}
		return sum / float64(cnt)
	}
	return avg(s, s, true) + avg(ref, ref, true) - 2*avg(s, ref, false)
}

func TestMMDStatisticMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{0, 1, 2}, Probs: []float64{0.2, 0.3, 0.5}},
		{States: []float64{0, 1}, Probs: []float64{0.5, 0.5}},
		{States: []float64{0, 1, 2, 3}, Probs: []float64{0.25, 0.25, 0.25, 0.25}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ism, err := ising.Grid(3, 3, false, 0.2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []model.Model{cat, ism} {
		s, ref := randomSamples(m, 9, r), randomSamples(m, 14, r)
		res, err := MMD(context.Background(), s, ref, Options{B: 50, Key: rng.NewKey(1)})
		if err != nil {
			t.Fatal(err)
		}
		if want := bruteMMD2(s, ref); math.Abs(res.Statistic-want) > 1e-12 {
			t.Fatalf("MMD² %.15g, brute force %.15g", res.Statistic, want)
		}
	}
}

// testModel4x4 is the 4×4 open grid of the level and power checks.
func testModel4x4(coupling float64) *ising.Ising {
	fields := make([]float64, 16)
	for i := range fields {
		fields[i] = 0.05
	}
	m, err := ising.Grid(4, 4, false, coupling, fields)
	if err != nil {
		panic(err)
	}
	return m
}

func exactSamples(t testing.TB, m model.Model, n int, seed uint64) *sampler.Samples {
	truth, err := exact.For(m)
	if err != nil {
		t.Fatal(err)
	}
	s := sampler.NewSamples(n, m.Dim())
	truth.Sample(s.Z, rng.NewKey(seed).For(rng.Sample).Rand())
	return s
}

type testFunc func(s *sampler.Samples, seed uint64) (*Result, error)

func testsFor(m model.Model, nRef int, b int) map[string]testFunc {
	ctx := context.Background()
	return map[string]testFunc{
		"gfksd": func(s *sampler.Samples, seed uint64) (*Result, error) {
			return GFKSD(ctx, m, s, GFKSDSettings{}, Options{B: b, Key: rng.NewKey(seed)})
		},
		"gfksd-rademacher": func(s *sampler.Samples, seed uint64) (*Result, error) {
			return GFKSD(ctx, m, s, GFKSDSettings{}, Options{B: b, Key: rng.NewKey(seed), Bootstrap: Rademacher})
		},
		"dksd": func(s *sampler.Samples, seed uint64) (*Result, error) {
			return DKSD(ctx, m, s, Options{B: b, Key: rng.NewKey(seed)})
		},
		"bksd": func(s *sampler.Samples, seed uint64) (*Result, error) {
			return BKSD(ctx, m, s, Options{B: b, Key: rng.NewKey(seed)})
		},
		"mmd": func(s *sampler.Samples, seed uint64) (*Result, error) {
			ref, _, err := Reference(ctx, m, nRef, 0, rng.NewKey(seed))
			if err != nil {
				return nil, err
			}
			return MMD(ctx, s, ref, Options{B: b, Key: rng.NewKey(seed)})
		},
	}
}

// Under the null (exact samples from the model itself) each test rejects at
// rate α = 0.05 within 3 standard errors, sqrt(α(1−α)/T), over T trials, and
// its p-values pass a Kolmogorov–Smirnov check of uniformity at level 0.01
// (critical distance 1.63/√T; the p-values live on the grid k/(B+1), which
// only makes the check conservative).
func TestLevelUnderNull(t *testing.T) {
	const trials, n, b, alpha = 500, 200, 200, 0.05
	m := testModel4x4(0.3)
	se := math.Sqrt(alpha * (1 - alpha) / trials)
	for name, test := range testsFor(m, n, b) {
		var rej int
		ps := make([]float64, trials)
		for tr := range trials {
			s := exactSamples(t, m, n, uint64(1000+tr))
			res, err := test(s, uint64(tr))
			if err != nil {
				t.Fatal(err)
			}
			ps[tr] = res.PValue
			if res.Reject {
				rej++
			}
		}
		rate := float64(rej) / trials
		if math.Abs(rate-alpha) > 3*se {
			t.Errorf("%s: rejection rate under the null %.3f, want %.2f ± %.3f", name, rate, alpha, 3*se)
		}
		if ks := ksUniform(ps); ks > 1.63/math.Sqrt(trials) {
			t.Errorf("%s: p-values are not uniform: KS distance %.3f > %.3f", name, ks, 1.63/math.Sqrt(trials))
		}
		t.Logf("%s: rejection rate %.3f, KS distance %.3f", name, rate, ksUniform(ps))
	}
}

// ksUniform is the Kolmogorov–Smirnov distance of the p-values from U(0, 1).
func ksUniform(p []float64) float64 {
	q := append([]float64(nil), p...)
	sort.Float64s(q)
	n := float64(len(q))
	var d float64
	for i, v := range q {
		d = max(d, float64(i+1)/n-v, v-float64(i)/n)
	}
	return d
}

// The power check: model coupling 0.1, samples drawn exactly with
// coupling 0.5, fields 0.05, n = 1000: each test rejects in at least 19 of
// 20 trials.
func TestPowerIsingCoupling(t *testing.T) {
	if testing.Short() {
		t.Skip("power check takes seconds")
	}
	const trials, n, b = 20, 1000, 200
	m, alt := testModel4x4(0.1), testModel4x4(0.5)
	for name, test := range testsFor(m, n, b) {
		rej := 0
		for tr := range trials {
			res, err := test(exactSamples(t, alt, n, uint64(5000+tr)), uint64(tr))
			if err != nil {
				t.Fatal(err)
			}
			if res.Reject {
				rej++
			}
		}
		t.Logf("%s rejects in %d of %d trials", name, rej, trials)
		if rej < 19 {
			t.Errorf("%s rejects in %d of %d trials, want at least 19", name, rej, trials)
		}
	}
}

// shifted adds a constant to log p* and keeps every other method.
type shifted struct {
	*ising.Ising
	c float64
}

func (s shifted) LogProb(z []int) float64 { return s.Ising.LogProb(z) + s.c }

// plainShifted hides every optional interface, so that DKSD's score comes
// from differences of the shifted LogProb.
type plainShifted struct {
	m model.Model
	c float64
}

func (s plainShifted) Dim() int                { return s.m.Dim() }
func (s plainShifted) States(i int) []float64  { return s.m.States(i) }
func (s plainShifted) LogProb(z []int) float64 { return s.m.LogProb(z) + s.c }

func TestNormaliserInvariance(t *testing.T) {
	m := testModel4x4(0.3)
	alt := testModel4x4(0.45)
	ctx := context.Background()
	for k, s := range []*sampler.Samples{exactSamples(t, m, 200, 1), exactSamples(t, alt, 200, 2)} {
		a0, err := GFKSD(ctx, m, s, GFKSDSettings{}, Options{B: 300, Key: rng.NewKey(3)})
		if err != nil {
			t.Fatal(err)
		}
		d0, err := DKSD(ctx, m, s, Options{B: 300, Key: rng.NewKey(3)})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []float64{1234.5, -87.25} {
			a := a0
			b, err := GFKSD(ctx, shifted{m, c}, s, GFKSDSettings{}, Options{B: 300, Key: rng.NewKey(3)})
			if err != nil {
				t.Fatal(err)
			}
			if a.PValue != b.PValue || a.Reject != b.Reject {
				t.Errorf("sample %d: GF-KSD p-value %v → %v after shifting log p*", k, a.PValue, b.PValue)
			}
			a = d0
			b, err = DKSD(ctx, plainShifted{m, c}, s, Options{B: 300, Key: rng.NewKey(3)})
			if err != nil {
				t.Fatal(err)
			}
			if a.PValue != b.PValue || a.Reject != b.Reject {
				t.Errorf("sample %d: DKSD p-value %v → %v after shifting log p*", k, a.PValue, b.PValue)
			}
		}
	}
}

func TestImpossibleSamplesReject(t *testing.T) {
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0, 0.5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := sampler.NewSamples(4, 1)
	copy(s.Z, []int{0, 2, 1, 0})
	for _, f := range []func() (*Result, error){
		func() (*Result, error) { return GFKSD(context.Background(), cat, s, GFKSDSettings{}, Options{}) },
		func() (*Result, error) { return DKSD(context.Background(), cat, s, Options{}) },
		func() (*Result, error) { return BKSD(context.Background(), cat, s, Options{}) },
		func() (*Result, error) { return MMDForModel(context.Background(), cat, s, 0, Options{}) },
	} {
		res, err := f()
		if err != nil {
			t.Fatal(err)
		}
		if !res.Reject || res.PValue != 0 || res.Impossible != 1 {
			t.Errorf("%s: %+v, want an outright rejection for one impossible sample", res.Test, res)
		}
	}
}

func TestBadInput(t *testing.T) {
	m := testModel4x4(0.1)
	ctx := context.Background()
	wrongWidth := sampler.NewSamples(5, 3)
	if _, err := DKSD(ctx, m, wrongWidth, Options{}); err == nil {
		t.Error("DKSD accepted samples of the wrong width")
	}
	bad := sampler.NewSamples(5, 16)
	bad.Z[7] = 2
	if _, err := GFKSD(ctx, m, bad, GFKSDSettings{}, Options{}); err == nil {
		t.Error("GF-KSD accepted a state index out of range")
	}
	one := sampler.NewSamples(1, 16)
	if _, err := GFKSD(ctx, m, one, GFKSDSettings{}, Options{}); err == nil {
		t.Error("GF-KSD accepted a single sample")
	}
	if _, err := DKSD(ctx, m, exactSamples(t, m, 10, 1), Options{Alpha: 1.5}); err == nil {
		t.Error("DKSD accepted α = 1.5")
	}
}

func TestLiftStaysInBins(t *testing.T) {
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{-1, -0.5, 0, 0.5, 1}, Probs: []float64{0.1, 0.2, 0.3, 0.1, 0.3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := transform.ForModel(transform.Normal{}, cat)
	if err != nil {
		t.Fatal(err)
	}
	s := sampler.NewSamples(5000, 1)
	for i := range s.Z {
		s.Z[i] = i % 5
	}
	x, err := Lift(tr, s, rng.NewKey(1))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) || tr.State(0, v) != s.Z[i] {
			t.Fatalf("x = %v for state %d", v, s.Z[i])
		}
	}
}
