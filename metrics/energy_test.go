package metrics

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

func randomFieldGrid(t testing.TB, rows, cols int, j, h float64, seed uint64) *ising.Ising {
	r := rng.NewKey(seed).Rand()
	fields := make([]float64, rows*cols)
	for i := range fields {
		fields[i] = h * (2*r.Float64() - 1)
	}
	m, err := ising.Grid(rows, cols, false, j, fields)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Bins from the exact distribution of a 4×4 grid with fields (65536 nearly
// all distinct levels): 20 bins of about 5% each, masses summing to one,
// cuts increasing, and the same bins on every build.
func TestExactEnergyBinsQuantiles(t *testing.T) {
	m := randomFieldGrid(t, 4, 4, 0.3, 0.3, 1)
	e, err := ExactEnergyBins(context.Background(), m, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Bins() != DefaultEnergyBins {
		t.Fatalf("%d bins, want %d", e.Bins(), DefaultEnergyBins)
	}
	var sum float64
	for b, p := range e.Mass() {
		sum += p
		// Levels are light (the heaviest state has mass < 0.2%), so each
		// bin is within the heaviest level of 1/20.
		if math.Abs(p-0.05) > 0.005 {
			t.Errorf("bin %d has mass %v, want about 0.05", b, p)
		}
	}
	if math.Abs(sum-1) > 1e-12 || !slices.IsSorted(e.Cuts()) {
		t.Errorf("masses sum to %v; cuts %v", sum, e.Cuts())
	}
	again, _ := ExactEnergyBins(context.Background(), m, 0, 0)
	if !slices.Equal(again.Cuts(), e.Cuts()) || !slices.Equal(again.Mass(), e.Mass()) {
		t.Error("two builds gave different bins")
	}
}

// A uniform coupling without fields has few energy levels, each the sum of
// many states whose log p* may differ in the last bits: ties are merged
// into exactly the distinct energies, and no bin boundary splits a level.
func TestEnergyBinsTies(t *testing.T) {
	m, _ := ising.Grid(3, 4, false, 0.1, nil)
	e, err := ExactEnergyBins(context.Background(), m, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Energies are 0.1·(#agreeing − #disagreeing) bonds, 17 bonds: at most
	// 18 levels (the bond parities fix some); count them by rounding.
	seen := map[int64]bool{}
	z := make([]int, 12)
	for idx := range 1 << 12 {
		for i := range z {
			z[i] = idx >> i & 1
		}
		seen[int64(math.Round(m.LogProb(z)*1e6))] = true
	}
	if e.Levels() != len(seen) {
		t.Errorf("%d levels after merging ties, want %d", e.Levels(), len(seen))
	}
	if e.Bins() > e.Levels() || e.Bins() < 2 {
		t.Errorf("%d bins from %d levels", e.Bins(), e.Levels())
	}
	for lv := range seen {
		x := float64(lv) / 1e6
		for _, c := range e.Cuts() {
			if math.Abs(x-c) < 0.05 {
				t.Errorf("cut %v lies within 0.05 of level %v", c, x)
			}
		}
	}
}

// TV of n exact draws: each bin's frequency is within 5 standard errors
// sqrt(P(1−P)/n) of its mass except with probability 5.7e-7 per bin, so TV ≤
// ½·Σ_b 5·SE_b (fixed seed). A sample of a model with twice the coupling is
// far off, and an empty sample scores ½.
func TestEnergyTV(t *testing.T) {
	m := randomFieldGrid(t, 4, 4, 0.3, 0.3, 2)
	e, err := ExactEnergyBins(context.Background(), m, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	const n = 10000
	var bound float64
	for _, p := range e.Mass() {
		bound += 2.5 * math.Sqrt(p*(1-p)/n)
	}
	tv := e.TV(exactSamples(t, m, n, 3))
	if tv > bound {
		t.Errorf("TV of %d exact draws %v, over %v", n, tv, bound)
	}
	hot := randomFieldGrid(t, 4, 4, 0.6, 0.3, 2)
	if far := e.TV(exactSamples(t, hot, n, 4)); far < 5*bound {
		t.Errorf("TV of draws at twice the coupling %v, want well over %v", far, bound)
	}
	if v := e.TV(sampler.NewSamples(0, 16)); v != 0.5 {
		t.Errorf("TV of an empty sample %v, want ½", v)
	}
	t.Logf("TV of %d exact draws %.4f (bound %.4f)", n, tv, bound)
}

// Bins from a reference sample: the masses are each within 5 standard
// errors of the exact distribution's mass of the same bin (fixed seed).
func TestReferenceEnergyBins(t *testing.T) {
	m := randomFieldGrid(t, 4, 4, 0.3, 0.3, 5)
	const n = 20000
	e, err := ReferenceEnergyBins(m, exactSamples(t, m, n, 6), 0)
	if err != nil {
		t.Fatal(err)
	}
	lp := make([]float64, 1<<16)
	z := make([]int, 16)
	var logZ float64 = math.Inf(-1)
	for idx := range lp {
		for i := range z {
			z[i] = idx >> i & 1
		}
		lp[idx] = m.LogProb(z)
		logZ = logAdd(logZ, lp[idx])
	}
	want := make([]float64, e.Bins())
	for _, v := range lp {
		want[e.Bin(v)] += math.Exp(v - logZ)
	}
	for b, p := range e.Mass() {
		if se := math.Sqrt(want[b] * (1 - want[b]) / n); math.Abs(p-want[b]) > 5*se {
			t.Errorf("bin %d: reference mass %v, exact %v (SE %v)", b, p, want[b], se)
		}
	}
}

func logAdd(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// Impossible rows (log p* = −Inf) count fully against the sample; bad input
// is refused.
func TestEnergyBinsImpossibleAndErrors(t *testing.T) {
	inf := math.Inf(-1)
	g, err := factorgraph.New([]int{2, 3}, []factorgraph.Factor{{Scope: []int{0, 1}, LogTable: []float64{0, 1, inf, 0.5, inf, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := ExactEnergyBins(context.Background(), g, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	if e.Levels() != 4 || e.Bin(inf) != -1 {
		t.Errorf("%d levels (want 4), Bin(−Inf) = %d", e.Levels(), e.Bin(inf))
	}
	s := sampler.NewSamples(4, 2)
	copy(s.Z, []int{0, 2, 0, 2, 0, 2, 0, 2}) // an impossible state, 4 times
	if v := e.TV(s); v != 1 {
		t.Errorf("TV of impossible rows %v, want 1", v)
	}
	for name, c := range map[string]struct{ lp, w []float64 }{
		"NaN":       {[]float64{0, math.NaN()}, nil},
		"+Inf":      {[]float64{0, math.Inf(1)}, nil},
		"no weight": {[]float64{0, 1}, []float64{0, 0}},
		"negative":  {[]float64{0, 1}, []float64{1, -1}},
		"lengths":   {[]float64{0, 1}, []float64{1}},
	} {
		if _, err := NewEnergyBins(model.Model(g), c.lp, c.w, 0); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
