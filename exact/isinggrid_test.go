package exact

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
)

// randomGridModel returns the open rows×cols grid's edges with couplings and
// fields drawn uniformly from [−scale, scale].
func randomGridModel(rows, cols int, scale float64, r *rand.Rand) ([]ising.Edge, []float64) {
	edges := ising.GridEdges(rows, cols, false, 0)
	for k := range edges {
		edges[k].Coupling = scale * (2*r.Float64() - 1)
	}
	fields := make([]float64, rows*cols)
	for i := range fields {
		fields[i] = scale * (2*r.Float64() - 1)
	}
	return edges, fields
}

// The transfer sums the same terms as enumeration in another order; with at
// most 2^16 terms of similar size the two agree to ~1e-13, so 1e-9 leaves
// ample room while catching any wrong factor.
const gridTol = 1e-9

func compareResults(t *testing.T, name string, got, want *Result, tol float64) {
	t.Helper()
	if math.Abs(got.LogZ-want.LogZ) > tol {
		t.Errorf("%s: log Z = %.15g, enumeration %.15g", name, got.LogZ, want.LogZ)
	}
	for i := range want.Marginals {
		for s := range want.Marginals[i] {
			if math.Abs(got.Marginals[i][s]-want.Marginals[i][s]) > tol {
				t.Errorf("%s: P(z_%d = %d) = %.15g, enumeration %.15g", name, i, s, got.Marginals[i][s], want.Marginals[i][s])
			}
		}
		if math.Abs(got.Means[i]-want.Means[i]) > tol {
			t.Errorf("%s: E[z_%d] = %.15g, enumeration %.15g", name, i, got.Means[i], want.Means[i])
		}
	}
}

var gridShapes = [][2]int{{1, 1}, {1, 5}, {5, 1}, {2, 3}, {3, 2}, {3, 4}, {4, 3}, {4, 4}, {2, 7}, {7, 2}, {2, 2}}

func TestIsingGridMatchesEnumerateNonUniform(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sh := range gridShapes {
		rows, cols := sh[0], sh[1]
		name := fmt.Sprintf("%dx%d", rows, cols)
		edges, fields := randomGridModel(rows, cols, 1, r)
		m, err := ising.New(rows*cols, edges, fields)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Enumerate(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		g, err := newIsingGrid(rows, cols, edges, fields)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		compareResults(t, name, g.Result(), want, gridTol)
		// Edges may come in any order and orientation.
		rev := slices.Clone(edges)
		slices.Reverse(rev)
		for k := range rev {
			rev[k].I, rev[k].J = rev[k].J, rev[k].I
		}
		g2, err := newIsingGrid(rows, cols, rev, fields)
		if err != nil {
			t.Fatalf("%s reversed: %v", name, err)
		}
		compareResults(t, name+" reversed edges", g2.Result(), want, gridTol)
	}
}

func TestIsingGridMatchesEnumerateUniform(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sh := range gridShapes {
		rows, cols := sh[0], sh[1]
		name := fmt.Sprintf("%dx%d", rows, cols)
		coupling := 2*r.Float64() - 1
		fields := make([]float64, rows*cols)
		for i := range fields {
			fields[i] = 2*r.Float64() - 1
		}
		m, err := ising.Grid(rows, cols, false, coupling, fields)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Enumerate(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewIsingGrid(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		compareResults(t, name, g.Result(), want, gridTol)
	}
}

// An open chain without fields has Z = 2·Π 2cosh(J_k), whichever way the
// chain lies.
func TestIsingGridChainClosedForm(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, sh := range [][2]int{{1, 14}, {14, 1}, {1, 200}} {
		edges, _ := randomGridModel(sh[0], sh[1], 2, r)
		want := math.Log(2)
		for _, e := range edges {
			want += math.Log(2 * math.Cosh(e.Coupling))
		}
		g, err := newIsingGrid(sh[0], sh[1], edges, nil)
		if err != nil {
			t.Fatal(err)
		}
		res := g.Result()
		if math.Abs(res.LogZ-want) > gridTol*math.Abs(want) {
			t.Errorf("%dx%d chain: log Z = %.15g, closed form %.15g", sh[0], sh[1], res.LogZ, want)
		}
		for i, mu := range res.Means {
			// No fields: every spin is ±1 with probability 1/2.
			if math.Abs(mu) > 1e-12 {
				t.Errorf("%dx%d chain: E[z_%d] = %g, want 0", sh[0], sh[1], i, mu)
			}
		}
	}
}

// enumeratePairs returns E[z_i z_j] for every edge, by brute force.
func enumeratePairs(m *ising.Ising, logZ float64) []float64 {
	d := m.Dim()
	edges := m.Edges()
	out := make([]float64, len(edges))
	z := make([]int, d)
	for idx := range 1 << d {
		for i := range d {
			z[i] = idx >> (d - 1 - i) & 1
		}
		p := math.Exp(m.LogProb(z) - logZ)
		for k, e := range edges {
			out[k] += p * model.Spin(z[e.I]) * model.Spin(z[e.J])
		}
	}
	return out
}

// Sample frequencies against the exact answers. Each check allows 4
// standard errors of an n-sample mean (P(|N(0,1)| > 4) ≈ 6e-5, so about
// 3e-3 over all checks of this test for a correct sampler); the seed is fixed,
// so the outcome is reproducible.
func TestIsingGridSampleFrequencies(t *testing.T) {
	const rows, cols, n = 3, 4, 20000
	const d = rows * cols
	r := rand.New(rand.NewPCG(7, 8))
	edges, fields := randomGridModel(rows, cols, 1, r)
	m, err := ising.New(d, edges, fields)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Enumerate(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	pairs := enumeratePairs(m, want.LogZ)
	g, err := newIsingGrid(rows, cols, edges, fields)
	if err != nil {
		t.Fatal(err)
	}
	samples := make([]int, n*d)
	g.Sample(samples, rand.New(rand.NewPCG(9, 10)))

	for i := range d {
		var c float64
		for o := 0; o < len(samples); o += d {
			c += float64(samples[o+i])
		}
		p := want.Marginals[i][1]
		se := math.Sqrt(p * (1 - p) / n)
		if f := c / n; math.Abs(f-p) > 4*se {
			t.Errorf("P(z_%d = +1): sample frequency %.4f, exact %.4f (4 se = %.4f)", i, f, p, 4*se)
		}
	}
	for k, e := range edges {
		var c float64
		for o := 0; o < len(samples); o += d {
			c += model.Spin(samples[o+e.I]) * model.Spin(samples[o+e.J])
		}
		mu := pairs[k]
		se := math.Sqrt((1 - mu*mu) / n) // z_i z_j = ±1
		if f := c / n; math.Abs(f-mu) > 4*se {
			t.Errorf("E[z_%d z_%d]: sample mean %.4f, exact %.4f (4 se = %.4f)", e.I, e.J, f, mu, 4*se)
		}
	}
}

// The whole joint distribution of a 2×3 grid (64 states), also through the
// transposed sweep: each state's frequency within 4 standard errors (see
// TestIsingGridSampleFrequencies; 128 checks, ≈ 8e-3 for a correct sampler).
func TestIsingGridSampleJoint(t *testing.T) {
	const n = 20000
	r := rand.New(rand.NewPCG(11, 12))
	for _, sh := range [][2]int{{2, 3}, {3, 2}} {
		rows, cols := sh[0], sh[1]
		d := rows * cols
		edges, fields := randomGridModel(rows, cols, 1, r)
		m, err := ising.New(d, edges, fields)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Enumerate(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		g, err := newIsingGrid(rows, cols, edges, fields)
		if err != nil {
			t.Fatal(err)
		}
		samples := make([]int, n*d)
		g.Sample(samples, rand.New(rand.NewPCG(13, uint64(rows))))
		counts := make([]float64, 1<<d)
		for o := 0; o < len(samples); o += d {
			idx := 0
			for i := range d {
				idx = idx<<1 | samples[o+i]
			}
			counts[idx]++
		}
		z := make([]int, d)
		for idx := range counts {
			for i := range d {
				z[i] = idx >> (d - 1 - i) & 1
			}
			p := math.Exp(m.LogProb(z) - want.LogZ)
			se := math.Sqrt(p * (1 - p) / n)
			if f := counts[idx] / n; math.Abs(f-p) > 4*se {
				t.Errorf("%dx%d: P(z = %v): frequency %.5f, exact %.5f (4 se = %.5f)", rows, cols, z, f, p, 4*se)
			}
		}
	}
}

func TestIsingGridSampleDeterministic(t *testing.T) {
	m, err := ising.Grid(5, 7, false, 0.4, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewIsingGrid(m)
	if err != nil {
		t.Fatal(err)
	}
	d := m.Dim()
	a := make([]int, 6*d)
	g.Sample(a, rand.New(rand.NewPCG(1, 1)))
	// The same stream in two calls gives the same samples.
	b := make([]int, 6*d)
	r := rand.New(rand.NewPCG(1, 1))
	g.Sample(b[:2*d], r)
	g.Sample(b[2*d:], r)
	if !slices.Equal(a, b) {
		t.Error("samples depend on how the buffer is split")
	}
	for _, s := range a {
		if s != 0 && s != 1 {
			t.Fatalf("sample holds state %d", s)
		}
	}
	g.Sample(nil, r) // no samples, no panic
	defer func() {
		if recover() == nil {
			t.Error("Sample accepted a buffer whose length is not a multiple of d")
		}
	}()
	g.Sample(make([]int, d+1), r)
}

func TestIsingGridErrors(t *testing.T) {
	periodic, _ := ising.Grid(4, 4, true, 0.3, nil)
	chain, _ := ising.New(3, []ising.Edge{{I: 0, J: 1, Coupling: 0.5}, {I: 1, J: 2, Coupling: 0.5}}, nil)
	wide, _ := ising.Grid(15, 16, false, 0.1, nil)
	for _, c := range []struct {
		name string
		m    *ising.Ising
		want string
	}{
		{"nil", nil, "nil"},
		{"periodic", periodic, "periodic"},
		{"not a grid", chain, "ising.Grid"},
		{"side 15", wide, "at most 14"},
	} {
		if _, err := NewIsingGrid(c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	// A long grid with a short side is fine.
	long, _ := ising.Grid(3, 40, false, 0.2, nil)
	if _, err := NewIsingGrid(long); err != nil {
		t.Errorf("3×40: %v", err)
	}

	e := func(i, j int) ising.Edge { return ising.Edge{I: i, J: j, Coupling: 0.5} }
	for _, c := range []struct {
		name       string
		rows, cols int
		edges      []ising.Edge
		want       string
	}{
		{"diagonal", 2, 2, []ising.Edge{e(0, 3)}, "not neighbours"},
		{"row wrap", 2, 3, []ising.Edge{e(2, 3)}, "not neighbours"},
		{"periodic bond", 1, 4, []ising.Edge{e(0, 3)}, "not neighbours"},
		{"duplicate", 2, 2, []ising.Edge{e(0, 1), e(1, 0)}, "more than one edge"},
		{"outside", 2, 2, []ising.Edge{e(0, 4)}, "outside"},
		{"too strong", 2, 2, []ising.Edge{{I: 0, J: 1, Coupling: 400}}, "too strong"},
		{"empty", 0, 3, nil, "at least one row"},
	} {
		if _, err := newIsingGrid(c.rows, c.cols, c.edges, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

func TestIsingGridTenByTen(t *testing.T) {
	fields := make([]float64, 100)
	r := rand.New(rand.NewPCG(14, 15))
	for i := range fields {
		fields[i] = 0.3 * (2*r.Float64() - 1)
	}
	m, err := ising.Grid(10, 10, false, 0.1, fields)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewIsingGrid(m)
	if err != nil {
		t.Fatal(err)
	}
	res := g.Result()
	if math.IsNaN(res.LogZ) || math.IsInf(res.LogZ, 0) {
		t.Fatalf("log Z = %v", res.LogZ)
	}
	for i := range 100 {
		mu, p := res.Means[i], res.Marginals[i]
		if math.IsNaN(mu) || math.Abs(mu) > 1 {
			t.Errorf("E[z_%d] = %v", i, mu)
		}
		if p[0] < 0 || p[1] < 0 || math.Abs(p[0]+p[1]-1) > 1e-12 {
			t.Errorf("marginal of z_%d = %v", i, p)
		}
		// Weak couplings: the mean is close to tanh(h_i); 0.1 × 4
		// neighbours moves the local field by at most 0.4.
		if math.Abs(mu-math.Tanh(fields[i])) > 0.4 {
			t.Errorf("E[z_%d] = %v, far from tanh(h) = %v", i, mu, math.Tanh(fields[i]))
		}
	}
}

// The same model built as 4×10 (swept by columns) and as its transpose 10×4
// (swept by rows): same log Z and marginals, to the transfer's rounding.
func TestIsingGridTranspose(t *testing.T) {
	const rows, cols = 4, 10
	r := rand.New(rand.NewPCG(16, 17))
	fields := make([]float64, rows*cols)
	for i := range fields {
		fields[i] = 2*r.Float64() - 1
	}
	tf := make([]float64, rows*cols) // site (c, r) of the 10×4 grid
	for i, h := range fields {
		tf[(i%cols)*rows+i/cols] = h
	}
	a, _ := ising.Grid(rows, cols, false, 0.7, fields)
	b, _ := ising.Grid(cols, rows, false, 0.7, tf)
	ga, err := NewIsingGrid(a)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := NewIsingGrid(b)
	if err != nil {
		t.Fatal(err)
	}
	ra, rb := ga.Result(), gb.Result()
	if math.Abs(ra.LogZ-rb.LogZ) > gridTol {
		t.Errorf("log Z: 4×10 %.15g, 10×4 %.15g", ra.LogZ, rb.LogZ)
	}
	for i := range fields {
		j := (i%cols)*rows + i/cols
		if math.Abs(ra.Means[i]-rb.Means[j]) > gridTol {
			t.Errorf("E[z]: 4×10 site %d %.15g, 10×4 site %d %.15g", i, ra.Means[i], j, rb.Means[j])
		}
	}

	// Non-uniform couplings, transposed edge by edge.
	edges, _ := randomGridModel(rows, cols, 1, r)
	tedges := make([]ising.Edge, len(edges))
	for k, e := range edges {
		tedges[k] = ising.Edge{I: (e.I%cols)*rows + e.I/cols, J: (e.J%cols)*rows + e.J/cols, Coupling: e.Coupling}
	}
	gc, err := newIsingGrid(rows, cols, edges, fields)
	if err != nil {
		t.Fatal(err)
	}
	gd, err := newIsingGrid(cols, rows, tedges, tf)
	if err != nil {
		t.Fatal(err)
	}
	if lc, ld := gc.Result().LogZ, gd.Result().LogZ; math.Abs(lc-ld) > gridTol {
		t.Errorf("non-uniform log Z: 4×10 %.15g, 10×4 %.15g", lc, ld)
	}
}

// Strong couplings on the largest grid: nothing overflows. A 14×14
// ferromagnet with J = 2 and no field has log Z = E0 + log 2 + δ with
// E0 = 2·364 bonds and δ ≈ 1.7e-3 from isolated flips (4 corners at cost 8,
// 48 edge sites at cost 12, …); the antiferromagnet on this bipartite grid
// has the same Z, and both have zero means by symmetry.
func TestIsingGridStrongCoupling(t *testing.T) {
	for _, j := range []float64{2, -2} {
		m, err := ising.Grid(MaxGridSide, MaxGridSide, false, j, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewIsingGrid(m)
		if err != nil {
			t.Fatal(err)
		}
		res := g.Result()
		e0 := 2.0 * float64(len(m.Edges()))
		if delta := res.LogZ - e0 - math.Log(2); delta < 1e-3 || delta > 3e-3 {
			t.Errorf("J = %v: log Z − E0 − log 2 = %g, want ≈ 1.7e-3", j, delta)
		}
		for i, mu := range res.Means {
			if math.Abs(mu) > 1e-9 {
				t.Errorf("J = %v: E[z_%d] = %g, want 0", j, i, mu)
			}
		}
	}
}

// Near the float64 bound (see newIsingGrid): random-sign couplings up to
// |J| = 45 on 3×4 grids (2·cut + 2·maxE ≤ 8·45 + 2·(2·45 + 5) = 550) still
// match enumeration. log Z is in the hundreds, so it is compared relative
// to 1e-12 (its terms are sums of ~50 numbers of that size); the
// marginals are near 0 or 1 and compared to gridTol.
func TestIsingGridStrongRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 19))
	for _, sh := range [][2]int{{3, 4}, {4, 3}} {
		rows, cols := sh[0], sh[1]
		edges, fields := randomGridModel(rows, cols, 45, r)
		for i := range fields {
			fields[i] /= 9
		}
		m, _ := ising.New(rows*cols, edges, fields)
		want, err := Enumerate(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		g, err := newIsingGrid(rows, cols, edges, fields)
		if err != nil {
			t.Fatal(err)
		}
		got := g.Result()
		name := fmt.Sprintf("%dx%d strong", rows, cols)
		if math.Abs(got.LogZ-want.LogZ) > 1e-12*math.Abs(want.LogZ) {
			t.Errorf("%s: log Z = %.15g, enumeration %.15g", name, got.LogZ, want.LogZ)
		}
		want.LogZ = got.LogZ
		compareResults(t, name, got, want, gridTol)
	}
	// The documented limit at 14×14: a uniform |J| of 17 is accepted, 18 is
	// not.
	if _, err := newIsingGrid(14, 14, ising.GridEdges(14, 14, false, 17), nil); err != nil {
		t.Errorf("14×14, J = 17: %v", err)
	}
	if _, err := newIsingGrid(14, 14, ising.GridEdges(14, 14, false, -18), nil); err == nil {
		t.Error("14×14, J = −18 accepted")
	}
}

func benchmarkNewIsingGrid(b *testing.B, side int) {
	fields := make([]float64, side*side)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range fields {
		fields[i] = 2*r.Float64() - 1
	}
	m, err := ising.Grid(side, side, false, 0.5, fields)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewIsingGrid(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewIsingGrid10x10(b *testing.B) { benchmarkNewIsingGrid(b, 10) }
func BenchmarkNewIsingGrid14x14(b *testing.B) { benchmarkNewIsingGrid(b, 14) }

func BenchmarkIsingGridSample1000Draws10x10(b *testing.B) {
	m, err := ising.Grid(10, 10, false, 0.5, nil)
	if err != nil {
		b.Fatal(err)
	}
	g, err := NewIsingGrid(m)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]int, 1000*m.Dim())
	r := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		g.Sample(dst, r)
	}
}
