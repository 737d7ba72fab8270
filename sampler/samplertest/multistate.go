package samplertest

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

// Target is a model with its exact marginals.
type Target struct {
	Name      string
	Model     model.Model
	Marginals [][]float64 // Marginals[i][s] = P(z_i = s)
}

// MultiStateTargets returns two models whose variables have more than two
// states, on which gradient-guided samplers once made very poor proposals
// (issue 28: the gradient of a multilinear relaxation is a ratio of
// probabilities, not the change of log p*, and its proposals are far off
// where log-ratios are large):
//
//   - "categorical-200x4": 200 independent variables of 4 states with
//     probabilities softmax(θ_i), logits θ_is ~ N(0, 1.5²) (key 28;
//     CategoricalTarget); its marginals are the probabilities;
//   - "potts-3x3": a ferromagnetic 3-state Potts model on a 3×3 torus as a
//     factor graph, pairwise factors exp(0.5·[a = b]) on the 18 edges and
//     unary log-fields ~ N(0, 1.5²) (key 28's model stream, drawn afresh); marginals
//     by enumerating its 3^9 states. The fields are as spread as the
//     categorical logits: with fields of 0.2 the log-ratios of single moves
//     stay below about 2.5, where the relaxation's ratios still rank the
//     moves well and its proposals pass, and with couplings near 1 the
//     torus is metastable between its three ordered states, so that even
//     exact Gibbs sweeps estimate its marginals with 2–9× the RMSE of
//     independent draws in 250 sweeps.
func MultiStateTargets(t testing.TB) []Target {
	t.Helper()
	cat := CategoricalTarget(t, 200)

	r := rng.NewKey(28).For(rng.Model).Rand()
	const side, q, coupling, field = 3, 3, 0.5, 1.5
	card := make([]int, side*side)
	var fs []factorgraph.Factor
	pair := make([]float64, q*q)
	for a := range q {
		pair[a*q+a] = coupling
	}
	for v := range card {
		card[v] = q
		h := make([]float64, q)
		for s := range h {
			h[s] = field * r.NormFloat64()
		}
		fs = append(fs, factorgraph.Factor{Scope: []int{v}, LogTable: h})
		row, col := v/side, v%side
		right, down := row*side+(col+1)%side, ((row+1)%side)*side+col
		fs = append(fs, factorgraph.Factor{Scope: []int{v, right}, LogTable: pair})
		fs = append(fs, factorgraph.Factor{Scope: []int{v, down}, LogTable: pair})
	}
	potts, err := factorgraph.New(card, fs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := exact.Enumerate(potts, 1<<15)
	if err != nil {
		t.Fatal(err)
	}
	return []Target{cat, {Name: "potts-3x3", Model: potts, Marginals: res.Marginals}}
}

// CategoricalTarget returns d independent categorical variables of 4
// states with probabilities softmax(θ_i), logits θ_is ~ N(0, 1.5²) drawn
// variable by variable from key 28's model stream, named
// "categorical-<d>x4"; its marginals are the probabilities. The first
// variables of a larger target are those of a smaller one: d = 200 is
// MultiStateTargets' categorical model, d = 2000 the size of the
// categorical target of the DISCS benchmark (Goshvadi et al. 2023), whose
// logits are drawn the same way.
func CategoricalTarget(t testing.TB, d int) Target {
	t.Helper()
	r := rng.NewKey(28).For(rng.Model).Rand()
	const k = 4
	vars := make([]categorical.Variable, d)
	marg := make([][]float64, d)
	for i := range vars {
		p := make([]float64, k)
		var sum float64
		for s := range p {
			p[s] = math.Exp(1.5 * r.NormFloat64())
			sum += p[s]
		}
		for s := range p {
			p[s] /= sum
		}
		vars[i] = categorical.Variable{States: []float64{0, 1, 2, 3}, Probs: p}
	}
	cat, err := categorical.New(vars)
	if err != nil {
		t.Fatal(err)
	}
	for i := range marg {
		marg[i] = cat.Probs(i)
	}
	return Target{Name: fmt.Sprintf("categorical-%dx4", d), Model: cat, Marginals: marg}
}

// KeepDraws starts the sampler that start builds with n chains at Γ of the
// N(0, 1) initial draw of seed (as `dstein sample --chains n --seed seed`
// does), discards warmup steps and keeps the chains' states after each of
// the next draws steps: n·draws rows, draw-major. It returns them with the
// sampler, for its Stats.
func KeepDraws(t testing.TB, m model.Model, n, warmup, draws int, seed uint64, start func(*sampler.Problem) (sampler.Sampler, error)) (*sampler.Samples, sampler.Sampler) {
	t.Helper()
	return KeepThinned(t, m, n, warmup, draws, 1, seed, start)
}

// KeepThinned is KeepDraws keeping every thin-th state after the warm-up
// (as `dstein sample --thin thin` does): warmup + draws·thin steps.
func KeepThinned(t testing.TB, m model.Model, n, warmup, draws, thin int, seed uint64, start func(*sampler.Problem) (sampler.Sampler, error)) (*sampler.Samples, sampler.Sampler) {
	t.Helper()
	tr, err := transform.ForModel(transform.Normal{}, m)
	if err != nil {
		t.Fatal(err)
	}
	s, err := start(sampler.NewProblem(m, tr, n, sampler.Init{}, rng.NewKey(seed)))
	if err != nil {
		t.Fatal(err)
	}
	d := m.Dim()
	out := &sampler.Samples{N: n * draws, D: d, Z: make([]int, 0, n*draws*d)}
	ctx := context.Background()
	for it := range warmup + draws*thin {
		if err := s.Step(ctx); err != nil {
			t.Fatal(err)
		}
		if it >= warmup && (it-warmup+1)%thin == 0 {
			out.Z = append(out.Z, s.Current()...)
		}
	}
	return out, s
}

// StateRMSE returns the root mean square error of the samples' state
// frequencies against the exact marginals, over every variable and state,
// and the same for n i.i.d. exact draws (n = the samples' rows), computed
// analytically: the frequency of a state of probability p among n
// independent draws has variance p(1−p)/n, so that RMSE is
// sqrt(mean p(1−p)/n).
func StateRMSE(m model.Model, s *sampler.Samples, marginals [][]float64) (rmse, iid float64) {
	freq := sampler.Marginals(m, s)
	var se, v float64
	var count int
	for i, p := range marginals {
		for st, want := range p {
			diff := freq[i][st] - want
			se += diff * diff
			v += want * (1 - want)
			count++
		}
	}
	return math.Sqrt(se / float64(count)), math.Sqrt(v / float64(count) / float64(s.N))
}
