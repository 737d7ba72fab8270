package kernel

import (
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/dstein/dstein/rng"
)

// serialRanks is ranks' one-core form on a copy of p.
func serialRanks(p []float64, b int, both bool) (va, vb float64) {
	return selectRanks(slices.Clone(p), b, both)
}

// TestRanksSplitMatchesSelect: the split selection (a sample's bracket,
// counted and copied over cores) returns the same values as Select on the
// whole slice, bit for bit, at the median's ranks and at the ends, on
// continuous values, many ties, one repeated value, sorted and reversed
// input, a NaN (which sends it back to Select) and an input whose
// systematic sample is far from typical (the bracket misses: back to
// Select), and it falls back without touching p; the whole of Median2
// allocates nothing once warm.
func TestRanksSplitMatchesSelect(t *testing.T) {
	defer func(m, p int) { parSelectMin = m; runtime.GOMAXPROCS(p) }(parSelectMin, runtime.GOMAXPROCS(2))
	parSelectMin = 1000
	r := rng.Key{Seed: 9, Stream: 0}.Rand()
	cases := map[string]func(n int) []float64{
		"squared normals": func(n int) []float64 {
			p := make([]float64, n)
			for i := range p {
				x := r.NormFloat64()
				p[i] = x * x
			}
			return p
		},
		"ties": func(n int) []float64 {
			p := make([]float64, n)
			for i := range p {
				p[i] = float64(r.IntN(10))
			}
			return p
		},
		"one value": func(n int) []float64 {
			p := make([]float64, n)
			for i := range p {
				p[i] = 2.5
			}
			return p
		},
		"sorted": func(n int) []float64 {
			p := make([]float64, n)
			for i := range p {
				p[i] = float64(i) / 7
			}
			return p
		},
		"reversed": func(n int) []float64 {
			p := make([]float64, n)
			for i := range p {
				p[i] = float64(n - i)
			}
			return p
		},
		"a NaN": func(n int) []float64 {
			p := make([]float64, n)
			for i := range p {
				p[i] = r.Float64()
			}
			p[n/3] = math.NaN()
			return p
		},
		"sample far from typical": func(n int) []float64 {
			// Every value the sample takes (multiples of the stride) is
			// huge; the rest are small: the bracket sits among huge values.
			p := make([]float64, n)
			stride := n / min(selectSample, n/16)
			for i := range p {
				p[i] = r.Float64()
				if i%stride == 0 {
					p[i] = 1e6 + r.Float64()
				}
			}
			return p
		},
	}
	for name, gen := range cases {
		for _, n := range []int{1000, 4951, 20000, 499500} {
			p := gen(n)
			for _, b := range []int{1, n / 2, (n - 1) / 2, n - 1} {
				for _, both := range []bool{false, true} {
					wa, wb := serialRanks(p, b, both)
					q := slices.Clone(p)
					ga, gb := ranks(q, b, both)
					same := func(x, y float64) bool {
						return math.Float64bits(x) == math.Float64bits(y) || (math.IsNaN(x) && math.IsNaN(y))
					}
					if !same(ga, wa) || !same(gb, wb) {
						t.Fatalf("%s, n %d, rank %d, both %v: %v, %v; Select gives %v, %v", name, n, b, both, ga, gb, wa, wb)
					}
				}
			}
		}
	}
	// The split path is taken (and the fallback is not) on typical input:
	// a job's bracket holds a few percent of the values.
	p := cases["squared normals"](499500)
	j := selectJobs.Get().(*selectJob)
	if _, _, ok := j.ranks(slices.Clone(p), len(p)/2, true); !ok || len(j.mid) > len(p)/10 {
		t.Errorf("split path ok=%v with %d of %d values in the bracket", ok, len(j.mid), len(p))
	}
	q := cases["sample far from typical"](499500)
	keep := slices.Clone(q)
	if _, _, ok := j.ranks(q, len(q)/2, true); ok || !slices.Equal(q, keep) {
		t.Errorf("an untypical sample: ok=%v, p changed %v", ok, !slices.Equal(q, keep))
	}
	selectJobs.Put(j)
	pairs := slices.Clone(p)
	Median2(pairs, 1000, false)
	// 50 runs: AllocsPerRun truncates the mean, so a refill of the
	// selection's sync.Pool (after a collection, or on another P) reads 0
	// and an allocation in every call at least 1.
	if a := testing.AllocsPerRun(50, func() { copy(pairs, p); Median2(pairs, 1000, false) }); a != 0 {
		t.Errorf("Median2 allocates %v times a call", a)
	}
}

// BenchmarkMedian2 times the median of the 499,500 distances of n = 1000
// points (split over cores, or Select on one: run with -test.cpu 1, then
// 2, in two processes).
func BenchmarkMedian2(b *testing.B) {
	r := rng.Key{Seed: 1, Stream: 0}.Rand()
	p := make([]float64, 1000*999/2)
	for i := range p {
		x := r.NormFloat64()
		p[i] = 100 + 10*x
	}
	pairs := make([]float64, len(p))
	b.ReportAllocs()
	for b.Loop() {
		copy(pairs, p)
		Median2(pairs, 1000, false)
	}
}
