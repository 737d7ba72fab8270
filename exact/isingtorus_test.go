package exact

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
)

// Which of a periodic grid's bonds a test keeps.
type torusBonds int

const (
	allBonds   torusBonds = iota // the torus
	noRowWraps                   // a cylinder: columns wrap, rows do not
	noColWraps                   // a cylinder: rows wrap, columns do not
	noWraps                      // the open grid
	someBonds                    // each bond kept with probability 0.7
)

func (b torusBonds) String() string {
	return [...]string{"torus", "cylinder (columns wrap)", "cylinder (rows wrap)", "open", "random bonds"}[b]
}

// randomTorus returns a periodic rows×cols grid with the bonds that keep
// selects, couplings and fields uniform in [−scale, scale]. A row wrap
// joins (r, 0) and (r, cols−1) where cols ≥ 3 (GridEdges merges it with
// the inner bond where cols = 2), a column wrap likewise.
func randomTorus(t testing.TB, rows, cols int, scale float64, keep torusBonds, r *rand.Rand) *ising.Ising {
	t.Helper()
	var edges []ising.Edge
	for _, e := range ising.GridEdges(rows, cols, true, 0) {
		ri, ci, rj, cj := e.I/cols, e.I%cols, e.J/cols, e.J%cols
		rowWrap := ri == rj && cols >= 3 && (ci-cj == cols-1 || cj-ci == cols-1)
		colWrap := ci == cj && rows >= 3 && (ri-rj == rows-1 || rj-ri == rows-1)
		e.Coupling = scale * (2*r.Float64() - 1)
		switch {
		case keep == noRowWraps && rowWrap, keep == noColWraps && colWrap, keep == noWraps && (rowWrap || colWrap):
			continue
		case keep == someBonds && r.Float64() < 0.3:
			continue
		}
		edges = append(edges, e)
	}
	fields := make([]float64, rows*cols)
	for i := range fields {
		fields[i] = scale * (2*r.Float64() - 1)
	}
	m, err := ising.NewGrid(rows, cols, true, edges, fields)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The conditional transfers sum the same terms as enumeration in another
// order: at most 2^16 positive terms and a mixture of at most 2^4
// conditionings, which agree to ~1e-14; 1e-10 (relative for log Z) leaves
// ample room while catching any wrong factor.
const torusTol = 1e-10

func compareTorus(t *testing.T, name string, got, want *Result) {
	t.Helper()
	want2 := *want
	if math.Abs(got.LogZ-want.LogZ) <= torusTol*max(1, math.Abs(want.LogZ)) {
		want2.LogZ = got.LogZ
	}
	compareResults(t, name, got, &want2, torusTol)
}

var torusShapes = [][2]int{{1, 1}, {1, 2}, {2, 1}, {1, 6}, {6, 1}, {2, 2}, {2, 5}, {5, 2}, {3, 3}, {3, 4}, {4, 3}, {4, 4}, {3, 5}, {5, 3}, {2, 7}}

// Tori, cylinders both ways, open grids and random subsets of the bonds,
// with random couplings of both signs and random fields, against
// enumeration; the open ones also against IsingGrid.
func TestIsingTorusMatchesEnumerate(t *testing.T) {
	r := rand.New(rand.NewPCG(101, 102))
	for _, sh := range torusShapes {
		for keep := allBonds; keep <= someBonds; keep++ {
			for _, scale := range []float64{0.5, 1.5} {
				rows, cols := sh[0], sh[1]
				name := fmt.Sprintf("%d×%d %v scale %g", rows, cols, keep, scale)
				m := randomTorus(t, rows, cols, scale, keep, r)
				want, err := Enumerate(m, 0)
				if err != nil {
					t.Fatal(err)
				}
				g, err := NewIsingTorus(m)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				compareTorus(t, name, g.Result(), want)
				// Edges may come in any order and orientation.
				rev := slices.Clone(m.Edges())
				slices.Reverse(rev)
				for k := range rev {
					rev[k].I, rev[k].J = rev[k].J, rev[k].I
				}
				p, err := newTorusPlan(rows, cols, rev, m.Fields(), 0)
				if err != nil {
					t.Fatalf("%s reversed: %v", name, err)
				}
				g2, err := newIsingTorusPlan(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				compareTorus(t, name+" reversed edges", g2.Result(), want)
				if keep == noWraps {
					og, err := newIsingGrid(rows, cols, m.Edges(), m.Fields())
					if err != nil {
						t.Fatal(err)
					}
					compareTorus(t, name+" against IsingGrid", g.Result(), og.Result())
				}
			}
		}
	}
}

// Periodic grids as ising.Grid builds them (uniform coupling, merged bonds
// on sides of 2) go through For to IsingTorus.
func TestForPeriodicGrid(t *testing.T) {
	r := rand.New(rand.NewPCG(103, 104))
	for _, sh := range torusShapes {
		rows, cols := sh[0], sh[1]
		fields := make([]float64, rows*cols)
		for i := range fields {
			fields[i] = 2*r.Float64() - 1
		}
		m, err := ising.Grid(rows, cols, true, 2*r.Float64()-1, fields)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := For(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := tr.(*IsingTorus); !ok {
			t.Errorf("%d×%d periodic: For gave %T, want *IsingTorus", rows, cols, tr)
		}
		want, err := Enumerate(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		compareTorus(t, fmt.Sprintf("%d×%d periodic", rows, cols), tr.Result(), want)
	}
}

// The same torus built as 4×7 (swept by columns) and as its transpose 7×4
// (swept by rows): same log Z and marginals, to the transfers' rounding.
func TestIsingTorusTranspose(t *testing.T) {
	const rows, cols = 4, 7
	r := rand.New(rand.NewPCG(105, 106))
	m := randomTorus(t, rows, cols, 1, allBonds, r)
	tr := func(i int) int { return (i%cols)*rows + i/cols }
	var edges []ising.Edge
	for _, e := range m.Edges() {
		edges = append(edges, ising.Edge{I: tr(e.I), J: tr(e.J), Coupling: e.Coupling})
	}
	fields := make([]float64, rows*cols)
	for i, h := range m.Fields() {
		fields[tr(i)] = h
	}
	mt, err := ising.NewGrid(cols, rows, true, edges, fields)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewIsingTorus(m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewIsingTorus(mt)
	if err != nil {
		t.Fatal(err)
	}
	ra, rb := a.Result(), b.Result()
	if math.Abs(ra.LogZ-rb.LogZ) > torusTol*math.Abs(ra.LogZ) {
		t.Errorf("log Z: 4×7 %.15g, 7×4 %.15g", ra.LogZ, rb.LogZ)
	}
	for i := range fields {
		if math.Abs(ra.Means[i]-rb.Means[tr(i)]) > torusTol {
			t.Errorf("E[z]: 4×7 site %d %.15g, 7×4 site %d %.15g", i, ra.Means[i], tr(i), rb.Means[tr(i)])
		}
	}
}

func TestTorusPairsMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(107, 108))
	for _, sh := range torusShapes {
		for _, keep := range []torusBonds{allBonds, someBonds} {
			rows, cols := sh[0], sh[1]
			name := fmt.Sprintf("%d×%d %v", rows, cols, keep)
			m := randomTorus(t, rows, cols, 1, keep, r)
			want, err := EnumeratePairs(context.Background(), m, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := PairsFor(context.Background(), m, memlimit.Budget{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got.Route() != "ising-torus" {
				t.Errorf("%s: route %q, want ising-torus", name, got.Route())
			}
			comparePairs(t, name, got, want, torusTol)
		}
	}
}

// Against enumeration of the same model hidden behind plainModel.
func TestModeMassTorusMatchesEnumeration(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(109, 110))
	for _, sh := range torusShapes {
		for _, scale := range []float64{0.3, 1.5} {
			name := fmt.Sprintf("%d×%d scale %g", sh[0], sh[1], scale)
			m := randomTorus(t, sh[0], sh[1], scale, allBonds, r)
			got, err := ModeMass(ctx, m, memlimit.Budget{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			want, err := ModeMass(ctx, plainModel{m}, memlimit.Budget{})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-want) > torusTol {
				t.Errorf("%s: P(M > 0) + ½P(M = 0) = %.15g, enumeration %.15g", name, got, want)
			}
		}
	}
}

// The whole joint distribution of small tori: a 2×3 torus (conditioning on
// a line of 2; column wraps only), a 3×3 one (rows wrap within the line
// too), a ring of 5 and a 3×4 cylinder. N = 200000 draws; states of
// expected count below 5 are pooled into one cell, and the chi-square
// statistic over the cells must stay under df + 6·sqrt(2·df), beyond its
// 1e-5 quantile for these df (Wilson–Hilferty), so a correct sampler fails
// with probability below 4e-5 in all. Each draw goes through many chunks
// (64 to 256 samples at these sizes) and groups.
func TestIsingTorusSampleJoint(t *testing.T) {
	const N = 200000
	r := rand.New(rand.NewPCG(111, 112))
	for k, c := range []struct {
		rows, cols int
		keep       torusBonds
	}{{2, 3, allBonds}, {3, 3, allBonds}, {1, 5, allBonds}, {3, 4, noColWraps}} {
		name := fmt.Sprintf("%d×%d %v", c.rows, c.cols, c.keep)
		m := randomTorus(t, c.rows, c.cols, 1, c.keep, r)
		d := m.Dim()
		want, err := Enumerate(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewIsingTorus(m)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]int, N*d)
		g.Sample(buf, rand.New(rand.NewPCG(113, uint64(k))))
		counts := make([]float64, 1<<d)
		for o := 0; o < len(buf); o += d {
			idx := 0
			for _, s := range buf[o : o+d] {
				if s != 0 && s != 1 {
					t.Fatalf("%s: sample holds state %d", name, s)
				}
				idx = idx<<1 | s
			}
			counts[idx]++
		}
		z := make([]int, d)
		var chi2, restE, restO float64
		df := -1
		for idx := range counts {
			for i := range d {
				z[i] = idx >> (d - 1 - i) & 1
			}
			e := N * math.Exp(m.LogProb(z)-want.LogZ)
			if e < 5 {
				restE += e
				restO += counts[idx]
				continue
			}
			chi2 += (counts[idx] - e) * (counts[idx] - e) / e
			df++
		}
		if restE > 0 {
			chi2 += (restO - restE) * (restO - restE) / restE
			df++
		}
		if bound := float64(df) + 6*math.Sqrt(2*float64(df)); chi2 > bound {
			t.Errorf("%s: chi-square %.2f with %d degrees of freedom, over %.2f", name, chi2, df, bound)
		}
		t.Logf("%s: chi-square %.2f, %d degrees of freedom", name, chi2, df)
	}
}

// Marginals and edge moments of a 4×4 torus and of a 6×3 cylinder from
// 20000 draws, each within 4 standard errors (P(|N(0,1)| > 4) ≈ 6e-5 per
// check, about 1e-2 over the test's 160 checks; the seed is fixed).
func TestIsingTorusSampleFrequencies(t *testing.T) {
	const n = 20000
	r := rand.New(rand.NewPCG(114, 115))
	for k, c := range []struct {
		rows, cols int
		keep       torusBonds
	}{{4, 4, allBonds}, {6, 3, noRowWraps}} {
		m := randomTorus(t, c.rows, c.cols, 1, c.keep, r)
		d := m.Dim()
		name := fmt.Sprintf("%d×%d %v", c.rows, c.cols, c.keep)
		want, err := Enumerate(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		pairs := enumeratePairs(m, want.LogZ)
		g, err := NewIsingTorus(m)
		if err != nil {
			t.Fatal(err)
		}
		samples := make([]int, n*d)
		g.Sample(samples, rand.New(rand.NewPCG(116, uint64(k))))
		for i := range d {
			var cnt float64
			for o := 0; o < len(samples); o += d {
				cnt += float64(samples[o+i])
			}
			p := want.Marginals[i][1]
			if se, f := math.Sqrt(p*(1-p)/n), cnt/n; math.Abs(f-p) > 4*se {
				t.Errorf("%s: P(z_%d = +1): sample frequency %.4f, exact %.4f (4 se = %.4f)", name, i, f, p, 4*se)
			}
		}
		for k, e := range m.Edges() {
			var cnt float64
			for o := 0; o < len(samples); o += d {
				cnt += model.Spin(samples[o+e.I]) * model.Spin(samples[o+e.J])
			}
			mu := pairs[k]
			if se, f := math.Sqrt((1-mu*mu)/n), cnt/n; math.Abs(f-mu) > 4*se {
				t.Errorf("%s: E[z_%d z_%d]: sample mean %.4f, exact %.4f (4 se = %.4f)", name, e.I, e.J, f, mu, 4*se)
			}
		}
	}
}

// The samples do not depend on how a buffer is split between calls (here
// across the 128-sample chunks of a 3×3 torus) nor on GOMAXPROCS.
func TestIsingTorusSampleDeterministic(t *testing.T) {
	m := randomTorus(t, 3, 3, 1, allBonds, rand.New(rand.NewPCG(117, 118)))
	g, err := NewIsingTorus(m)
	if err != nil {
		t.Fatal(err)
	}
	if c := g.p.sampleChunk(); c != 128 {
		t.Fatalf("3×3 torus: chunks of %d samples, want 128", c)
	}
	d := m.Dim()
	const rows = 300
	a := make([]int, rows*d)
	g.Sample(a, rand.New(rand.NewPCG(1, 1)))
	for _, cut := range []int{1, 100, 128, 129, 299} {
		b := make([]int, rows*d)
		r := rand.New(rand.NewPCG(1, 1))
		g.Sample(b[:cut*d], r)
		g.Sample(b[cut*d:], r)
		if !slices.Equal(a, b) {
			t.Errorf("samples depend on a split after row %d", cut)
		}
	}
	old := runtime.GOMAXPROCS(1)
	b := make([]int, rows*d)
	g.Sample(b, rand.New(rand.NewPCG(1, 1)))
	runtime.GOMAXPROCS(2)
	c := make([]int, rows*d)
	g.Sample(c, rand.New(rand.NewPCG(1, 1)))
	runtime.GOMAXPROCS(old)
	if !slices.Equal(a, b) || !slices.Equal(a, c) {
		t.Error("samples depend on GOMAXPROCS")
	}
	g.Sample(nil, rand.New(rand.NewPCG(1, 1))) // no samples, no panic
	defer func() {
		if recover() == nil {
			t.Error("Sample accepted a buffer whose length is not a multiple of d")
		}
	}()
	g.Sample(make([]int, d+1), rand.New(rand.NewPCG(1, 1)))
}

// One truth sampled from several goroutines at once, each with its own
// generator, gives each the samples it gives alone (run with -race).
func TestIsingTorusConcurrentSample(t *testing.T) {
	m := randomTorus(t, 4, 5, 1, allBonds, rand.New(rand.NewPCG(125, 126)))
	g, err := NewIsingTorus(m)
	if err != nil {
		t.Fatal(err)
	}
	const rows, k = 700, 4
	d := m.Dim()
	want := make([][]int, k)
	for i := range want {
		want[i] = make([]int, rows*d)
		g.Sample(want[i], rand.New(rand.NewPCG(127, uint64(i))))
	}
	got := make([][]int, k)
	done := make(chan int)
	for i := range got {
		go func() {
			got[i] = make([]int, rows*d)
			g.Sample(got[i], rand.New(rand.NewPCG(127, uint64(i))))
			done <- i
		}()
	}
	for range got {
		<-done
	}
	for i := range got {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("goroutine %d: other samples than alone", i)
		}
	}
}

// Log Z, the marginals, the pair tables and the mode mass of a 6×5 torus
// are the same bits on one core and on two.
func TestIsingTorusSameBitsAtAnyGOMAXPROCS(t *testing.T) {
	m := randomTorus(t, 6, 5, 1, allBonds, rand.New(rand.NewPCG(119, 120)))
	type out struct {
		res   *Result
		pairs []float64
		mass  float64
	}
	run := func(procs int) out {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		g, err := NewIsingTorus(m)
		if err != nil {
			t.Fatal(err)
		}
		p, err := TorusPairs(context.Background(), m, memlimit.Budget{})
		if err != nil {
			t.Fatal(err)
		}
		mass, err := ModeMass(context.Background(), m, memlimit.Budget{})
		if err != nil {
			t.Fatal(err)
		}
		return out{g.Result(), p.p, mass}
	}
	a := run(1)
	for _, procs := range []int{2, 16} {
		b := run(procs)
		if a.res.LogZ != b.res.LogZ || !slices.Equal(a.res.Means, b.res.Means) || !slices.Equal(a.pairs, b.pairs) || a.mass != b.mass {
			t.Errorf("results differ between GOMAXPROCS 1 and %d", procs)
		}
	}
}

// kaufmanLogZ returns log Z of the m×n torus (every row and column wrapped,
// m, n ≥ 2, bonds of a side of 2 counted twice as GridEdges merges them)
// with coupling k > 0 and no field: Kaufman's (1949) exact partition
// function in the form of Beale (1996),
//
//	Z = ½ (2 sinh 2k)^{mn/2} Σ_{i=1}^{4} Z_i,
//	Z_1 = Π_{r<n} 2 cosh(m γ_{2r+1}/2), Z_2 = Π_{r<n} 2 sinh(m γ_{2r+1}/2),
//	Z_3 = Π_{r<n} 2 cosh(m γ_{2r}/2),   Z_4 = Π_{r<n} 2 sinh(m γ_{2r}/2),
//	cosh γ_l = cosh 2k · coth 2k − cos(π l/n), γ_0 = 2k + log tanh k,
//
// summed in log space with signs (γ_0 < 0 below the critical temperature).
func kaufmanLogZ(m, n int, k float64) float64 {
	gamma := func(l int) float64 {
		if l == 0 {
			return 2*k + math.Log(math.Tanh(k))
		}
		return math.Acosh(math.Cosh(2*k)/math.Tanh(2*k) - math.Cos(math.Pi*float64(l)/float64(n)))
	}
	logCosh2 := func(x float64) float64 { return math.Abs(x) + math.Log1p(math.Exp(-2*math.Abs(x))) }
	logSinh2 := func(x float64) (float64, float64) {
		return math.Abs(x) + math.Log1p(-math.Exp(-2*math.Abs(x))), math.Copysign(1, x)
	}
	var logs [4]float64
	signs := [4]float64{1, 1, 1, 1}
	for r := range n {
		odd, even := float64(m)*gamma(2*r+1)/2, float64(m)*gamma(2*r)/2
		logs[0] += logCosh2(odd)
		l, s := logSinh2(odd)
		logs[1] += l
		signs[1] *= s
		logs[2] += logCosh2(even)
		l, s = logSinh2(even)
		logs[3] += l
		signs[3] *= s
	}
	top := math.Inf(-1)
	for _, l := range logs {
		top = max(top, l)
	}
	var sum float64
	for i, l := range logs {
		sum += signs[i] * math.Exp(l-top)
	}
	return math.Log(0.5) + float64(m*n)/2*math.Log(2*math.Sinh(2*k)) + top + math.Log(sum)
}

// Kaufman's formula itself, against enumeration of small tori (square and
// not, sides of 2 included), so that the larger checks rest on a formula
// known to be transcribed right.
func TestKaufmanFormula(t *testing.T) {
	for _, sh := range [][2]int{{2, 2}, {2, 5}, {3, 3}, {3, 4}, {4, 3}, {4, 4}, {3, 5}, {4, 5}} {
		for _, k := range []float64{0.1, 0.4406868, 0.9} {
			m, err := ising.Grid(sh[0], sh[1], true, k, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Enumerate(m, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := kaufmanLogZ(sh[0], sh[1], k); math.Abs(got-want.LogZ) > 1e-12*want.LogZ {
				t.Errorf("%d×%d, K = %g: Kaufman %.15g, enumeration %.15g", sh[0], sh[1], k, got, want.LogZ)
			}
		}
	}
}

// The 10×10 torus of the GWG paper (no enumeration possible): log Z
// against Kaufman's formula at couplings on both sides of the critical
// one, the antiferromagnet with the same Z (the even torus is bipartite),
// zero means by symmetry; a uniform field makes every mean equal
// (translation invariance). Both sides sum ~100 terms of size ~1, so 1e-12
// relative is far beyond their rounding.
func TestIsingTorusTenByTen(t *testing.T) {
	for _, k := range []float64{0.2, 0.4406868, -0.4406868, 0.7} {
		m, err := ising.Grid(10, 10, true, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := For(m)
		if err != nil {
			t.Fatal(err)
		}
		res := tr.Result()
		want := kaufmanLogZ(10, 10, math.Abs(k))
		if math.Abs(res.LogZ-want) > 1e-12*want {
			t.Errorf("10×10 torus, K = %g: log Z = %.15g, Kaufman %.15g", k, res.LogZ, want)
		}
		for i, mu := range res.Means {
			if math.Abs(mu) > 1e-12 {
				t.Fatalf("10×10 torus, K = %g: E[z_%d] = %g, want 0", k, i, mu)
			}
		}
	}
	fields := make([]float64, 100)
	for i := range fields {
		fields[i] = 0.05
	}
	m, _ := ising.Grid(10, 10, true, 0.4, fields)
	g, err := NewIsingTorus(m)
	if err != nil {
		t.Fatal(err)
	}
	res := g.Result()
	for i, mu := range res.Means {
		if math.Abs(mu-res.Means[0]) > 1e-12 {
			t.Errorf("uniform 10×10 torus: E[z_%d] = %.15g, E[z_0] = %.15g", i, mu, res.Means[0])
		}
	}
	if !(res.Means[0] > 0.05) {
		t.Errorf("uniform 10×10 torus, J = 0.4, h = 0.05: E[z] = %g, want more than h", res.Means[0])
	}
}

// The largest torus within MaxTorusSide against Kaufman (about 8 s on one
// core; skipped with -short).
func TestIsingTorusLargest(t *testing.T) {
	if testing.Short() {
		t.Skip("the 12×12 torus takes seconds")
	}
	m, err := ising.Grid(MaxTorusSide, MaxTorusSide, true, 0.5, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	g, err := NewIsingTorus(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d×%d torus built in %v", MaxTorusSide, MaxTorusSide, time.Since(start))
	want := kaufmanLogZ(MaxTorusSide, MaxTorusSide, 0.5)
	if got := g.Result().LogZ; math.Abs(got-want) > 1e-12*want {
		t.Errorf("%d×%d torus, K = 0.5: log Z = %.15g, Kaufman %.15g", MaxTorusSide, MaxTorusSide, got, want)
	}
}

// An 8×8 torus with a uniform coupling and field: pair moments depend
// only on the displacement (translation invariance, to rounding), and the
// mode mass is ½ without the field.
func TestTorusPairsTranslationInvariant(t *testing.T) {
	const side = 8
	fields := make([]float64, side*side)
	for i := range fields {
		fields[i] = 0.03
	}
	m, _ := ising.Grid(side, side, true, 0.4, fields)
	p, err := PairsFor(context.Background(), m, memlimit.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	ref := map[[2]int]float64{}
	for i := range side * side {
		for j := range side * side {
			if i == j {
				continue
			}
			dr, dc := (j/side-i/side+side)%side, (j%side-i%side+side)%side
			key := [2]int{dr, dc}
			e := p.Moment(i, j)
			if v, ok := ref[key]; !ok {
				ref[key] = e
			} else if math.Abs(e-v) > 1e-12 {
				t.Fatalf("E[z_%d z_%d] = %.15g, another pair at displacement %v has %.15g", i, j, e, key, v)
			}
		}
	}
	if ref[[2]int{0, 1}] <= ref[[2]int{0, 2}] || math.Abs(ref[[2]int{0, 1}]-ref[[2]int{1, 0}]) > 1e-12 {
		t.Errorf("neighbour correlation %v, next %v, vertical %v", ref[[2]int{0, 1}], ref[[2]int{0, 2}], ref[[2]int{1, 0}])
	}
	sym, _ := ising.Grid(side, side, true, 0.4, nil)
	if mass, err := ModeMass(context.Background(), sym, memlimit.Budget{}); err != nil || math.Abs(mass-0.5) > 1e-12 {
		t.Errorf("symmetric 8×8 torus: mode mass %v, error %v; want ½", mass, err)
	}
}

// An 8×8 torus with random couplings and fields: each of the 2016 exact
// pair moments and the exact mode mass against N = 20000 exact draws,
// within 5 standard errors (a two-sided tail of 5.7e-7 each, 1.2e-3 for the
// whole test; the seed is fixed).
func TestTorusPairsAndModeMassAgainstSamples(t *testing.T) {
	m := randomTorus(t, 8, 8, 0.5, allBonds, rand.New(rand.NewPCG(121, 122)))
	ctx := context.Background()
	p, err := TorusPairs(ctx, m, memlimit.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	mass, err := ModeMass(ctx, m, memlimit.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewIsingTorus(m)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	d := m.Dim()
	buf := make([]int, n*d)
	g.Sample(buf, rand.New(rand.NewPCG(123, 124)))
	sum := make([]float64, d*d)
	var est, sq float64
	for o := 0; o < len(buf); o += d {
		z := buf[o : o+d]
		mag := 0
		for i := range d {
			si := model.Spin(z[i])
			mag += 2*z[i] - 1
			row := sum[i*d : (i+1)*d]
			for j := i + 1; j < d; j++ {
				row[j] += si * model.Spin(z[j])
			}
		}
		y := modeWeight(float64(mag))
		est += y
		sq += y * y
	}
	worst := 0.0
	for i := range d {
		for j := i + 1; j < d; j++ {
			e := p.Moment(i, j)
			se := math.Sqrt(max(1-e*e, 1e-12) / n)
			dev := math.Abs(sum[i*d+j]/n-e) / se
			worst = max(worst, dev)
			if dev > 5 {
				t.Errorf("E[z_%d z_%d]: sample %.5f, exact %.5f (%.1f SE)", i, j, sum[i*d+j]/n, e, dev)
			}
		}
	}
	est /= n
	if se := math.Sqrt((sq/n - est*est) / n); math.Abs(est-mass) > 5*se {
		t.Errorf("mode mass: exact %.5f, sample %.5f ± %.5f", mass, est, se)
	}
	t.Logf("largest deviation over %d moments: %.2f SE; mode mass exact %.5f, sample %.5f", d*(d-1)/2, worst, mass, est)
}

func TestIsingTorusErrors(t *testing.T) {
	chain, _ := ising.New(3, []ising.Edge{{I: 0, J: 1, Coupling: 0.5}, {I: 1, J: 2, Coupling: 0.5}}, nil)
	wide, _ := ising.Grid(13, 20, true, 0.1, nil)
	for _, c := range []struct {
		name string
		m    *ising.Ising
		want string
	}{
		{"nil", nil, "nil"},
		{"not a grid", chain, "ising.Grid"},
		{"side 13", wide, "at most 12"},
	} {
		if _, err := NewIsingTorus(c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	// A long torus with a short side is fine, and so is an open grid.
	long, _ := ising.Grid(3, 40, true, 0.2, nil)
	if _, err := NewIsingTorus(long); err != nil {
		t.Errorf("3×40: %v", err)
	}
	open, _ := ising.Grid(4, 6, false, 0.3, []float64{0.1, -0.2, 0.3, 0, 0, 0.5, -0.1, 0.2, 0, 0, 0.3, 0.1, 0.2, -0.3, 0, 0, 0.1, 0, 0, 0.2, 0.4, -0.5, 0, 0.1})
	if g, err := NewIsingTorus(open); err != nil {
		t.Errorf("open 4×6: %v", err)
	} else {
		og, _ := NewIsingGrid(open)
		compareTorus(t, "open 4×6 against IsingGrid", g.Result(), og.Result())
	}
	e := func(i, j int) ising.Edge { return ising.Edge{I: i, J: j, Coupling: 0.5} }
	for _, c := range []struct {
		name       string
		rows, cols int
		edges      []ising.Edge
		want       string
	}{
		{"diagonal", 3, 3, []ising.Edge{e(0, 4)}, "not neighbours"},
		{"two apart", 4, 4, []ising.Edge{e(0, 2)}, "not neighbours"},
		{"duplicate", 3, 3, []ising.Edge{e(0, 2), e(2, 0)}, "more than one edge"},
		{"outside", 3, 3, []ising.Edge{e(0, 9)}, "outside"},
		{"too strong", 3, 3, []ising.Edge{{I: 3, J: 4, Coupling: 400}}, "too strong"},
		{"empty", 0, 3, nil, "at least one row"},
	} {
		if _, err := newTorusPlan(c.rows, c.cols, c.edges, nil, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
	// Bonds within the first line are weighed in log space: a strong one
	// there is fine.
	if _, err := newTorusPlan(3, 3, []ising.Edge{{I: 0, J: 1, Coupling: 400}}, nil, 0); err != nil {
		t.Errorf("strong bond in the first line: %v", err)
	}
	// The documented float64 limit on the 10×10 torus: a uniform |J| of
	// 18 is accepted, 19 is not (12 bonds across the frontier, 4 at a
	// site: 2·(12 + 4)·|J| > 600 nats).
	if _, err := newTorusPlan(10, 10, ising.GridEdges(10, 10, true, 18), nil, 0); err != nil {
		t.Errorf("10×10 torus, J = 18: %v", err)
	}
	if _, err := newTorusPlan(10, 10, ising.GridEdges(10, 10, true, -19), nil, 0); err == nil {
		t.Error("10×10 torus, J = −19 accepted")
	}
}

// Where the transfer refuses (couplings too strong for float64), a small
// torus is still answered by enumeration (For, Memory) or variable
// elimination (PairsFor), and ModeMass by enumeration; a large one is
// refused with the transfer's reason.
func TestTorusFallbacks(t *testing.T) {
	ctx := context.Background()
	strong, _ := ising.Grid(3, 3, true, 60, nil)
	tr, err := For(strong)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tr.(*Enumerated); !ok {
		t.Errorf("3×3 torus, J = 60: For gave %T, want *Enumerated", tr)
	}
	if got, want := Memory(strong), memlimit.Base+8*512.0+16*9; got != want {
		t.Errorf("3×3 torus, J = 60: Memory %v, want enumeration's %v", got, want)
	}
	p, err := PairsFor(ctx, strong, memlimit.Budget{})
	if err != nil || p.Route() != "variable-elimination" {
		t.Errorf("3×3 torus, J = 60: pairs route %v, error %v; want variable-elimination", p, err)
	}
	if mass, err := ModeMass(ctx, strong, memlimit.Budget{}); err != nil || math.Abs(mass-0.5) > 1e-12 {
		t.Errorf("3×3 torus, J = 60: mode mass %v, error %v", mass, err)
	}
	big, _ := ising.Grid(10, 10, true, 60, nil)
	if _, err := For(big); err == nil || !strings.Contains(err.Error(), "too strong") {
		t.Errorf("10×10 torus, J = 60: error %v", err)
	}
	if _, err := For(mustGrid(t, 13, 13)); err == nil || !strings.Contains(err.Error(), "periodic one with shorter side ≤ 12") {
		t.Errorf("13×13 torus: error %v", err)
	}
}

func mustGrid(t *testing.T, rows, cols int) *ising.Ising {
	t.Helper()
	m, err := ising.Grid(rows, cols, true, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The work and memory refusals of the torus's routes.
func TestTorusRefusals(t *testing.T) {
	ctx := context.Background()
	// Pairs of a 12×40 torus: (2·40 − 1)·468·4^12 ≈ 6e11 entry updates;
	// variable elimination cannot take it either.
	if _, err := PairsFor(ctx, mustGrid(t, 12, 40), memlimit.Budget{}); err == nil || !strings.Contains(err.Error(), "MaxPairsWork") {
		t.Errorf("pairs of a 12×40 torus: error %v", err)
	}
	// The mode mass of a 12×12 torus: 132²/2·4^12 ≈ 1.5e11.
	if _, err := ModeMass(ctx, mustGrid(t, 12, 12), memlimit.Budget{}); err == nil || !strings.Contains(err.Error(), "MaxPairsWork") {
		t.Errorf("mode mass of a 12×12 torus: error %v", err)
	}
	// A 1 MiB budget refuses with *memlimit.Exceeded.
	var ex *memlimit.Exceeded
	if _, err := PairsFor(ctx, mustGrid(t, 6, 6), memlimit.Budget{Limit: 1 << 20}); !errors.As(err, &ex) {
		t.Errorf("pairs of a 6×6 torus with a 1 MiB budget: error %v", err)
	}
	if _, err := ModeMass(ctx, mustGrid(t, 6, 6), memlimit.Budget{Limit: 1 << 20}); !errors.As(err, &ex) {
		t.Errorf("mode mass of a 6×6 torus with a 1 MiB budget: error %v", err)
	}
}

// Memory and PairsMemory hold what the routes allocate: everything
// allocated during a 10×10 build, during 20000 draws from it and during
// the pairs of an 8×8 torus (an upper bound of what is live at once, less
// the small garbage of each sweep of the pairs) stays under the estimates
// less memlimit.Base.
func TestTorusMemoryEstimates(t *testing.T) {
	measure := func(f func()) float64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		return float64(b.TotalAlloc - a.TotalAlloc)
	}
	m := mustGrid(t, 10, 10)
	var g *IsingTorus
	build := measure(func() {
		var err error
		if g, err = NewIsingTorus(m); err != nil {
			t.Fatal(err)
		}
	})
	buf := make([]int, 20000*100)
	draw := measure(func() { g.Sample(buf, rand.New(rand.NewPCG(1, 2))) })
	est := Memory(m) - memlimit.Base
	t.Logf("10×10 torus: build allocated %.3g bytes, 20000 draws %.3g; Memory %.3g", build, draw, est)
	if build > est || draw > est {
		t.Errorf("10×10 torus: allocated %.3g (build) and %.3g (draws), over Memory's %.3g", build, draw, est)
	}
	pm := mustGrid(t, 8, 8)
	pairs := measure(func() {
		if _, err := PairsFor(context.Background(), pm, memlimit.Budget{}); err != nil {
			t.Fatal(err)
		}
	})
	// Each of the 8 sweeps also makes its plan and weights, garbage once
	// the sweep is over: allowed on top.
	plan := measure(func() {
		if _, err := torusPlanOf(pm, 1); err != nil {
			t.Fatal(err)
		}
	})
	pest, slack := PairsMemory(pm)-memlimit.Base, 8*(plan+2*8*256)
	t.Logf("8×8 torus pairs: allocated %.3g bytes; PairsMemory %.3g, and %.3g for the sweeps' plans and weights", pairs, pest, slack)
	if pairs > pest+slack {
		t.Errorf("8×8 torus pairs: allocated %.3g, over PairsMemory's %.3g and %.3g", pairs, pest, slack)
	}
}

func BenchmarkNewIsingTorus10x10(b *testing.B) {
	fields := make([]float64, 100)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range fields {
		fields[i] = 2*r.Float64() - 1
	}
	m, err := ising.Grid(10, 10, true, 0.5, fields)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewIsingTorus(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIsingTorusSample1000Draws10x10(b *testing.B) {
	m, err := ising.Grid(10, 10, true, 0.4, nil)
	if err != nil {
		b.Fatal(err)
	}
	g, err := NewIsingTorus(m)
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

func BenchmarkTorusPairs8x8(b *testing.B) {
	m := randomTorus(b, 8, 8, 0.5, allBonds, rand.New(rand.NewPCG(1, 2)))
	for b.Loop() {
		if _, err := TorusPairs(context.Background(), m, memlimit.Budget{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkModeMassTorus8x8(b *testing.B) {
	m := randomTorus(b, 8, 8, 0.5, allBonds, rand.New(rand.NewPCG(1, 2)))
	for b.Loop() {
		if _, err := ModeMass(context.Background(), m, memlimit.Budget{}); err != nil {
			b.Fatal(err)
		}
	}
}
