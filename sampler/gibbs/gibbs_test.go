package gibbs

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/internal/vec"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

func newSampler(t testing.TB, m model.Model, n int, set Settings, seed uint64) *Sampler {
	t.Helper()
	tr, err := transform.ForModel(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(sampler.NewProblem(m, tr, n, sampler.Init{}, rng.NewKey(seed)), set)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The final states of n independent chains are i.i.d. draws once the
// chains have mixed, so each state's frequency must lie within 4 standard
// errors √(p(1−p)/n) of its exact probability (a false alarm for one of
// the few dozen frequencies checked here has probability below 0.2%).
// Stratified chains are not independent, but each is an exact Gibbs chain
// and stratification only lowers the variance of the counts, so the same
// tolerance is conservative for them.
func checkMarginals(t *testing.T, name string, m model.Model, s *Sampler, sweeps int) {
	t.Helper()
	ex, err := exact.Enumerate(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := sampler.Run(context.Background(), s, sampler.RunOptions{Iters: sweeps})
	if out.Status != sampler.Completed {
		t.Fatal(out.Err)
	}
	marg := sampler.Marginals(m, &sampler.Samples{N: s.n, D: s.d, Z: s.Current()})
	n := float64(s.n)
	for i := range marg {
		for k, p := range ex.Marginals[i] {
			se := math.Sqrt(p * (1 - p) / n)
			if math.Abs(marg[i][k]-p) > 4*se+1e-12 {
				t.Errorf("%s: P(z_%d = %v) = %.4f; exact %.4f (4 SE = %.4f)", name, i, m.States(i)[k], marg[i][k], p, 4*se)
			}
		}
	}
}

func TestConvergesToExactMarginals(t *testing.T) {
	r := rng.NewKey(5).For(rng.Model).Rand()
	fields := make([]float64, 9)
	for i := range fields {
		fields[i] = r.Float64() - 0.5
	}
	g, _ := ising.Grid(3, 3, false, 0.5, fields)
	checkMarginals(t, "ising 3×3", g, newSampler(t, g, 3000, Settings{}, 1), 100)
	checkMarginals(t, "ising 3×3 stratified", g, newSampler(t, g, 3000, Settings{Stratified: true}, 1), 100)

	c, _ := categorical.New([]categorical.Variable{
		{States: []float64{-1, -0.5, 0, 0.5, 1}, Probs: []float64{0.1, 0.2, 0.3, 0.1, 0.3}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0, 0.5}},
	})
	checkMarginals(t, "categorical", c, newSampler(t, c, 3000, Settings{}, 2), 5)
	checkMarginals(t, "categorical stratified", c, newSampler(t, c, 3000, Settings{Stratified: true}, 2), 5)

	b, _ := rbm.Random(6, 3, 0.8, 1, 4)
	checkMarginals(t, "rbm block", b, newSampler(t, b, 3000, Settings{Scan: Block}, 3), 100)
	checkMarginals(t, "rbm single-site", b, newSampler(t, b, 3000, Settings{Scan: Systematic}, 3), 100)
	checkMarginals(t, "rbm stratified", b, newSampler(t, b, 3000, Settings{Stratified: true}, 3), 100)
}

// Stratified sweeps of independent variables: after one sweep the number
// of chains in each variable's first state is within one of n times its
// probability (the systematic sample's guarantee); independent chains are
// off by about √(n p (1−p)) ≈ 11 at n = 500.
func TestStratifiedCounts(t *testing.T) {
	c, _ := categorical.New([]categorical.Variable{
		{States: []float64{0, 1}, Probs: []float64{0.3, 0.7}},
		{States: []float64{0, 1}, Probs: []float64{0.55, 0.45}},
	})
	for seed := range uint64(5) {
		s := newSampler(t, c, 500, Settings{Stratified: true}, seed)
		if err := s.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
		z := s.Current()
		for i, p1 := range []float64{0.7, 0.45} {
			ones := 0
			for j := range 500 {
				ones += z[j*2+i]
			}
			if math.Abs(float64(ones)-500*p1) > 1 {
				t.Errorf("seed %d, variable %d: %d chains in state 1, want 500·%g ± 1", seed, i, ones, p1)
			}
		}
	}
}

// Chains start at the problem's states: Γ of the initial draw that every
// method of a run shares.
func TestStartsFromTheInitialDraw(t *testing.T) {
	g, _ := ising.Grid(3, 4, false, 0.2, nil)
	tr, _ := transform.ForModel(nil, g)
	p := sampler.NewProblem(g, tr, 20, sampler.Init{Mean: -2}, rng.NewKey(17))
	s, err := New(p, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	x := sampler.InitialParticles(nil, 20, g.Dim(), -2, 1, rng.NewKey(17).For(rng.Init).Rand())
	d := g.Dim()
	for j := range 20 {
		want := tr.Gamma(nil, x[j*d:(j+1)*d])
		for i, v := range want {
			if got := s.Current()[j*d+i]; got != v {
				t.Fatalf("chain %d starts with z%d = %d; Γ of the initial draw gives %d", j, i, got, v)
			}
		}
	}
}

func TestSameBitsAtAnyGOMAXPROCS(t *testing.T) {
	b, _ := rbm.Random(12, 4, 0.5, 1, 1)
	g, _ := ising.Grid(4, 4, false, 0.3, nil)
	for _, m := range []model.Model{b, g} {
		for _, set := range []Settings{{}, {Stratified: true}} {
			var runs [3][]int
			for k, procs := range []int{1, 2, 16} {
				old := runtime.GOMAXPROCS(procs)
				s := newSampler(t, m, 50, set, 8)
				sampler.Run(context.Background(), s, sampler.RunOptions{Iters: 20})
				runtime.GOMAXPROCS(old)
				runs[k] = append([]int(nil), s.Current()...)
			}
			for c, procs := range []int{2, 16} {
				for k := range runs[0] {
					if runs[0][k] != runs[c+1][k] {
						t.Fatalf("%+v: state %d differs between GOMAXPROCS 1 and %d", set, k, procs)
					}
				}
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	g, _ := ising.Grid(2, 2, false, 0.1, nil)
	tr, _ := transform.ForModel(nil, g)
	if _, err := New(sampler.NewProblem(g, tr, 0, sampler.Init{}, rng.NewKey(1)), Settings{}); err == nil {
		t.Error("n = 0 accepted")
	}
	if _, err := New(sampler.NewProblem(g, tr, 3, sampler.Init{}, rng.NewKey(1)), Settings{Scan: Block}); err == nil {
		t.Error("block Gibbs on an Ising model accepted")
	}
	p := sampler.NewProblem(g, tr, 1, sampler.Init{}, rng.NewKey(1))
	p.Z = []int{0, 1, 2, 0}
	if _, err := New(p, Settings{}); err == nil {
		t.Error("state 2 of a spin accepted")
	}
	if err := (&Settings{Stratified: true, Scan: Block}).Validate(); err == nil {
		t.Error("stratified block updates accepted")
	}
}

// Draw inverts the cumulative distribution with the first-state
// convention firstProb reports.
func TestDrawAndFirstProb(t *testing.T) {
	for _, c := range []struct {
		lp    []float64
		first int
	}{{[]float64{0, math.Log(3)}, 1}, {[]float64{math.Log(0.2), math.Log(0.3), math.Log(0.5)}, 0}} {
		p := firstProb(c.lp)
		if got := Draw(c.lp, p*0.999); got != c.first {
			t.Errorf("%v: u just below P(first) = %v gives %d, want %d", c.lp, p, got, c.first)
		}
		if got := Draw(c.lp, p+1e-9); got == c.first {
			t.Errorf("%v: u just above P(first) still gives the first state", c.lp)
		}
	}
	// A first state of probability zero is never drawn.
	lp := []float64{math.Inf(-1), 0, math.Inf(-1)}
	if p := firstProb(lp); p != 0 {
		t.Errorf("P(first) = %v for a zero-probability first state", p)
	}
	for _, u := range []float64{0, 0.5, 0.999} {
		if got := Draw(lp, u); got != 1 {
			t.Errorf("Draw(%v, %v) = %d, want the only possible state 1", lp, u, got)
		}
	}
}

// Draw takes the exponentials together (vexp, math.Exp's bits) and keeps
// each for its second pass instead of taking it again: the state it draws
// must be the one the two-pass draw with math.Exp gives, for
// every u, with impossible states, underflowing ones (v − max < −745, whose
// exponential is 0 but which still count as the last possible state) and
// ties, on both sides of drawStack.
func TestDrawTakesEachExponentialOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20000 {
		k := 3 + r.IntN(2*drawStack)
		lp := make([]float64, k)
		for i := range lp {
			switch r.IntN(6) {
			case 0:
				lp[i] = math.Inf(-1)
			case 1:
				lp[i] = -800 - r.Float64()
			case 2:
				lp[i] = 0.5
			default:
				lp[i] = 3 * r.NormFloat64()
			}
		}
		m := math.Inf(-1)
		for _, v := range lp {
			m = max(m, v)
		}
		if math.IsInf(m, -1) {
			continue
		}
		// Uniforms at random and on both sides of each boundary between
		// states (where the count of remainders ≥ 0 must stop exactly).
		us := []float64{0, r.Float64(), 1 - 0x1p-53}
		var tot, part float64
		for _, v := range lp {
			tot += math.Exp(v - m)
		}
		for _, v := range lp {
			part += math.Exp(v - m)
			b := part / tot
			for _, u := range []float64{math.Nextafter(b, 0), b, math.Nextafter(b, 1)} {
				if u >= 0 && u < 1 {
					us = append(us, u)
				}
			}
		}
		for _, u := range us {
			if got, want := Draw(lp, u), drawTwice(lp, m, u); got != want {
				t.Fatalf("trial %d: Draw(%v, %v) = %d, the two-pass draw %d", trial, lp, u, got, want)
			}
		}
	}
}

// BenchmarkIsingGrid10x10 measures single-site updates per second on the
// 10×10 grid with 100 chains (one op = one sweep of every chain); the
// chains=N variants measure how the chains spread over cores (run with
// -test.cpu 1, then 2, in two processes: a -cpu 1,2 list runs b.Loop
// benchmarks at its last value, BENCHMARKS.md), and multispin/chains=N
// the same with Settings.MultiSpin
// (stratified=false is the scalar kernel at 100 chains).
func BenchmarkIsingGrid10x10(b *testing.B) {
	g, _ := ising.Grid(10, 10, false, 0.1, nil)
	ctx := context.Background()
	for _, set := range []Settings{{}, {Stratified: true}} {
		b.Run(fmt.Sprintf("stratified=%v", set.Stratified), func(b *testing.B) {
			s := newSampler(b, g, 100, set, 1)
			b.ReportAllocs()
			for b.Loop() {
				s.Step(ctx)
			}
			b.ReportMetric(float64(100*100*b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
		})
	}
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("chains=%d", n), func(b *testing.B) {
			s := newSampler(b, g, n, Settings{}, 1)
			b.ReportAllocs()
			for b.Loop() {
				s.Step(ctx)
			}
			b.ReportMetric(float64(n*100*b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
		})
	}
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("multispin/chains=%d", n), func(b *testing.B) {
			s := newSampler(b, g, n, Settings{MultiSpin: true}, 1)
			b.ReportAllocs()
			for b.Loop() {
				s.Step(ctx)
			}
			b.ReportMetric(float64(n*100*b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
		})
	}
}

// BenchmarkRBMBlock measures block sweeps on the d = 100, M = 25 RBM.
func BenchmarkRBMBlock(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{100} {
		b.Run(fmt.Sprintf("d=100/M=25/n=%d", n), func(b *testing.B) {
			m, _ := rbm.Random(100, 25, 0.2236, 1, 7)
			s := newSampler(b, m, n, Settings{}, 1)
			b.ReportAllocs()
			for b.Loop() {
				s.Step(ctx)
			}
		})
	}
}

// BenchmarkCategoricalSweep measures site updates of variables of more
// than two states (one op = one sweep of 100 chains): DISCS's 30×30 Potts
// lattice with q = 4 and its 2000 independent variables of 4 states.
func BenchmarkCategoricalSweep(b *testing.B) {
	ctx := context.Background()
	pg, err := potts.Grid(30, 30, false, 4, 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	cat, err := categorical.RandomSimplex(2000, 4, 3)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		m    model.Model
	}{{"potts30x30q4", pg}, {"categorical2000x4", cat}} {
		b.Run(tc.name, func(b *testing.B) {
			s := newSampler(b, tc.m, 100, Settings{}, 1)
			b.ReportAllocs()
			for b.Loop() {
				s.Step(ctx)
			}
			b.ReportMetric(float64(100*tc.m.Dim()*b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
		})
	}
	// As DISCS's metric uses the sampler: the caller reads every chain's
	// state between sweeps (DISCS's distance to a reference state), and
	// only the sweeps are timed (step-µs), so that the time includes the
	// hand-off to workers that were idle meanwhile.
	b.Run("categorical2000x4/read", func(b *testing.B) {
		s := newSampler(b, cat, 100, Settings{}, 1)
		var spent time.Duration
		sum := 0
		for b.Loop() {
			start := time.Now()
			s.Step(ctx)
			spent += time.Since(start)
			for _, v := range s.Current() {
				sum += v
			}
		}
		b.ReportMetric(float64(spent.Microseconds())/float64(b.N), "step-µs")
		if sum < 0 {
			b.Fatal("negative states")
		}
	})
}

// opaque hides a model's other methods, so that Gibbs takes its generic
// path (a tracker's conditional at every site update).
type opaque struct{ c *categorical.Categorical }

func (o opaque) Dim() int                { return o.c.Dim() }
func (o opaque) States(i int) []float64  { return o.c.States(i) }
func (o opaque) LogProb(z []int) float64 { return o.c.LogProb(z) }
func (o opaque) LogConditional(dst []float64, z []int, i int) []float64 {
	return o.c.LogConditional(dst, z, i)
}

// Independent variables (model/categorical) take each conditional once,
// as Draw takes it: the chains draw the same states from the same
// uniforms as the generic path's, sweep by sweep, with one, two, three,
// four and twenty states (above Draw's stack), impossible states among
// them and a variable with one possible state of two.
func TestIndependentVariablesDrawAsDraw(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	simplex := func(k int, zeros int) []float64 {
		p := make([]float64, k)
		var s float64
		for i := range p {
			if i >= zeros {
				p[i] = r.ExpFloat64()
				s += p[i]
			}
		}
		for i := range p {
			p[i] /= s
		}
		r.Shuffle(k, func(a, b int) { p[a], p[b] = p[b], p[a] })
		return p
	}
	type kz struct{ k, zeros int }
	// The layouts: ragged (a variable of 20 states), padded to 4 (the
	// unrolled sweep, or vec.CountAtLeast with AVX-512), to 2 and to 3
	// (the loop over padded thresholds); padded ones whose counts are the
	// states (ident) and not (two states are drawn 1 first, and an
	// impossible state is skipped).
	if !vec.Wide() {
		t.Log("no AVX-512: the sweeps through vec.CountAtLeast are not tested on this machine")
	}
	for _, tc := range []struct {
		vars  []kz
		w     int
		ident bool
	}{
		{[]kz{{1, 0}, {2, 0}, {2, 1}, {3, 1}, {4, 0}, {20, 5}, {4, 2}}, 0, false},
		{[]kz{{4, 0}, {4, 1}, {3, 0}, {4, 0}, {2, 0}, {4, 3}, {4, 0}, {1, 0}}, 4, false},
		{[]kz{{4, 0}, {4, 0}, {3, 0}, {1, 0}, {4, 0}}, 4, true},
		{[]kz{{2, 0}, {2, 1}, {2, 0}, {1, 0}, {2, 0}}, 2, false},
		{[]kz{{3, 0}, {3, 1}, {3, 0}, {2, 0}, {3, 0}}, 3, false},
		// Eight states (the widest padding, vec.CountAtLeastBytes's
		// seven rows), one variable near-deterministic (zeros −1: its
		// other states 10⁻¹² each, intervals of about 9000 uniforms).
		{[]kz{{8, 0}, {8, -1}, {5, 0}, {8, 2}, {7, 0}}, 8, false},
	} {
		var vars []categorical.Variable
		for _, v := range tc.vars {
			st := make([]float64, v.k)
			for i := range st {
				st[i] = float64(i)
			}
			p := simplex(v.k, max(v.zeros, 0))
			if v.zeros < 0 {
				for i := range p {
					p[i] = 1e-12
				}
				p[0] = 1 - float64(v.k-1)*1e-12
			}
			vars = append(vars, categorical.Variable{States: st, Probs: p})
		}
		c, err := categorical.New(vars)
		if err != nil {
			t.Fatal(err)
		}
		// Each variable's draw against Draw's at the 53-bit uniforms on
		// both sides of every threshold, at those where u·Σe equals a
		// partial sum of the probabilities and the neighbouring floats,
		// and at random ones.
		f := newFixedConditionals(c, make([]int, c.Dim()))
		if f.w != tc.w || f.ident != tc.ident {
			t.Fatalf("%v: padded to %d, counts are states %v; want %d, %v", tc.vars, f.w, f.ident, tc.w, tc.ident)
		}
		const one = 1 << uniformBits
		for i := range c.Dim() {
			lp := c.LogConditional(nil, nil, i)
			ms := []uint64{0, one - 1}
			ths := f.thresholds(i)
			if len(ths) > len(lp) {
				t.Fatalf("%v: variable %d: %d intervals for %d states", tc.vars, i, len(ths), len(lp))
			}
			for _, th := range ths[1:] {
				ms = append(ms, th-1, th, min(th+1, one-1))
			}
			var part float64
			for k := range lp {
				part += c.Probs(i)[k]
				for _, u := range []float64{part, math.Nextafter(part, 0), math.Nextafter(part, 1)} {
					if u >= 0 && u < 1 {
						ms = append(ms, uint64(u*one))
					}
				}
			}
			for range 1000 {
				ms = append(ms, r.Uint64N(one))
			}
			for _, m := range ms {
				if got, want := f.draw(i, m), Draw(lp, float64(m)/one); got != want {
					t.Fatalf("%v: variable %d (%d states), m = %d: fixed draw %d, Draw %d", tc.vars, i, len(lp), m, got, want)
				}
			}
		}
		fast, slow := newSampler(t, c, 40, Settings{}, 9), newSampler(t, opaque{c}, 40, Settings{}, 9)
		if fast.fixed == nil || slow.fixed != nil {
			t.Fatalf("fixed conditionals: %v for the categorical model, %v for the opaque one; want the first only", fast.fixed != nil, slow.fixed != nil)
		}
		ctx := context.Background()
		for sweep := range 30 {
			fast.Step(ctx)
			slow.Step(ctx)
			a, b := fast.Current(), slow.Current()
			for k := range a {
				if a[k] != b[k] {
					t.Fatalf("%v, sweep %d, entry %d: %d with fixed conditionals, %d on the generic path", tc.vars, sweep, k, a[k], b[k])
				}
			}
		}
	}
}
