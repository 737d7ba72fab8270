package metrics

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

func mustPairs(t testing.TB, m model.Model) *exact.Pairs {
	t.Helper()
	p, err := exact.PairsFor(context.Background(), m, memlimit.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// exactSamples draws n exact samples of m with a fixed seed.
func exactSamples(t testing.TB, m model.Model, n int, seed uint64) *sampler.Samples {
	t.Helper()
	tr, err := exact.For(m)
	if err != nil {
		t.Fatal(err)
	}
	s := sampler.NewSamples(n, m.Dim())
	tr.Sample(s.Z, rng.NewKey(seed).For(rng.Sample).Rand())
	return s
}

// brutePairRMSE follows PairRMSE's definition literally, pair by pair and
// row by row.
func brutePairRMSE(s *sampler.Samples, p *exact.Pairs) float64 {
	d := p.Dim()
	binary := true
	for i := range d {
		binary = binary && p.Card(i) <= 2
	}
	var sum float64
	var cnt int
	for i := range d {
		for j := i + 1; j < d; j++ {
			if binary {
				var est float64
				for r := range s.N {
					z := s.Row(r)
					est += p.Values(i)[z[i]] * p.Values(j)[z[j]]
				}
				if s.N > 0 {
					est /= float64(s.N)
				}
				e := est - p.Moment(i, j)
				sum += e * e
				cnt++
				continue
			}
			for a := range p.Card(i) {
				for b := range p.Card(j) {
					var est float64
					for r := range s.N {
						if z := s.Row(r); z[i] == a && z[j] == b {
							est++
						}
					}
					if s.N > 0 {
						est /= float64(s.N)
					}
					e := est - p.Prob(i, a, j, b)
					sum += e * e
					cnt++
				}
			}
		}
	}
	return math.Sqrt(sum / float64(cnt))
}

// PairRMSE against its literal definition on ±1 spins (n not a multiple of
// 64), on 0/1 variables with a one-state variable, and on categorical
// variables (indicator pairs), including an empty sample.
func TestPairRMSEMatchesBruteForce(t *testing.T) {
	grid, _ := ising.Grid(3, 3, false, 0.4, []float64{0.3, 0, 0, -0.2, 0, 0, 0, 0, 0.5})
	fg, err := factorgraph.New([]int{2, 1, 2, 2}, []factorgraph.Factor{
		{Scope: []int{0, 2}, LogTable: []float64{0.5, -0.2, 0, 1}},
		{Scope: []int{2, 3}, LogTable: []float64{0, 0.3, -1, 0.4}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := categorical.New([]categorical.Variable{
		{States: []float64{-1, 0, 2}, Probs: []float64{0.2, 0.5, 0.3}},
		{States: []float64{1, 3}, Probs: []float64{0.9, 0.1}},
		{States: []float64{0, 1, 2, 5}, Probs: []float64{0.1, 0.2, 0.4, 0.3}},
	})
	for name, m := range map[string]model.Model{"grid": grid, "0/1 factor graph": fg, "categorical": cat} {
		p := mustPairs(t, m)
		for _, n := range []int{0, 1, 77, 200} {
			s := exactSamples(t, m, n, 11)
			got, want := PairRMSE(s, p), brutePairRMSE(s, p)
			if math.Abs(got-want) > 1e-12 || math.IsNaN(got) {
				t.Errorf("%s, n = %d: PairRMSE %.15g, brute force %.15g", name, n, got, want)
			}
		}
	}
	one, _ := ising.New(1, nil, []float64{0.2})
	if v := PairRMSE(sampler.NewSamples(5, 1), mustPairs(t, one)); v != 0 {
		t.Errorf("one variable: PairRMSE %v, want 0", v)
	}
}

// For n exact draws, RMSE² = (1/P) Σ_pairs (ê − e)² has mean
// σ̄²/n with σ̄² = (1/P) Σ (1 − e²), the mean variance of the spin products;
// n·RMSE²/σ̄² is a mean of P squared standardised errors, each χ²_1, so
// whatever their correlations its variance is at most 2 and it exceeds 20
// with probability below P(χ²_1 > 20) ≈ 8e-6. The test asks 0.2 < ratio <
// 20 (the lower side: a mean of 120 nearly independent χ²_1 falls below 0.2
// with negligible probability); the seed is fixed.
func TestPairRMSEExactSamples(t *testing.T) {
	r := rng.NewKey(5).Rand()
	fields := make([]float64, 16)
	for i := range fields {
		fields[i] = 0.6*r.Float64() - 0.3
	}
	m, _ := ising.Grid(4, 4, false, 0.3, fields)
	p := mustPairs(t, m)
	var v float64
	np := 0
	for i := range 16 {
		for j := i + 1; j < 16; j++ {
			e := p.Moment(i, j)
			v += 1 - e*e
			np++
		}
	}
	v /= float64(np)
	const n = 5000
	rmse := PairRMSE(exactSamples(t, m, n, 21), p)
	ratio := n * rmse * rmse / v
	if ratio < 0.2 || ratio > 20 {
		t.Errorf("n·RMSE²/σ̄² = %.3f, want about 1", ratio)
	}
	t.Logf("PairRMSE of %d exact draws %.5f, expected about %.5f", n, rmse, math.Sqrt(v/n))
}

// Results do not depend on GOMAXPROCS.
func TestPairRMSEDeterministic(t *testing.T) {
	p := productPairs(t, 300)
	s := randomSamples(1000, 300, 2, 3)
	old := runtime.GOMAXPROCS(1)
	a := PairRMSE(s, p)
	runtime.GOMAXPROCS(max(old, 4))
	b := PairRMSE(s, p)
	runtime.GOMAXPROCS(old)
	if a != b {
		t.Errorf("PairRMSE %v with one core, %v with four", a, b)
	}
}

// productPairs is the exact pairs of d independent ±1 spins with means
// spread over (−0.8, 0.8).
func productPairs(t testing.TB, d int) *exact.Pairs {
	vars := make([]categorical.Variable, d)
	for i := range vars {
		m := 0.8 * (2*float64(i%17)/16 - 1)
		vars[i] = categorical.Variable{States: model.Spins, Probs: []float64{(1 - m) / 2, (1 + m) / 2}}
	}
	c, err := categorical.New(vars)
	if err != nil {
		t.Fatal(err)
	}
	return exact.ProductPairs(c)
}

func benchmarkPairRMSE(b *testing.B, n, d int) {
	p := productPairs(b, d)
	s := randomSamples(n, d, 2, 1)
	b.ReportAllocs()
	for b.Loop() {
		PairRMSE(s, p)
	}
}

func BenchmarkPairRMSE200x100(b *testing.B)   { benchmarkPairRMSE(b, 200, 100) }
func BenchmarkPairRMSE1000x1000(b *testing.B) { benchmarkPairRMSE(b, 1000, 1000) }
