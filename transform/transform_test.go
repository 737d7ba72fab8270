package transform

import (
	"math"
	"sort"
	"testing"

	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
)

func TestEvenPartition(t *testing.T) {
	n := Normal{}
	for K := 1; K <= 9; K++ {
		tr, err := New(nil, []int{K})
		if err != nil {
			t.Fatal(err)
		}
		for s := range K {
			lo, hi := tr.Bin(0, s)
			p := n.CDF(hi) - n.CDF(lo)
			if math.Abs(p-1/float64(K)) > 1e-14 {
				t.Errorf("K=%d bin %d has base probability %v; want %v", K, s, p, 1/float64(K))
			}
		}
		c := tr.Cuts(0)
		for j := range c {
			if c[j] != -c[len(c)-1-j] {
				t.Errorf("K=%d cuts are not symmetric: %v", K, c)
			}
		}
	}
	tr, _ := New(nil, []int{2})
	if c := tr.Cuts(0); len(c) != 1 || c[0] != 0 {
		t.Fatalf("two states should cut at 0 (sign(x)), got %v", c)
	}
}

func TestGammaMatchesBins(t *testing.T) {
	for _, K := range []int{1, 2, 3, 5, 8, 13, 100} {
		tr, _ := New(nil, []int{K})
		for s := range K {
			lo, hi := tr.Bin(0, s)
			inside := []float64{math.Nextafter(hi, math.Inf(-1))}
			if !math.IsInf(lo, 0) {
				inside = append(inside, lo)
			} else {
				inside = append(inside, -1e300)
			}
			for _, x := range inside {
				if got := tr.State(0, x); got != s {
					t.Errorf("K=%d: Γ(%v) = %d; want bin %d = [%v, %v)", K, x, got, s, lo, hi)
				}
			}
		}
	}
	tr, _ := New(nil, []int{2, 2})
	if z := tr.Gamma(nil, []float64{-0.1, 0}); z[0] != 0 || z[1] != 1 {
		t.Errorf("Γ(-0.1, 0) = %v; want [0 1] (−1, +1)", z)
	}
	// Gamma's two-state run (pairCuts) against State, coordinate by
	// coordinate: a run of three, a three-state coordinate and a two-state
	// one after it, a two-state coordinate with a state without a bin, on
	// either side of each cut, on it, at ±0, ±Inf and NaN.
	mix, err := NewMixture([]float64{0.3, 0.7}, []float64{-1, 2}, []float64{0.5, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := NewWithSupport(mix, []int{2, 2, 2, 3, 2, 2}, func(i, s int) bool { return i != 5 || s == 1 })
	if err != nil {
		t.Fatal(err)
	}
	if len(mixed.pairCuts) != 3 {
		t.Fatalf("the two-state run has %d coordinates; want 3", len(mixed.pairCuts))
	}
	func() { // a dst shorter than x panics, as it did before the fast path
		defer func() {
			if recover() == nil {
				t.Error("Gamma with a short dst (room past its length) did not panic")
			}
		}()
		short := make([]int, 2, 6)
		mixed.Gamma(short, []float64{1, 1, 1, 1, 1, 1})
	}()
	c := mixed.pairCuts[0]
	for _, v := range []float64{c, math.Nextafter(c, math.Inf(-1)), math.Nextafter(c, math.Inf(1)), 0, math.Copysign(0, -1), -3, 4, math.Inf(1), math.Inf(-1), math.NaN()} {
		x := []float64{v, v, v, v, v, v}
		z := mixed.Gamma(nil, x)
		for i := range x {
			if want := mixed.State(i, v); z[i] != want {
				t.Errorf("Γ(x)_%d = %d at x = %v; State gives %d", i, z[i], v, want)
			}
		}
	}
}

// x | z is the base truncated to z's bin: its probability transform Φ(x) is
// uniform on the bin's probability interval. Checked by the Kolmogorov–
// Smirnov statistic against its 0.1% critical value 1.95/√n, and by the mean
// of x against the truncated-normal mean within 4 standard errors.
func TestSampleGivenIsTruncatedBase(t *testing.T) {
	const n = 20000
	r := rng.Key{Seed: 1, Stream: 0}.Rand()
	nb := Normal{}
	for _, K := range []int{2, 3, 5} {
		tr, _ := New(nil, []int{K})
		for s := range K {
			lo, hi := tr.Bin(0, s)
			plo, phi := nb.CDF(lo), nb.CDF(hi)
			ys := make([]float64, n)
			var sum, sum2 float64
			x := make([]float64, 1)
			for j := range n {
				tr.SampleGiven(x, []int{s}, r)
				if x[0] < lo || x[0] >= hi || math.IsInf(x[0], 0) {
					t.Fatalf("K=%d bin %d: draw %v outside [%v, %v)", K, s, x[0], lo, hi)
				}
				ys[j] = (nb.CDF(x[0]) - plo) / (phi - plo)
				sum += x[0]
				sum2 += x[0] * x[0]
			}
			sort.Float64s(ys)
			var ks float64
			for j, y := range ys {
				ks = math.Max(ks, math.Max(math.Abs(y-float64(j)/n), math.Abs(y-float64(j+1)/n)))
			}
			if ks > 1.95/math.Sqrt(n) {
				t.Errorf("K=%d bin %d: KS statistic %v above %v", K, s, ks, 1.95/math.Sqrt(n))
			}
			phiPDF := func(x float64) float64 {
				if math.IsInf(x, 0) {
					return 0
				}
				return math.Exp(nb.LogProb(x))
			}
			mean := (phiPDF(lo) - phiPDF(hi)) / (phi - plo)
			got := sum / n
			se := math.Sqrt((sum2/n - got*got) / n)
			if math.Abs(got-mean) > 4*se {
				t.Errorf("K=%d bin %d: mean %v; truncated normal mean %v (SE %v)", K, s, got, mean, se)
			}
		}
	}
}

func TestSampleGivenFarTails(t *testing.T) {
	r := rng.Key{Seed: 2, Stream: 0}.Rand()
	const K = 100000
	tr, _ := New(nil, []int{K})
	x := make([]float64, 1)
	for _, s := range []int{0, 1, K / 2, K - 2, K - 1} {
		lo, hi := tr.Bin(0, s)
		for range 2000 {
			tr.SampleGiven(x, []int{s}, r)
			if math.IsInf(x[0], 0) || math.IsNaN(x[0]) || x[0] < lo || x[0] >= hi {
				t.Fatalf("bin %d of %d: draw %v outside [%v, %v)", s, K, x[0], lo, hi)
			}
			if tr.State(0, x[0]) != s {
				t.Fatalf("bin %d: Γ(draw) = %d", s, tr.State(0, x[0]))
			}
		}
	}
	// The upper tail is as accurate as the lower one: draws in the top bin
	// mirror draws in the bottom bin.
	tr2, _ := New(nil, []int{2})
	var maxHi float64
	for range 100000 {
		tr2.SampleGiven(x, []int{1}, r)
		maxHi = math.Max(maxHi, x[0])
	}
	if maxHi < 3.5 {
		t.Errorf("largest of 1e5 draws from the upper half-normal is %v; the tail is being cut", maxHi)
	}
}

func relaxedModels(t *testing.T) map[string]model.Relaxed {
	is, err := ising.Grid(2, 3, false, 0.5, []float64{0.1, -0.2, 0.3, 0, 0.2, -0.1})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := rbm.Random(5, 3, 0.7, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := categorical.New([]categorical.Variable{
		{States: []float64{-1, -0.5, 0, 0.5, 1}, Probs: []float64{0.1, 0.2, 0.3, 0.1, 0.3}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.5, 0, 0.5}},
		{States: []float64{3}, Probs: []float64{1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]model.Relaxed{"ising": is, "rbm": rb, "categorical": ca}
}

// Every surrogate score against central finite differences of its log
// density, at random points, in the tails, and at several temperatures.
func TestSurrogateScoresMatchFiniteDifferences(t *testing.T) {
	r := rng.Key{Seed: 3, Stream: 0}.Rand()
	for name, m := range relaxedModels(t) {
		tr, err := ForModel(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		surrs := map[string]Surrogate{"base": BaseSurrogate{T: tr}}
		for _, tau := range []float64{0.3, 1, 3} {
			s, err := NewRelaxed(tr, m, tau)
			if err != nil {
				t.Fatal(err)
			}
			surrs["relaxed τ="+formatG(tau)] = s
		}
		d := m.Dim()
		x := make([]float64, d)
		score := make([]float64, d)
		for sname, s := range surrs {
			for p := range 20 {
				scale := 1.5
				if p >= 15 {
					scale = 12 // far tails
				}
				for i := range x {
					x[i] = scale * r.NormFloat64()
				}
				f := s.LogProbScore(score, x)
				if math.IsNaN(f) || math.IsInf(f, 0) {
					t.Fatalf("%s/%s: log ρ(%v) = %v", name, sname, x, f)
				}
				for i := range x {
					h := 1e-5 * math.Max(1, math.Abs(x[i]))
					orig := x[i]
					x[i] = orig + h
					fp := s.LogProbScore(make([]float64, d), x)
					x[i] = orig - h
					fm := s.LogProbScore(make([]float64, d), x)
					x[i] = orig
					fd := (fp - fm) / (2 * h)
					if math.Abs(fd-score[i]) > 1e-5*math.Max(1, math.Abs(score[i])) {
						t.Errorf("%s/%s: score[%d] at x=%v is %v; central difference %v", name, sname, i, x, score[i], fd)
					}
				}
			}
		}
	}
}

func formatG(v float64) string {
	switch v {
	case 0.3:
		return "0.3"
	case 1:
		return "1"
	}
	return "3"
}

func TestMembershipsAndPaperSigmoid(t *testing.T) {
	ca, _ := categorical.New([]categorical.Variable{{States: []float64{1, 2, 3, 4, 5}, Probs: []float64{0.2, 0.2, 0.2, 0.2, 0.2}}})
	tr, _ := ForModel(nil, ca)
	mem, dmem := make([]float64, 5), make([]float64, 5)
	for _, tau := range []float64{1e-3, 0.5, 2} {
		s, _ := NewRelaxed(tr, ca, tau)
		for _, x := range []float64{-50, -1, -0.3, 0, 0.1, 0.7, 3, 50} {
			s.Memberships(mem, dmem, 0, x)
			var sum float64
			for _, v := range mem {
				if !(v > 0) {
					t.Fatalf("τ=%v x=%v: membership %v not positive", tau, x, mem)
				}
				sum += v
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("τ=%v x=%v: memberships sum to %v", tau, x, sum)
			}
			if tau == 1e-3 && math.Abs(x) > 0.05 {
				if b := tr.State(0, x); mem[b] < 1-1e-6 {
					t.Errorf("τ→0: x=%v in bin %d has membership %v", x, b, mem[b])
				}
			}
		}
	}
	// Two states at τ = 1: soft spin = 2/(1+e^(−x)) − 1.
	is, _ := ising.Grid(1, 1, false, 0, nil)
	tr2, _ := ForModel(nil, is)
	s, _ := NewRelaxed(tr2, is, 1)
	m2, d2 := make([]float64, 2), make([]float64, 2)
	for _, x := range []float64{-5, -0.5, 0, 0.25, 4} {
		s.Memberships(m2, d2, 0, x)
		want := 2/(1+math.Exp(-x)) - 1
		if math.Abs(m2[1]-m2[0]-want) > 1e-15 {
			t.Errorf("soft spin at %v is %v; paper's σ gives %v", x, m2[1]-m2[0], want)
		}
	}
}

func TestLogTarget(t *testing.T) {
	ca, _ := categorical.New([]categorical.Variable{{States: []float64{-1, 0, 1}, Probs: []float64{0.25, 0, 0.75}}})
	tr, _ := New(nil, []int{3}) // every state with a bin, the zero one too
	z := make([]int, 1)
	if got := tr.LogTarget(ca, []float64{0}, z); !math.IsInf(got, -1) {
		t.Errorf("log p_c in a zero-probability bin is %v; want −Inf", got)
	}
	want := Normal{}.LogProb(2) + math.Log(0.75)
	if got := tr.LogTarget(ca, []float64{2}, z); math.Abs(got-want) > 1e-15 {
		t.Errorf("log p_c(2) = %v; want %v", got, want)
	}
}

// States of probability zero get no bin: the possible states share the line
// evenly, Γ never returns an impossible state, and x | z works for the rest.
func TestSupportGivesImpossibleStatesNoBin(t *testing.T) {
	ca, _ := categorical.New([]categorical.Variable{
		{States: []float64{-1, 0, 1}, Probs: []float64{0.25, 0, 0.75}},
		{States: []float64{5, 6}, Probs: []float64{0.5, 0.5}},
	})
	tr, err := ForModel(nil, ca)
	if err != nil {
		t.Fatal(err)
	}
	if tr.NumBins(0) != 2 || tr.NumStates(0) != 3 || tr.HasBin(0, 1) || !tr.HasBin(0, 2) {
		t.Fatalf("bins %d states %d; want 2 bins for 3 states, state 1 without a bin", tr.NumBins(0), tr.NumStates(0))
	}
	if lo, hi := tr.Bin(0, 2); lo != 0 || !math.IsInf(hi, 1) {
		t.Fatalf("state 2 has bin [%v, %v); want [0, +Inf)", lo, hi)
	}
	r := rng.Key{Seed: 5, Stream: 0}.Rand()
	x := make([]float64, 2)
	for range 1000 {
		for i := range x {
			x[i] = 3 * r.NormFloat64()
		}
		if z := tr.Gamma(nil, x); z[0] == 1 {
			t.Fatalf("Γ(%v) = %v reaches the impossible state", x, z)
		}
		tr.SampleGiven(x, []int{2, 0}, r)
		if z := tr.Gamma(nil, x); z[0] != 2 || z[1] != 0 {
			t.Fatalf("Γ(x | z = [2 0]) = %v", z)
		}
	}
	s, _ := NewRelaxed(tr, ca, 1)
	mem, dmem := make([]float64, 3), make([]float64, 3)
	s.Memberships(mem, dmem, 0, 0.3)
	if mem[1] != 0 || math.Abs(mem[0]+mem[2]-1) > 1e-15 {
		t.Fatalf("memberships %v; the impossible state must get 0", mem)
	}
}

// A mixture base: its even partition puts probability 1/K in every bin, its
// score matches finite differences, and x | z stays in the bin.
func TestMixtureBase(t *testing.T) {
	mix, err := NewMixture([]float64{0.1, 0.2, 0.25, 0.15, 0.3}, []float64{-10, -5, 0, 5, 10}, []float64{1, 1, 1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(mix, []int{5})
	if err != nil {
		t.Fatal(err)
	}
	for s := range 5 {
		lo, hi := tr.Bin(0, s)
		p := mix.CDF(hi) - mix.CDF(lo)
		if math.Abs(p-0.2) > 1e-12 {
			t.Errorf("bin %d has base probability %v; want 0.2", s, p)
		}
	}
	for _, x := range []float64{-12, -7.5, 0.3, 4, 11} {
		h := 1e-5
		fd := (mix.LogProb(x+h) - mix.LogProb(x-h)) / (2 * h)
		if math.Abs(fd-mix.Score(x)) > 1e-6*math.Max(1, math.Abs(fd)) {
			t.Errorf("score at %v: %v; finite difference %v", x, mix.Score(x), fd)
		}
	}
	r := rng.Key{Seed: 9, Stream: 0}.Rand()
	x := make([]float64, 1)
	for range 200 {
		for s := range 5 {
			tr.SampleGiven(x, []int{s}, r)
			if tr.State(0, x[0]) != s {
				t.Fatalf("x | z = %d gave %v in bin %d", s, x[0], tr.State(0, x[0]))
			}
		}
	}
	if _, err := NewMixture([]float64{1}, []float64{0, 1}, []float64{1}); err == nil {
		t.Error("mismatched mixture accepted")
	}
}

// The soft step computes σ(a) and σ(−a) from one exponential with the same
// operations as numeric.Sigmoid, so its bits equal two calls of it.
func TestStepMatchesSigmoid(t *testing.T) {
	s := &SoftBins{tau: 0.25}
	for _, u := range []float64{0, math.Copysign(0, -1), 1e-300, -1e-300, 0.1, -0.1, 0.3, -7.5, 7.5, 180, -180, 1e308, -1e308, math.Inf(1), math.Inf(-1), math.NaN()} {
		l, lc, dl := s.step(u)
		a := u / s.tau
		wl, wlc := numeric.Sigmoid(a), numeric.Sigmoid(-a)
		same := func(x, y float64) bool {
			return math.Float64bits(x) == math.Float64bits(y) || (math.IsNaN(x) && math.IsNaN(y))
		}
		if !same(l, wl) || !same(lc, wlc) || !same(dl, wl*wlc/s.tau) {
			t.Errorf("u = %v: step (%v, %v, %v), sigmoids (%v, %v)", u, l, lc, dl, wl, wlc)
		}
	}
}

// The batched relaxed surrogate (an RBM's two matrix products) gives the
// point-by-point values and scores up to rounding (relative 1e-12), and
// its row ranges the whole batch's bits.
func TestRelaxedBatchMatchesPointwise(t *testing.T) {
	m, err := rbm.Random(37, 9, 0.4, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ForModel(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewRelaxed(tr, m, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	const n = 23
	d := m.Dim()
	r := rng.NewKey(5).For(rng.Init).Rand()
	x := make([]float64, n*d)
	for i := range x {
		x[i] = 2 * r.NormFloat64()
	}
	b := s.NewBatch(n)
	if b == nil {
		t.Fatal("an RBM's relaxed surrogate has no batch")
	}
	lr, score := make([]float64, n), make([]float64, n*d)
	b.LogProbScores(lr, score, x)
	want := make([]float64, d)
	for j := range n {
		f := s.LogProbScore(want, x[j*d:(j+1)*d])
		if math.Abs(lr[j]-f) > 1e-12*math.Max(1, math.Abs(f)) {
			t.Fatalf("particle %d: batch %v, pointwise %v", j, lr[j], f)
		}
		for i, g := range want {
			if got := score[j*d+i]; math.Abs(got-g) > 1e-12*math.Max(1, math.Abs(g)) {
				t.Fatalf("particle %d, score %d: batch %v, pointwise %v", j, i, got, g)
			}
		}
	}
	// Row ranges, last first, on a fresh batch: the same bits.
	b2 := s.NewBatch(n)
	lr2, score2 := make([]float64, n), make([]float64, n*d)
	for hi := n; hi > 0; hi -= 5 {
		b2.LogProbScoresRows(max(0, hi-5), hi, lr2, score2, x)
	}
	for j := range n {
		if math.Float64bits(lr2[j]) != math.Float64bits(lr[j]) {
			t.Fatalf("particle %d: rows %v, whole batch %v", j, lr2[j], lr[j])
		}
	}
	for k := range score {
		if math.Float64bits(score2[k]) != math.Float64bits(score[k]) {
			t.Fatalf("score entry %d: rows %v, whole batch %v", k, score2[k], score[k])
		}
	}
	// Models without a batched relaxation get none.
	g, _ := ising.Grid(3, 3, false, 0.3, nil)
	tg, _ := ForModel(nil, g)
	sg, _ := NewRelaxed(tg, g, 0.25)
	if sg.NewBatch(4) != nil {
		t.Error("an Ising grid got a batch evaluator")
	}
}

// normalAgain is Normal behind another type, so that the relaxed
// surrogate's chain takes its generic path (the base's methods).
type normalAgain struct{ Normal }

// The relaxed surrogate's chain on the concrete Normal gives the bits of
// its generic path, through the Base interface, on every relaxed model.
func TestChainNormalMatchesBase(t *testing.T) {
	r := rng.Key{Seed: 4, Stream: 0}.Rand()
	models := relaxedModels(t)
	// A run of two-state coordinates (the chain's unrolled part) followed
	// by a three-state and a two-state one (its general loop).
	mixed, err := categorical.New([]categorical.Variable{
		{States: []float64{-1, 1}, Probs: []float64{0.3, 0.7}},
		{States: []float64{0, 1}, Probs: []float64{0.6, 0.4}},
		{States: []float64{-1, 1}, Probs: []float64{0.5, 0.5}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.2, 0.3, 0.5}},
		{States: []float64{-1, 1}, Probs: []float64{0.9, 0.1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	models["mixed"] = mixed
	for name, m := range models {
		states := make([]int, m.Dim())
		for i := range states {
			states[i] = len(m.States(i))
		}
		var fs, lb [2]float64
		var scores [2][]float64
		x := make([]float64, m.Dim())
		for i := range x {
			x[i] = 1.5 * r.NormFloat64()
		}
		for j, base := range []Base{Normal{}, normalAgain{}} {
			tr, err := New(base, states)
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewRelaxed(tr, m, 0.3)
			if err != nil {
				t.Fatal(err)
			}
			scores[j] = make([]float64, len(x))
			fs[j] = s.LogProbScore(scores[j], x)
			lb[j] = tr.LogBase(x)
		}
		if math.Float64bits(lb[0]) != math.Float64bits(lb[1]) {
			t.Fatalf("%s: log p0 %v on Normal, %v through the interface", name, lb[0], lb[1])
		}
		if math.Float64bits(fs[0]) != math.Float64bits(fs[1]) {
			t.Fatalf("%s: log ρ %v on Normal, %v through the interface", name, fs[0], fs[1])
		}
		for i := range x {
			if math.Float64bits(scores[0][i]) != math.Float64bits(scores[1][i]) {
				t.Fatalf("%s: score %d %v on Normal, %v through the interface", name, i, scores[0][i], scores[1][i])
			}
		}
	}
}
