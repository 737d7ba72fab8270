package gof

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// frustratedIsing is a complete graph of n spins with couplings of random
// sign and size U(0.6, 1.5) and no fields: flipping one spin against its
// local field changes p by up to e^(2·1.5(n−1)), so the ratios p(¬z)/p(z)
// of DKSD's score are heavy-tailed.
func frustratedIsing(t testing.TB, n int, seed uint64) *ising.Ising {
	r := rng.NewKey(seed).For(rng.Model).Rand()
	var edges []ising.Edge
	for i := range n {
		for j := i + 1; j < n; j++ {
			c := 0.6 + 0.9*r.Float64()
			if r.IntN(2) == 0 {
				c = -c
			}
			edges = append(edges, ising.Edge{I: i, J: j, Coupling: c})
		}
	}
	m, err := ising.New(n, edges, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The Stein identity where the score is heavy-tailed, by enumeration:
// E_{z∼p} κ(z, z') = 0 for every z' and E_{z,z'∼p} κ(z, z') = 0, relative to
// E|κ| within 1e-10, on a frustrated 6-spin Ising model (ratios up to e^15)
// and a 6×3 RBM with N(0, 2²) weights. So the statistic's null mean is 0
// exactly even where DKSD's bootstrap fails: that failure is the tail, not
// the statistic.
func TestDKSDSteinIdentityHeavyTails(t *testing.T) {
	r, err := rbm.Random(6, 3, 2, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]model.Model{"frustrated ising": frustratedIsing(t, 6, 3), "rbm": r} {
		all, p := enumerated(t, m)
		h, err := dksdMatrix(m, all)
		if err != nil {
			t.Fatal(err)
		}
		n := all.N
		var tot, totAbs, maxRatio float64
		for j := range n {
			var e, scale float64
			for i := range n {
				e += p[i] * h[i*n+j]
				scale += p[i] * math.Abs(h[i*n+j])
			}
			if math.Abs(e) > 1e-10*scale {
				t.Fatalf("%s: E_p κ(z, z'_%d) = %g (E|κ| %g), want 0", name, j, e, scale)
			}
			tot += p[j] * e
			totAbs += p[j] * scale
		}
		if math.Abs(tot) > 1e-10*totAbs {
			t.Fatalf("%s: E κ = %g (E|κ| %g), want 0", name, tot, totAbs)
		}
		pts, err := dksdPoints(m, all)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range pts.Score {
			maxRatio = max(maxRatio, 1-s)
		}
		if maxRatio < 1e3 { // the point of the test: a heavy tail
			t.Fatalf("%s: largest ratio p(¬z)/p(z) %.3g; want a heavy-tailed model", name, maxRatio)
		}
		t.Logf("%s: E κ = %.2g of E|κ| = %.3g; largest ratio %.3g", name, tot, totAbs, maxRatio)
	}
}

// enumerated returns every possible state of m as samples, with its
// probability.
func enumerated(t testing.TB, m model.Model) (*sampler.Samples, []float64) {
	res, err := exact.Enumerate(m, 1<<12)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]int
	var p []float64
	forEachState(m, func(z []int) {
		if lp := m.LogProb(z); !math.IsInf(lp, -1) {
			rows = append(rows, append([]int(nil), z...))
			p = append(p, math.Exp(lp-res.LogZ))
		}
	})
	s := sampler.NewSamples(len(rows), m.Dim())
	for i, z := range rows {
		copy(s.Row(i), z)
	}
	return s, p
}

// The tail bias is what it claims to be: with the expectations taken
// exactly (weights p over every state), dksdTailBias's β matches
// E[κ(z, z') | neither z nor z' in a tail], computed directly from the Stein
// kernel, within 3% (it leaves out terms of the order of the tails'
// probability, here below 0.01), and E κ over the states without a tail is
// far from the exact 0, on a frustrated 8-spin Ising model and a 10×3 RBM
// with N(0, 2²) weights; it is 0 on a 3×3 grid at coupling 0.3, whose ratios
// stay below t = 200.
func TestDKSDTailBiasByEnumeration(t *testing.T) {
	r, err := rbm.Random(10, 3, 2, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	grid, err := ising.Grid(3, 3, false, 0.3, []float64{0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05})
	if err != nil {
		t.Fatal(err)
	}
	const tail = 200.0
	for name, m := range map[string]model.Model{"frustrated ising": frustratedIsing(t, 8, 1), "rbm": r, "grid": grid} {
		all, p := enumerated(t, m)
		pts, err := dksdPoints(m, all)
		if err != nil {
			t.Fatal(err)
		}
		beta, err := dksdTailBias(m, pts, all.Z, tail, p, true)
		if err != nil {
			t.Fatal(err)
		}
		h, err := dksdMatrixOf(context.Background(), pts)
		if err != nil {
			t.Fatal(err)
		}
		n, d := all.N, all.D
		typical := make([]bool, n)
		var pt float64
		inTail := 0
		for i := range n {
			typical[i] = true
			for l := range d {
				if 1-pts.Score[i*d+l] > tail {
					typical[i] = false
				}
			}
			if typical[i] {
				pt += p[i]
			} else {
				inTail++
			}
		}
		var e float64
		for i := range n {
			for j := range n {
				if typical[i] && typical[j] {
					e += p[i] * p[j] * h[i*n+j]
				}
			}
		}
		e /= pt * pt
		t.Logf("%s: P(no tail) %.4f, E[κ | no tail] %.5g, β %.5g", name, pt, e, beta)
		if name == "grid" {
			if beta != 0 || inTail > 0 {
				t.Fatalf("grid: β = %g with %d states in a tail; want 0 and none", beta, inTail)
			}
			continue
		}
		if pt > 0.999 || e < 0.1 {
			t.Fatalf("%s: P(no tail) %g, E[κ | no tail] %g: want a tail that matters", name, pt, e)
		}
		if math.Abs(beta-e) > 0.03*e {
			t.Fatalf("%s: β = %.6g, E[κ | no tail] = %.6g", name, beta, e)
		}
	}
}

// DKSD's level on heavy-tailed models: exact samples from a frustrated
// 10-spin Ising model and a 12×4 RBM with N(0, 2²) weights, n = 200, 500
// bootstrap draws, T = 60 trials each. Their bootstrap rejects the true
// model in about half the trials (the statistic sits at the tail bias); the
// test requires that a trial which rejects while LevelChecked is true be no
// more frequent than a calibrated test's false rejections, α T plus 3
// binomial standard errors √(T α(1−α)) (3 + 5.1 of 60), and that the check flags
// most trials. On the light-tailed 4×4 grid of TestLevelUnderNull
// (ratios below e^2.5 < n) it never flags.
func TestDKSDLevelHeavyTails(t *testing.T) {
	const trials, n, b, alpha = 60, 200, 500, 0.05
	r, err := rbm.Random(12, 4, 2, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	bound := alpha*trials + 3*math.Sqrt(trials*alpha*(1-alpha))
	for name, m := range map[string]model.Model{"frustrated ising": frustratedIsing(t, 10, 1), "rbm": r, "grid": testModel4x4(0.3)} {
		var rej, rejChecked, flagged int
		for tr := range trials {
			s := exactSamples(t, m, n, uint64(7000+tr))
			res, err := DKSD(context.Background(), m, s, Options{B: b, Key: rng.NewKey(uint64(tr))})
			if err != nil {
				t.Fatal(err)
			}
			if res.Reject {
				rej++
			}
			if !res.LevelChecked {
				flagged++
				if res.Warning == "" || !(res.TailBias > TailBiasFactor*res.BootstrapSD) {
					t.Fatalf("%s: unchecked level without its reason: %+v", name, res)
				}
			} else if res.Reject {
				rejChecked++
			}
		}
		t.Logf("%s: %d of %d trials rejected, %d flagged, %d rejected unflagged (bound %.1f)", name, rej, trials, flagged, rejChecked, bound)
		if float64(rejChecked) > bound {
			t.Errorf("%s: %d of %d trials rejected a true model with level_checked true; a calibrated test rejects at most %.1f", name, rejChecked, trials, bound)
		}
		if name == "grid" {
			if flagged > 0 {
				t.Errorf("grid: the tail check flagged %d of %d trials of a light-tailed model", flagged, trials)
			}
		} else if flagged < trials/2 {
			t.Errorf("%s: the tail check flagged only %d of %d trials", name, flagged, trials)
		}
	}
}

// A sample that sits in one mode of a strongly ferromagnetic model (every
// spin up, each flip 2·0.5·7 = 7 in log p below it: ratios e^7 > n from the
// other side) is all typical states: the statistic sits at the tail bias,
// and the result says so in its JSON, with a warning that copes with
// bootstrap draws that do not vary (B = 1).
func TestDKSDTailWarning(t *testing.T) {
	m, err := ising.Complete(8, 0.5, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := sampler.NewSamples(50, 8)
	for i := range s.Z {
		s.Z[i] = 1 // +1
	}
	for _, b := range []int{1, 200} {
		res, err := DKSD(context.Background(), m, s, Options{B: b, Key: rng.NewKey(1)})
		if err != nil {
			t.Fatal(err)
		}
		want := "bootstrap standard deviations"
		if b == 1 {
			want = "the bootstrap draws do not vary"
		}
		if res.LevelChecked || !(res.TailBias > 0) || !strings.Contains(res.Warning, want) {
			t.Fatalf("B = %d: level_checked %v, tail bias %g, warning %q", b, res.LevelChecked, res.TailBias, res.Warning)
		}
		js, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{`"level_checked":false`, `"tail_bias":`, `"warning":"DKSD's level is not trustworthy`} {
			if !strings.Contains(string(js), k) {
				t.Fatalf("B = %d: JSON lacks %s: %s", b, k, js)
			}
		}
		t.Logf("B = %d: statistic %.4g, tail bias %.4g, bootstrap sd %.3g", b, res.Statistic, res.TailBias, res.BootstrapSD)
	}
}

// BKSD's level where DKSD's fails: the same heavy-tailed models and exact
// samples as TestDKSDLevelHeavyTails, and a network with a logical table
// (n = 200, B = 500, T = 60 trials):
// its rejections of the true model stay within α T plus 3 binomial
// standard errors √(T α(1−α)) (3 + 5.1 of 60), with no check to rely on.
func TestBKSDLevelHeavyTails(t *testing.T) {
	const trials, n, b, alpha = 60, 200, 500, 0.05
	r, err := rbm.Random(12, 4, 2, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	bound := alpha*trials + 3*math.Sqrt(trials*alpha*(1-alpha))
	// A network with a logical table (either = tub ∨ lung): states
	// impossible only jointly sit beside every sample, which DKSD's
	// identity cannot have (its tail check flags such sets).
	lg := func(p ...float64) []float64 {
		out := make([]float64, len(p))
		for i, x := range p {
			out[i] = math.Log(x)
		}
		return out
	}
	logical, err := factorgraph.New([]int{2, 2, 2, 2}, []factorgraph.Factor{
		{Scope: []int{0}, LogTable: lg(0.9, 0.1)},
		{Scope: []int{1}, LogTable: lg(0.8, 0.2)},
		{Scope: []int{0, 1, 2}, LogTable: lg(1, 0, 0, 1, 0, 1, 0, 1)},
		{Scope: []int{2, 3}, LogTable: lg(0.95, 0.05, 0.02, 0.98)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]model.Model{"frustrated ising": frustratedIsing(t, 10, 1), "rbm": r, "logical": logical} {
		rej := 0
		for tr := range trials {
			s := exactSamples(t, m, n, uint64(7000+tr))
			res, err := BKSD(context.Background(), m, s, Options{B: b, Key: rng.NewKey(uint64(tr))})
			if err != nil {
				t.Fatal(err)
			}
			if !res.LevelChecked {
				t.Fatalf("%s: level_checked false: %+v", name, res)
			}
			if res.Reject {
				rej++
			}
		}
		t.Logf("%s: BKSD rejected %d of %d trials (bound %.1f)", name, rej, trials, bound)
		if float64(rej) > bound {
			t.Errorf("%s: BKSD rejected a true model in %d of %d trials; a calibrated test rejects at most %.1f", name, rej, trials, bound)
		}
	}
}
