package gwg

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dstein/dstein/diag"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

// One sweep (d proposals) of 100 chains.
func BenchmarkSweep(b *testing.B) {
	samplertest.BenchSteps(b, func(m model.Model, t *transform.Transform) (sampler.Sampler, error) {
		return newS(m, t, 100, Settings{}, 1)
	})
}

// benchTargets are the multi-state benchmarks' models: the 4×4 grid of
// 3-state variables with random tables, then samplertest's multi-state
// targets.
func benchTargets(b *testing.B) []samplertest.Target {
	return append([]samplertest.Target{{Name: "potts-4x4", Model: potts(b, 2)}}, samplertest.MultiStateTargets(b)...)
}

// One sweep (d proposals) of 100 chains on the multi-state targets of
// samplertest.MultiStateTargets (200 categorical variables of 4 states; a
// 3-state Potts model on a 3×3 torus) and the 4×4 grid of 3-state
// variables with random tables, all on their proposal trackers.
func BenchmarkSweepMultiState(b *testing.B) {
	ms := benchTargets(b)
	for _, c := range ms {
		b.Run(c.Name, func(b *testing.B) {
			tr, err := transform.ForModel(transform.Normal{}, c.Model)
			if err != nil {
				b.Fatal(err)
			}
			s, err := newS(c.Model, tr, 100, Settings{}, 1)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				if err := s.Step(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A tried change and, every other time, its commit, on the proposal
// trackers (model.NewProposalTracker) that the sampler follows and, for
// comparison, the relaxed ones (model.NewGradientTracker), of the
// multi-state models: per op one Try of a random variable to a random
// other state. The proposal and relaxed trackers of a model do the same
// bookkeeping; the proposal's blocks add log-values where the relaxation's
// add exponentials of differences.
func BenchmarkTracker(b *testing.B) {
	ms := benchTargets(b)
	for _, c := range ms {
		for _, kind := range []string{"proposal", "relaxed"} {
			b.Run(c.Name+"/"+kind, func(b *testing.B) {
				d := c.Model.Dim()
				z := make([]int, d)
				var tr model.GradientTracker
				if kind == "proposal" {
					tr = model.NewProposalTracker(c.Model, z)
				} else {
					tr = model.NewGradientTracker(c.Model.(model.Relaxed), z)
				}
				r := rand.New(rand.NewPCG(3, 4))
				b.ReportAllocs()
				for b.Loop() {
					i := r.IntN(d)
					k := len(c.Model.States(i))
					tr.Try(i, (tr.State()[i]+1+r.IntN(k-1))%k)
					if r.IntN(2) == 0 {
						tr.Commit()
					}
				}
			})
		}
	}
}

// The same with the previous implementation (the whole gradient and
// normaliser recomputed for every proposal), for comparisons under the
// same load.
func BenchmarkSweepReference(b *testing.B) {
	samplertest.BenchSteps(b, func(m model.Model, t *transform.Transform) (sampler.Sampler, error) {
		return newRef(sampler.NewProblem(m, t, 100, sampler.Init{}, rng.NewKey(1)))
	})
}

// The proposal weights' bookkeeping alone, for a binary model with d
// variables and degree 4 (the grid): per proposal, draw a variable and
// then change the weights of 5 variables and read the new total. "tree"
// is the sampler's sum tree (O(log d) per change and draw, totals exact
// functions of the weights); "flat-resum" keeps the weights in an array,
// draws by a linear scan and sums all of them for the total (O(d), also
// exact); "flat-running" updates a running total instead (O(1) per change,
// but its rounding accumulates, which the sampler cannot accept).
func BenchmarkWeights(b *testing.B) {
	for _, d := range []int{100, 1000} {
		leaves := 1
		for leaves < d {
			leaves *= 2
		}
		s := &Sampler{d: d, leaves: leaves}
		for s.depth = 0; 1<<s.depth < leaves; s.depth++ {
		}
		r := rand.New(rand.NewPCG(1, 2))
		w := make([]float64, d)
		for i := range w {
			w[i] = 0.5 + r.Float64()
		}
		b.Run(fmt.Sprintf("tree/d=%d", d), func(b *testing.B) {
			tree := make([]float64, 2*leaves)
			copy(tree[leaves:], w)
			s.rebuild(tree)
			for b.Loop() {
				i, _ := s.find(tree, r.Float64()*tree[1])
				for k := range 5 {
					s.setLeaf(tree, (i+k*7)%d, 0.5+r.Float64())
				}
				_ = tree[1]
			}
		})
		b.Run(fmt.Sprintf("flat-resum/d=%d", d), func(b *testing.B) {
			x := append([]float64(nil), w...)
			total := 0.0
			for _, v := range x {
				total += v
			}
			for b.Loop() {
				target, i := r.Float64()*total, 0
				for acc := x[0]; acc <= target && i < d-1; acc += x[i] {
					i++
				}
				for k := range 5 {
					x[(i+k*7)%d] = 0.5 + r.Float64()
				}
				total = 0
				for _, v := range x {
					total += v
				}
			}
		})
		b.Run(fmt.Sprintf("flat-running/d=%d", d), func(b *testing.B) {
			x := append([]float64(nil), w...)
			total := 0.0
			for _, v := range x {
				total += v
			}
			for b.Loop() {
				target, i := r.Float64()*total, 0
				for acc := x[0]; acc <= target && i < d-1; acc += x[i] {
					i++
				}
				for k := range 5 {
					j := (i + k*7) % d
					v := 0.5 + r.Float64()
					total += v - x[j]
					x[j] = v
				}
			}
		})
	}
}

// ESS per second of log p* and of the mean spin (1/d Σ z_i) on the 10×10
// grid (coupling 0.1, fields uniform on (−0.3, 0.3)) and the d = 100, M = 25
// RBM: 4 chains from N(0, 1) with key 1, 1000 warm-up sweeps and 1000
// kept, as `dstein sample --method gwg --chains 4 --draws 1000` runs them.
// ESS is the bulk ESS of diag.Summarize; the time is that of the sweeps
// alone. Run with -benchtime=1x.
func BenchmarkESS(b *testing.B) {
	for _, c := range []struct {
		name string
		m    func(testing.TB) model.Model
	}{
		{"grid-10x10", func(t testing.TB) model.Model { return grid(t, 3) }},
		{"rbm-d=100-M=25", func(t testing.TB) model.Model { return rbm100(t, 1) }},
	} {
		for _, impl := range []string{"incremental", "reference"} {
			b.Run(c.name+"/"+impl, func(b *testing.B) {
				m := c.m(b)
				tr, err := transform.ForModel(transform.Normal{}, m)
				if err != nil {
					b.Fatal(err)
				}
				const chains, warm, draws = 4, 1000, 1000
				var essLP, essSpin, secs float64
				for b.Loop() {
					p := sampler.NewProblem(m, tr, chains, sampler.Init{}, rng.NewKey(1))
					var s sampler.Sampler
					if impl == "incremental" {
						s, err = New(p, Settings{})
					} else {
						s, err = newRef(p)
					}
					if err != nil {
						b.Fatal(err)
					}
					lp, spin := make([][]float64, chains), make([][]float64, chains)
					var elapsed time.Duration
					ctx := context.Background()
					d := m.Dim()
					for it := range warm + draws {
						start := time.Now()
						if err := s.Step(ctx); err != nil {
							b.Fatal(err)
						}
						elapsed += time.Since(start)
						if it < warm {
							continue
						}
						z := s.Current()
						for c := range chains {
							zc := z[c*d : (c+1)*d]
							lp[c] = append(lp[c], m.LogProb(zc))
							var sum float64
							for _, v := range zc {
								sum += model.Spin(v)
							}
							spin[c] = append(spin[c], sum/float64(d))
						}
					}
					a, err := diag.Summarize(lp)
					if err != nil {
						b.Fatal(err)
					}
					sp, err := diag.Summarize(spin)
					if err != nil {
						b.Fatal(err)
					}
					essLP, essSpin, secs = a.BulkESS, sp.BulkESS, elapsed.Seconds()
				}
				b.ReportMetric(essLP, "ess_logp")
				b.ReportMetric(essSpin, "ess_spin")
				b.ReportMetric(essLP/secs, "ess_logp/s")
				b.ReportMetric(essSpin/secs, "ess_spin/s")
				b.ReportMetric(secs, "sample_s")
			})
		}
	}
}
