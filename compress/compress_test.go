package compress_test

import (
	"context"
	stderrors "errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dstein/dstein/compress"
	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/stein"
)

// grid returns the prototype model: a 4×4 grid, J = 0.35, fields
// U(−0.3, 0.3).
func grid(t testing.TB) *ising.Ising {
	t.Helper()
	r := rng.NewKey(11).For(rng.Model).Rand()
	f := make([]float64, 16)
	for i := range f {
		f[i] = -0.3 + 0.6*r.Float64()
	}
	g, err := ising.Grid(4, 4, false, 0.35, f)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// reversed returns the exact sampler of the grid g with its fields
// reversed: a deliberately wrong model for g's draws.
func reversed(t testing.TB, g *ising.Ising) *exact.Enumerated {
	t.Helper()
	f := append([]float64(nil), g.Fields()...)
	for i := range f {
		f[i] = -f[i]
	}
	flip, err := ising.Grid(4, 4, false, 0.35, f)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := exact.NewEnumerated(flip, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ef
}

func draws(t testing.TB, e *exact.Enumerated, n int, seed uint64) *sampler.Samples {
	d := len(e.Result().Means)
	t.Helper()
	s := sampler.NewSamples(n, d)
	r := rng.NewKey(seed).For(rng.Test).Rand()
	for i := range n {
		e.Sample(s.Z[i*s.D:(i+1)*s.D], r)
	}
	return s
}

// errors returns the squared error of the means and the RMSE of the pair
// moments E[z_i z_j] of the points against the exact answers.
func errors(m model.Model, s *sampler.Samples, means []float64, pairs *exact.Pairs) (mse, pairRMSE float64) {
	d := s.D
	v := func(i, l int) float64 { return m.States(l)[s.Z[i*d+l]] }
	for l := range d {
		var mu float64
		for i := range s.N {
			mu += v(i, l)
		}
		mu /= float64(s.N)
		mse += (mu - means[l]) * (mu - means[l]) / float64(d)
	}
	np := 0
	for a := range d {
		for b := a + 1; b < d; b++ {
			var mom float64
			for i := range s.N {
				mom += v(i, a) * v(i, b)
			}
			mom /= float64(s.N)
			diff := mom - pairs.Moment(a, b)
			pairRMSE += diff * diff
			np++
		}
	}
	return mse, math.Sqrt(pairRMSE / float64(np))
}

func meanSE(x []float64) (float64, float64) {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return m, math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
}

// Herding 50 points from 5000 exact draws represents the grid better than
// 50 exact draws, on the means and on the pair moments. The bar: the
// herded error's mean over 12 seeds plus 3 of its standard errors (across
// seeds) is below the error of 50 independent draws, the latter taken
// from the same seeds' first 50 candidates (its mean plus 0, so the
// comparison is one-sided against herding). The prototype measured
// 0.18× on the means and 0.37× on the pairs.
func TestHerdBeatsIndependentDraws(t *testing.T) {
	if testing.Short() {
		t.Skip("12 herding runs over 5000 candidates")
	}
	g := grid(t)
	e, err := exact.NewEnumerated(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := exact.PairsFor(context.Background(), g, memlimit.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	const n, cands, seeds = 50, 5000, 12
	var hm, hp, im, ip []float64
	for seed := range uint64(seeds) {
		c := draws(t, e, cands, seed)
		res, err := compress.Herd(context.Background(), c, nil, n, compress.Options{Ell: 4})
		if err != nil {
			t.Fatal(err)
		}
		a, b := errors(g, res.Points, e.Result().Means, pairs)
		hm, hp = append(hm, a), append(hp, b)
		first := &sampler.Samples{N: n, D: c.D, Z: c.Z[:n*c.D]}
		a, b = errors(g, first, e.Result().Means, pairs)
		im, ip = append(im, a), append(ip, b)
	}
	hmM, hmSE := meanSE(hm)
	hpM, hpSE := meanSE(hp)
	imM, _ := meanSE(im)
	ipM, _ := meanSE(ip)
	t.Logf("herding: MSE of the means %.3g ± %.2g (%.2f× i.i.d. %.3g), pair RMSE %.3g ± %.2g (%.2f× i.i.d. %.3g)", hmM, hmSE, hmM/imM, imM, hpM, hpSE, hpM/ipM, ipM)
	if hmM+3*hmSE >= imM {
		t.Errorf("herding's MSE of the means %.3g ± %.2g is not below i.i.d.'s %.3g", hmM, hmSE, imM)
	}
	if hpM+3*hpSE >= ipM {
		t.Errorf("herding's pair RMSE %.3g ± %.2g is not below i.i.d.'s %.3g", hpM, hpSE, ipM)
	}
}

// Every greedy step of Stein thinning takes the candidate that makes the
// chosen set's KSD² smallest, checked by brute force over the candidates
// (KSD² of the set with each candidate added, from compress.KSD2), on a
// small candidate set with repeats.
func TestSteinThinIsGreedyKSD(t *testing.T) {
	g := grid(t)
	e, err := exact.NewEnumerated(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := draws(t, e, 40, 3)
	const n, ell = 6, 1.0
	res, err := compress.SteinThin(context.Background(), g, c, n, compress.Options{Ell: ell})
	if err != nil {
		t.Fatal(err)
	}
	chosen := sampler.NewSamples(0, c.D)
	for step := range n {
		best, bestV := -1, math.Inf(1)
		for i := range c.N {
			trial := &sampler.Samples{N: chosen.N + 1, D: c.D, Z: append(append([]int(nil), chosen.Z...), c.Z[i*c.D:(i+1)*c.D]...)}
			v, err := compress.KSD2(g, trial, ell)
			if err != nil {
				t.Fatal(err)
			}
			if v < bestV-1e-12 {
				best, bestV = i, v
			}
		}
		got := res.Index[step]
		gotSet := &sampler.Samples{N: chosen.N + 1, D: c.D, Z: append(append([]int(nil), chosen.Z...), c.Z[got*c.D:(got+1)*c.D]...)}
		gotV, _ := compress.KSD2(g, gotSet, ell)
		if gotV > bestV+1e-12 {
			t.Fatalf("step %d: chose row %d (KSD² %.6g), row %d gives %.6g", step, got, gotV, best, bestV)
		}
		chosen = gotSet
	}
}

// The entropic regulariser shifts each step by λ(t+1) log p*(x): at λ = 0
// Stein thinning is unchanged, and at a λ large enough to dominate the
// kernel every point is the most probable candidate state.
func TestSteinThinRegularizer(t *testing.T) {
	g := grid(t)
	e, err := exact.NewEnumerated(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := draws(t, e, 300, 5)
	plain, _ := compress.SteinThin(context.Background(), g, c, 10, compress.Options{})
	zero, _ := compress.SteinThin(context.Background(), g, c, 10, compress.Options{Regularize: 0})
	if !slices.Equal(plain.Index, zero.Index) {
		t.Error("λ = 0 changed Stein thinning")
	}
	best, bestLP := 0, math.Inf(-1)
	for i := range c.N {
		if lp := g.LogProb(c.Row(i)); lp > bestLP+1e-12 {
			best, bestLP = i, lp
		}
	}
	strong, err := compress.SteinThin(context.Background(), g, c, 5, compress.Options{Regularize: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	for step, i := range strong.Index {
		if !slices.Equal(c.Row(i), c.Row(best)) {
			t.Fatalf("step %d chose log p* %g, the best candidate has %g", step, g.LogProb(c.Row(i)), bestLP)
		}
	}
	reg, _ := compress.SteinThin(context.Background(), g, c, 10, compress.Options{Regularize: 0.1})
	if slices.Equal(plain.Index, reg.Index) {
		t.Error("λ = 0.1 changed nothing")
	}
	if _, err := compress.SteinThin(context.Background(), g, c, 10, compress.Options{Regularize: -1}); err == nil {
		t.Error("λ < 0 accepted")
	}
}

// KSD2 agrees with the mean of the Stein kernel over all pairs, and its
// off-diagonal part (the U-statistic, whose expectation is the squared
// discrepancy itself) is near zero for exact draws and far from it for
// draws of another model (the grid with its fields reversed). The bar: the
// wrong model's U-statistic exceeds the right one's by more than 5 of the
// right one's standard errors, estimated from the spread over 8 seeds.
func TestKSD2(t *testing.T) {
	g := grid(t)
	e, _ := exact.NewEnumerated(g, 0)
	ef := reversed(t, g)
	k, _ := stein.NewKernel(16, 1)
	ustat := func(s *sampler.Samples) float64 {
		v, err := compress.KSD2(g, s, 1)
		if err != nil {
			t.Fatal(err)
		}
		pts, _ := stein.Prepare(g, s.Z, s.N)
		var all, diag float64
		for i := range s.N {
			diag += k.Eval(pts, i, pts, i)
			for j := range s.N {
				all += k.Eval(pts, i, pts, j)
			}
		}
		n := float64(s.N)
		if math.Abs(all/(n*n)-v) > 1e-12*math.Abs(v) {
			t.Errorf("KSD2 %v, direct mean %v", v, all/(n*n))
		}
		return (all - diag) / (n * (n - 1))
	}
	var good, bad []float64
	for seed := range uint64(8) {
		good = append(good, ustat(draws(t, e, 300, seed)))
		bad = append(bad, ustat(draws(t, ef, 300, seed)))
	}
	gm, gse := meanSE(good)
	bm, _ := meanSE(bad)
	t.Logf("KSD² U-statistic, 300 exact draws: %.3g ± %.2g; 300 draws of the reversed-field grid: %.3g", gm, gse, bm)
	if !(bm-gm > 5*gse) {
		t.Errorf("the U-statistic does not separate the right model's draws (%.3g ± %.2g) from the wrong one's (%.3g)", gm, gse, bm)
	}
}

func TestBadInput(t *testing.T) {
	g := grid(t)
	c := sampler.NewSamples(3, 16)
	ctx := context.Background()
	for name, f := range map[string]func() error{
		"n 0": func() error { _, err := compress.Herd(ctx, c, nil, 0, compress.Options{}); return err },
		"no cands": func() error {
			_, err := compress.Herd(ctx, sampler.NewSamples(0, 16), nil, 2, compress.Options{})
			return err
		},
		"weights":    func() error { _, err := compress.Herd(ctx, c, []float64{1, 2}, 2, compress.Options{}); return err },
		"neg weight": func() error { _, err := compress.Herd(ctx, c, []float64{1, -1, 1}, 2, compress.Options{}); return err },
		"zero mass":  func() error { _, err := compress.Herd(ctx, c, []float64{0, 0, 0}, 2, compress.Options{}); return err },
		"ell":        func() error { _, err := compress.SteinThin(ctx, g, c, 2, compress.Options{Ell: -1}); return err },
		"dim": func() error {
			_, err := compress.SteinThin(ctx, g, sampler.NewSamples(3, 5), 2, compress.Options{})
			return err
		},
		// More points than memory can hold: refused before anything is
		// allocated for them.
		"n huge herd": func() error { _, err := compress.Herd(ctx, c, nil, math.MaxInt, compress.Options{}); return err },
		"n huge stein": func() error {
			_, err := compress.SteinThin(ctx, g, c, compress.MaxPoints(16)+1, compress.Options{})
			return err
		},
	} {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Herding and Stein thinning of 100 points from 5000 exact draws of the
// 4×4 grid, and Stein weights on 1000 of them.
func BenchmarkCompress(b *testing.B) {
	g := grid(b)
	e, err := exact.NewEnumerated(g, 0)
	if err != nil {
		b.Fatal(err)
	}
	c := draws(b, e, 5000, 1)
	ctx := context.Background()
	b.Run("herd", func(b *testing.B) {
		for b.Loop() {
			if _, err := compress.Herd(ctx, c, nil, 100, compress.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("weights-1000", func(b *testing.B) {
		small := &sampler.Samples{N: 1000, D: c.D, Z: c.Z[:1000*c.D]}
		for b.Loop() {
			if _, err := compress.SteinWeights(ctx, g, small, compress.Options{}, 5000); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stein", func(b *testing.B) {
		for b.Loop() {
			if _, err := compress.SteinThin(ctx, g, c, 100, compress.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Every herding step takes the candidate that maximises μ(x) − (1/(t+1))
// Σ_{s≤t} k(x, x_s), recomputed by brute force over the draws, on binary
// states (the bit-packed path) and on categorical ones (state indices).
func TestHerdIsGreedy(t *testing.T) {
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{0, 1, 2, 3}, Probs: []float64{0.13, 0.41, 0.29, 0.17}},
		{States: []float64{-1, 1}, Probs: []float64{0.37, 0.63}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.52, 0.07, 0.41}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]model.Model{"grid": grid(t), "categorical": cat} {
		e, err := exact.NewEnumerated(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		c := draws(t, e, 60, 9)
		d := c.D
		const n, ell = 8, 1.5
		res, err := compress.Herd(context.Background(), c, nil, n, compress.Options{Ell: ell})
		if err != nil {
			t.Fatal(err)
		}
		k := func(i, j int) float64 {
			h := 0
			for l := range d {
				if c.Z[i*d+l] != c.Z[j*d+l] {
					h++
				}
			}
			return math.Exp(-float64(h) / ell)
		}
		obj := func(i int, chosen []int) float64 {
			var mu, s float64
			for j := range c.N {
				mu += k(i, j)
			}
			for _, j := range chosen {
				s += k(i, j)
			}
			return mu/float64(c.N) - s/float64(len(chosen)+1)
		}
		var chosen []int
		for step, got := range res.Index {
			best := math.Inf(-1)
			for i := range c.N {
				best = max(best, obj(i, chosen))
			}
			if v := obj(got, chosen); v < best-1e-12 {
				t.Fatalf("%s, step %d: chose row %d with objective %.6g; the best is %.6g", name, step, got, v, best)
			}
			chosen = append(chosen, got)
		}
	}
}

// measure runs TestMeasureCompression and TestMeasurePTHerding, which print the numbers of the
// README's "Representative points": go test ./compress -run Measure -v
// -args -compress.measure (about 15 s).
var measure = flag.Bool("compress.measure", false, "print herding and Stein thinning against i.i.d. draws on the 4×4 grid")

func TestMeasureCompression(t *testing.T) {
	if !*measure {
		t.Skip("a measurement, not a check: -args -compress.measure")
	}
	g := grid(t)
	e, _ := exact.NewEnumerated(g, 0)
	pairs, _ := exact.PairsFor(context.Background(), g, memlimit.Budget{})
	for _, n := range []int{50, 200} {
		type acc struct{ m, p float64 }
		res := map[string]*acc{}
		const seeds = 10
		for seed := range uint64(seeds) {
			c := draws(t, e, 5000, seed)
			add := func(name string, s *sampler.Samples) {
				a, b := errors(g, s, e.Result().Means, pairs)
				if res[name] == nil {
					res[name] = &acc{}
				}
				res[name].m += a / seeds
				res[name].p += b / seeds
			}
			add("iid", &sampler.Samples{N: n, D: 16, Z: c.Z[:n*16]})
			for _, ell := range []float64{1, 4, 16} {
				h, err := compress.Herd(context.Background(), c, nil, n, compress.Options{Ell: ell})
				if err != nil {
					t.Fatal(err)
				}
				add(fmt.Sprintf("herd ℓ=%g", ell), h.Points)
				st, err := compress.SteinThin(context.Background(), g, c, n, compress.Options{Ell: ell})
				if err != nil {
					t.Fatal(err)
				}
				add(fmt.Sprintf("stein ℓ=%g", ell), st.Points)
				sr, err := compress.SteinThin(context.Background(), g, c, n, compress.Options{Ell: ell, Regularize: 1 / float64(n)})
				if err != nil {
					t.Fatal(err)
				}
				add(fmt.Sprintf("stein-reg ℓ=%g", ell), sr.Points)
			}
		}
		for _, k := range []string{"iid", "herd ℓ=1", "herd ℓ=4", "herd ℓ=16", "stein ℓ=1", "stein ℓ=4", "stein ℓ=16", "stein-reg ℓ=1", "stein-reg ℓ=4", "stein-reg ℓ=16"} {
			t.Logf("n=%d %-10s MSE of the means %.3g (%.2f× i.i.d.), pair RMSE %.3g (%.2f×)", n, k, res[k].m, res[k].m/res["iid"].m, res[k].p, res[k].p/res["iid"].p)
		}
	}
}

// Stein importance weights (at their default ℓ = d) repair draws of the
// wrong model: 1000 draws of the grid with its fields reversed, weighted
// against the right grid, estimate its means with less than half the
// error of the unweighted draws. The bar: over 3 seeds, the weighted
// RMSE's mean plus 3 standard errors is below half the unweighted RMSE's
// mean. The weights are a distribution, their KSD² is below the unweighted
// draws', and the solver converged (Frank–Wolfe gap ≤ 1% of KSD²) within
// its iterations.
func TestSteinWeightsRepairWrongDraws(t *testing.T) {
	g := grid(t)
	e, _ := exact.NewEnumerated(g, 0)
	ef := reversed(t, g)
	means := e.Result().Means
	var weighted, plain []float64
	for seed := range uint64(3) {
		c := draws(t, ef, 1000, seed)
		w, err := compress.SteinWeights(context.Background(), g, c, compress.Options{}, 3000)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, v := range w.W {
			if v < 0 {
				t.Fatalf("negative weight %v", v)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-9 || !(w.KSD2 < w.Unweighted) || w.Gap > 1e-2*w.KSD2 {
			t.Errorf("seed %d: Σw = %v, KSD² %.4g (unweighted %.4g), gap %.3g after %d iterations", seed, sum, w.KSD2, w.Unweighted, w.Gap, w.Iterations)
		}
		var ew, eu float64
		for l := range c.D {
			var mw, mu float64
			for i := range c.N {
				v := g.States(l)[c.Z[i*c.D+l]]
				mw += w.W[i] * v
				mu += v / float64(c.N)
			}
			ew += (mw - means[l]) * (mw - means[l]) / float64(c.D)
			eu += (mu - means[l]) * (mu - means[l]) / float64(c.D)
		}
		weighted, plain = append(weighted, math.Sqrt(ew)), append(plain, math.Sqrt(eu))
		t.Logf("seed %d: %d distinct states, %d iterations, weight ESS %.0f; RMSE of the means %.4f weighted, %.4f unweighted", seed, w.Distinct, w.Iterations, w.ESS, math.Sqrt(ew), math.Sqrt(eu))
	}
	wm, wse := meanSE(weighted)
	pm, _ := meanSE(plain)
	if wm+3*wse >= pm/2 {
		t.Errorf("weighted RMSE %.4f ± %.4f is not below half the unweighted %.4f", wm, wse, pm)
	}
}

// Stein weights on more distinct states than MaxWeightStates are refused
// with an error that says so and unwraps to a *memlimit.Exceeded (the cap
// is one of memory: commands exit with the resource code).
func TestSteinWeightsCapIsAResourceRefusal(t *testing.T) {
	g := grid(t)
	n := compress.MaxWeightStates + 1
	c := sampler.NewSamples(n, 16)
	for i := range n { // n distinct states: the binary digits of i
		for l := range 16 {
			c.Z[i*16+l] = i >> l & 1
		}
	}
	_, err := compress.SteinWeights(context.Background(), g, c, compress.Options{}, 10)
	var ex *memlimit.Exceeded
	var tm *compress.TooManyStates
	if !stderrors.As(err, &ex) || !stderrors.As(err, &tm) || tm.Distinct != n || !strings.Contains(err.Error(), "Stein weights take at most 3000") {
		t.Fatalf("SteinWeights on %d distinct states: %v", n, err)
	}
}
