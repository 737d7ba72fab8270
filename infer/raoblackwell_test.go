package infer

import (
	"context"
	"flag"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/model/uai"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// threeStates is a Markov network of three variables with 3, 2 and 4
// states: a chain of pairwise factors and a unary one with a zero.
const threeStates = `MARKOV
3
3 2 4
3
1 0
2 0 1
2 1 2
3
 1.0 0.0 2.5
6
 0.7 1.3
 2.0 0.4
 1.1 0.9
8
 0.3 1.0 2.0 0.5
 1.5 0.2 0.8 1.9
`

// TestConditionalsTable checks every entry of the table of conditionals
// against p(z_i = s | z_−i) computed from log p* alone (each state of
// variable i evaluated, normalised), on random rows of models with two
// states (Ising), more (a UAI network with a zero), and an RBM (hidden
// units summed out).
func TestConditionalsTable(t *testing.T) {
	g, err := ising.Grid(3, 3, false, 0.6, []float64{0.1, -0.2, 0.3, 0, 0.5, -0.4, 0.2, 0.1, -0.3})
	if err != nil {
		t.Fatal(err)
	}
	fg, err := uai.Read(strings.NewReader(threeStates))
	if err != nil {
		t.Fatal(err)
	}
	r, err := rbm.Random(7, 3, 1, 0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]model.Model{"ising": g, "uai": fg, "rbm": r} {
		t.Run(name, func(t *testing.T) {
			tr, err := exact.For(m)
			if err != nil {
				t.Fatal(err)
			}
			// Rows drawn exactly, so that every row has positive
			// probability.
			const rows = 50
			s := &sampler.Samples{N: rows, D: m.Dim(), Z: make([]int, rows*m.Dim())}
			tr.Sample(s.Z, rng.NewKey(5).For(rng.Test).Rand())
			tab, err := conditionals(context.Background(), m, s)
			if err != nil {
				t.Fatal(err)
			}
			z := make([]int, m.Dim())
			for r := range rows {
				for i := range m.Dim() {
					copy(z, s.Row(r))
					k := len(m.States(i))
					lp := make([]float64, k)
					for st := range k {
						z[i] = st
						lp[st] = m.LogProb(z)
					}
					normalizeLog(lp)
					for st := range k {
						var got float64
						switch {
						case k == 2 && st == 0:
							got = 1 - tab.column(tab.col[i])[r]
						case k == 2:
							got = tab.column(tab.col[i])[r]
						default:
							got = tab.column(tab.col[i] + st)[r]
						}
						if math.Abs(got-lp[st]) > 1e-12 {
							t.Fatalf("row %d: p(z%d = %d | rest) = %v, want %v", r, i, st, got, lp[st])
						}
					}
				}
			}
		})
	}
}

// An independent model's conditionals are its marginals: Rao–Blackwellised
// estimates are exact whatever the draws, and the frequencies are not;
// Frequencies gives the counts exactly as before.
func TestRaoBlackwellIndependent(t *testing.T) {
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{0, 1, 2}, Probs: []float64{0.2, 0.5, 0.3}},
		{States: []float64{-1, 1}, Probs: []float64{0.9, 0.1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := sampler.Single("gibbs", nil, 1)
	spec := Spec{Pipeline: p, N: 4, Keep: Keep{Warmup: 10, Draws: 50}, Key: rng.NewKey(3)}
	out, err := Run(context.Background(), cat, spec)
	if err != nil {
		t.Fatal(err)
	}
	if out.Diagnostics.Estimates != "rao-blackwell" {
		t.Fatalf("estimates %q, want rao-blackwell", out.Diagnostics.Estimates)
	}
	want := [][]float64{{0.2, 0.5, 0.3}, {0.9, 0.1}}
	for i, w := range want {
		for s, v := range w {
			if math.Abs(out.Marginals[i][s]-v) > 1e-12 {
				t.Errorf("Rao–Blackwellised p(z%d = %d) = %v, want %v", i, s, out.Marginals[i][s], v)
			}
		}
	}
	spec.Estimates = Frequencies
	fr, err := Run(context.Background(), cat, spec)
	if err != nil {
		t.Fatal(err)
	}
	counts := sampler.Marginals(cat, fr.Samples)
	differs := false
	for i := range counts {
		for s := range counts[i] {
			if fr.Marginals[i][s] != counts[i][s] {
				t.Errorf("frequencies: p(z%d = %d) = %v, counts give %v", i, s, fr.Marginals[i][s], counts[i][s])
			}
			differs = differs || math.Abs(counts[i][s]-want[i][s]) > 1e-9
		}
	}
	if !differs {
		t.Error("200 draws matched the marginals exactly: the test cannot tell the estimators apart")
	}
	if fr.Diagnostics.Estimates != "frequencies" {
		t.Errorf("estimates %q, want frequencies", fr.Diagnostics.Estimates)
	}
}

// Clopper–Pearson intervals: the closed forms at x = 0 and x = n, and
// coverage of at least the nominal 90% for every proportion on a grid,
// computed exactly from the binomial distribution (the interval's
// guarantee, which is why it was chosen).
func TestClopperPearson(t *testing.T) {
	for _, n := range []float64{10, 57, 200} {
		lo, hi := clopperPearson(0, n, 0.9)
		if want := 1 - math.Pow(0.05, 1/n); lo != 0 || math.Abs(hi-want) > 1e-10 {
			t.Errorf("x = 0, n = %v: [%v, %v], want [0, %v]", n, lo, hi, want)
		}
		lo, hi = clopperPearson(n, n, 0.9)
		if want := math.Pow(0.05, 1/n); hi != 1 || math.Abs(lo-want) > 1e-10 {
			t.Errorf("x = n = %v: [%v, %v], want [%v, 1]", n, lo, hi, want)
		}
		for p := 0.0005; p < 1; p += 0.0137 {
			b := distuv.Binomial{N: n, P: p}
			var cov float64
			for x := 0.0; x <= n; x++ {
				if lo, hi := clopperPearson(x, n, 0.9); lo <= p && p <= hi {
					cov += b.Prob(x)
				}
			}
			if cov < 0.9-1e-9 {
				t.Errorf("n = %v, p = %.4f: coverage %.4f below 0.9", n, p, cov)
			}
		}
	}
}

// A rare state's interval: a variable that never left its common state in
// the draws still gets an interval of positive width that reaches the
// rare state's side, and the run says so.
func TestRareStateInterval(t *testing.T) {
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{-1, 1}, Probs: []float64{0.9995, 0.0005}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.0004, 0.5, 0.4996}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := sampler.Single("gibbs", nil, 1)
	for _, est := range []Estimates{RaoBlackwell, Frequencies} {
		out, err := Run(context.Background(), cat, Spec{Pipeline: p, N: 4, Keep: Keep{Warmup: 10, Draws: 50}, Key: rng.NewKey(1), Estimates: est})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"z0", "z1=0"} {
			q := out.Diagnostics.Quantity(name)
			if !q.Rare || !(q.CI90[1] > q.CI90[0]) {
				t.Errorf("%v: %s: rare %v, interval [%v, %v]: want a rare state with an interval of positive width", est, name, q.Rare, q.CI90[0], q.CI90[1])
			}
			// The MCSE says as much as the interval (clipping to the
			// possible values only narrows the interval).
			if 2*1.645*q.MCSE < (q.CI90[1]-q.CI90[0])*(1-1e-12) || q.MCSEMean != q.MCSE {
				t.Errorf("%v: %s: MCSE %v (mcse_mean %v) with the interval [%v, %v]: want at least its half-width over 1.645", est, name, q.MCSE, q.MCSEMean, q.CI90[0], q.CI90[1])
			}
		}
		// 200 draws, no visit: the upper end of the rare state's
		// probability is 1 − 0.05^(1/200) = 0.0149 for independent
		// draws, mapped to the value −1 + 2p for z0.
		if q := out.Diagnostics.Quantity("z0"); q.CI90[1] < -1+2*0.0149-1e-3 {
			t.Errorf("%v: z0's interval [%v, %v] does not reach the rare state's side", est, q.CI90[0], q.CI90[1])
		}
		if !strings.Contains(strings.Join(out.Diagnostics.Warnings, "\n"), "seen fewer than 10 times") {
			t.Errorf("%v: no rare-state warning in %q", est, out.Diagnostics.Warnings)
		}
	}
}

// rbSeeds sets the seeds of TestRaoBlackwellGain, which is a measurement,
// not a check: 0 (the default) skips it. EXPERIMENTS.md ("Error bars")
// quotes go test ./infer -run RaoBlackwellGain -v -timeout 0 -args -rb.seeds=100.
var rbSeeds = flag.Int("rb.seeds", 0, "seeds per model of TestRaoBlackwellGain (0: skip)")

// TestRaoBlackwellGain measures, for the default preset at 200 samples on
// the suite's kinds of targets, the MSE of the means (against exact
// means) and the pooled coverage of the 90% intervals of the
// Rao–Blackwellised estimates and of the frequencies, on the same draws.
func TestRaoBlackwellGain(t *testing.T) {
	if *rbSeeds <= 0 {
		t.Skip("a measurement: -args -rb.seeds=N runs it")
	}
	grid := func(n int, j float64, seed uint64) model.Model {
		r := rng.NewKey(seed).For(rng.Model).Rand()
		f := make([]float64, n*n)
		for i := range f {
			f[i] = -0.3 + 0.6*r.Float64()
		}
		g, err := ising.Grid(n, n, false, j, f)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	rb := func(d, m int, w float64, seed uint64) model.Model {
		r, err := rbm.Random(d, m, w, 1, seed)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	models := []struct {
		name string
		m    model.Model
	}{
		{"grid4 J=0.3", grid(4, 0.3, 1)},
		{"grid10 J=0.1", grid(10, 0.1, 1)},
		{"grid8 J=0.45", grid(8, 0.45, 1)},
		{"rbm d=50 M=10 W~N(0,0.05)", rb(50, 10, math.Sqrt(0.05), 1)},
		{"rbm d=20 M=6 W~N(0,1.5²)", rb(20, 6, 1.5, 1)},
		{"rbm d=16 M=8 W~N(0,1.5²) seed 6", rb(16, 8, 1.5, 6)},
	}
	for _, mc := range models {
		tr, err := exact.For(mc.m)
		if err != nil {
			t.Fatal(err)
		}
		want := tr.Result().Means
		var mse [2][]float64
		var cov [2][]float64
		for seed := range *rbSeeds {
			p, _ := Preset("default")
			out, err := Run(context.Background(), mc.m, SpecFor("default", p, 200, rng.NewKey(uint64(seed)+1)))
			if err != nil {
				t.Fatal(err)
			}
			// The same draws counted: Diagnose without the table.
			freq, err := Diagnose(context.Background(), mc.m, out)
			if err != nil {
				t.Fatal(err)
			}
			fmeans := sampler.Means(mc.m, sampler.Marginals(mc.m, out.Samples))
			for k, r := range []struct {
				means []float64
				dg    *Diagnostics
			}{{out.Means, out.Diagnostics}, {fmeans, freq}} {
				var e, in, tot float64
				for i, w := range want {
					e += (r.means[i] - w) * (r.means[i] - w)
				}
				for _, q := range r.dg.Quantities {
					if i, s, ok := variableState(mc.m, q.Name); ok && s < 0 {
						tot++
						if q.CI90[0] <= want[i] && want[i] <= q.CI90[1] {
							in++
						}
					}
				}
				mse[k] = append(mse[k], e/float64(len(want)))
				cov[k] = append(cov[k], in/tot)
			}
		}
		mr, sr := meanSD(mse[0])
		mf, sf := meanSD(mse[1])
		cr, _ := meanSD(cov[0])
		cf, _ := meanSD(cov[1])
		n := math.Sqrt(float64(*rbSeeds))
		t.Logf("%-32s MSE rao-blackwell %.3g ± %.2g, frequencies %.3g ± %.2g (ratio %.2f); coverage %.3f and %.3f",
			mc.name, mr, sr/n, mf, sf/n, mf/mr, cr, cf)
	}
}

// rareWidening on a model whose answer is known: z0 never leaves +1 in
// the draws (its state −1 is rare), z1 is coupled to it with J = 0.8 and
// field 0.3, z2 is independent. z1's extra variance is Δ²·p̄(1 − p̄)/n with
// Δ = |σ(2(0.3 + 0.8)) − σ(2(0.3 − 0.8))| and p̄ the Clopper–Pearson upper
// end of 0 visits in the n draws; z2's is 0.
func TestRareWidening(t *testing.T) {
	m, err := ising.New(3, []ising.Edge{{I: 0, J: 1, Coupling: 0.8}}, []float64{4, 0.3, -0.2})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	s := &sampler.Samples{N: n, D: 3, Z: make([]int, 3*n)}
	r := rng.NewKey(2).For(rng.Test).Rand()
	for row := range n {
		s.Z[3*row] = 1
		s.Z[3*row+1] = r.IntN(2)
		s.Z[3*row+2] = r.IntN(2)
	}
	w, ok, err := rareWidening(context.Background(), m, s, n)
	if err != nil || !ok {
		t.Fatalf("rareWidening: %v, %v", ok, err)
	}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-2*x)) }
	_, pbar := clopperPearson(0, n, 0.9)
	delta := math.Abs(sig(0.3+0.8) - sig(0.3-0.8))
	want := delta * delta * pbar * (1 - pbar) / n
	if math.Abs(w[1]-want) > 1e-12 || w[2] != 0 || w[0] != 0 {
		t.Errorf("widening %v; want [0 %v 0]", w, want)
	}
}
