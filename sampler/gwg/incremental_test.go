package gwg

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

// generic hides a model's own gradient tracker and its proposal gradient,
// so that the sampler runs on the generic relaxed tracker (whole gradients
// from RelaxedLogProb).
type generic struct{ model.Relaxed }

// relaxedProposal is what wholeProposal keeps of a model: its relaxation and
// its proposal gradient, without its proposal tracker.
type relaxedProposal interface {
	model.Relaxed
	model.ProposalGradient
}

// wholeProposal hides a model's own proposal tracker, so that the sampler
// runs on the generic one (whole gradients from ProposalGrad).
type wholeProposal struct{ relaxedProposal }

func (g wholeProposal) DeltaLogProb(z []int, i, s int) float64 {
	return g.relaxedProposal.(model.Delta).DeltaLogProb(z, i, s)
}

func (g generic) DeltaLogProb(z []int, i, s int) float64 {
	return g.Relaxed.(model.Delta).DeltaLogProb(z, i, s)
}

// grid returns the 10×10 Ising grid of the measurements: coupling 0.1,
// fields uniform on (−0.3, 0.3) from seed.
func grid(t testing.TB, seed uint64) *ising.Ising {
	t.Helper()
	r := rng.NewKey(seed).For(rng.Model).Rand()
	h := make([]float64, 100)
	for i := range h {
		h[i] = -0.3 + 0.6*r.Float64()
	}
	m, err := ising.Grid(10, 10, false, 0.1, h)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// rbm100 returns the d = 100, M = 25 RBM of the measurements.
func rbm100(t testing.TB, seed uint64) *rbm.RBM {
	t.Helper()
	m, err := rbm.Random(100, 25, math.Sqrt(0.05), 1, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// potts returns a 4×4 grid of 3-state variables with random pairwise and
// unary log-tables: a factor graph whose gradient blocks change only at a
// flipped variable's neighbours.
func potts(t testing.TB, seed uint64) *factorgraph.Graph {
	t.Helper()
	r := rng.NewKey(seed).For(rng.Model).Rand()
	const side, k = 4, 3
	card := make([]int, side*side)
	var fs []factorgraph.Factor
	table := func(n int, scale float64) []float64 {
		x := make([]float64, n)
		for a := range x {
			x[a] = scale * r.NormFloat64()
		}
		return x
	}
	for v := range card {
		card[v] = k
		fs = append(fs, factorgraph.Factor{Scope: []int{v}, LogTable: table(k, 0.5)})
		if v%side+1 < side {
			fs = append(fs, factorgraph.Factor{Scope: []int{v, v + 1}, LogTable: table(k*k, 0.5)})
		}
		if v+side < len(card) {
			fs = append(fs, factorgraph.Factor{Scope: []int{v, v + side}, LogTable: table(k*k, 0.5)})
		}
	}
	g, err := factorgraph.New(card, fs)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// models returns every kind of model the sampler supports, small and as
// large as the measurements, each with its own gradient tracker, the
// small RBM and factor graph on the generic relaxed tracker (their
// relaxation's gradient), and the small factor graph and categorical model
// on the generic proposal tracker.
func models(t testing.TB) map[string]model.Model {
	ms := samplertest.SmallModels(t)
	ms["grid-10x10"] = grid(t, 3)
	ms["rbm-d=100"] = rbm100(t, 1)
	ms["potts-4x4"] = potts(t, 2)
	ms["generic-rbm"] = generic{ms["rbm"].(model.Relaxed)}
	ms["generic-factorgraph"] = generic{ms["factorgraph"].(model.Relaxed)}
	ms["whole-proposal-factorgraph"] = wholeProposal{ms["factorgraph"].(relaxedProposal)}
	ms["whole-proposal-categorical"] = wholeProposal{ms["categorical"].(relaxedProposal)}
	// Two states per variable on average, not each: the binary fast path
	// must not take it.
	mixed, err := categorical.New([]categorical.Variable{
		{States: []float64{0}, Probs: []float64{1}},
		{States: []float64{0, 1, 2}, Probs: []float64{0.2, 0.5, 0.3}},
		{States: []float64{-1, 1}, Probs: []float64{0.4, 0.6}},
		{States: []float64{5}, Probs: []float64{1}},
		{States: []float64{1, 2, 3}, Probs: []float64{0.6, 0.3, 0.1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ms["mixed-states"] = mixed
	return ms
}

// freshGrad returns the gradient of RelaxedLogProb at the one-hot
// memberships of z.
func freshGrad(m model.Relaxed, z []int) []float64 {
	off := model.Offsets(m)
	mem := make([]float64, off[len(z)])
	for i, s := range z {
		mem[off[i]+s] = 1
	}
	g := make([]float64, len(mem))
	m.RelaxedLogProb(g, mem)
	return g
}

// freshProposal returns the proposal gradient at z, computed whole: the
// model's ProposalGrad, or else RelaxedLogProb's gradient at the one-hot
// memberships (freshGrad).
func freshProposal(m model.Model, z []int) []float64 {
	if pg, ok := m.(model.ProposalGradient); ok {
		return pg.ProposalGrad(make([]float64, model.Offsets(m)[len(z)]), z)
	}
	if rm, ok := m.(model.Relaxed); ok {
		return freshGrad(rm, z)
	}
	return model.NewProposalGrads(m).Grad(make([]float64, model.Offsets(m)[len(z)]), z)
}

// close reports whether a and b agree within tol relative to the size of
// the terms behind them, scale (equal infinities agree).
func close(a, b, tol, scale float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= tol*math.Max(1, scale)
}

// Along 20000 random tried changes, about half of them committed, every
// tracker's gradient (checked every 1000 changes, at possible states)
// equals a fresh gradient within 1e-9 (relative to the largest entry: the
// RBM's in-place preactivations are the only sums that are updated rather
// than recomputed, and it refreshes them every d commits); the others,
// which recompute every changed block from scratch, are exact. The
// relaxed trackers (model.NewGradientTracker) are compared with
// RelaxedLogProb, the proposal trackers that the sampler follows
// (model.NewProposalTracker) with a whole proposal gradient.
func TestTrackersMatchFreshGradient(t *testing.T) {
	for name, m := range models(t) {
		t.Run(name+"/relaxed", func(t *testing.T) {
			rm, ok := m.(model.Relaxed)
			if !ok {
				t.Skip("no relaxed form")
			}
			_, own := m.(model.RelaxedIncremental)
			checkTracker(t, name, m, func(z []int) model.GradientTracker { return model.NewGradientTracker(rm, z) }, func(_ model.Model, z []int) []float64 { return freshGrad(rm, z) }, own)
		})
		t.Run(name+"/proposal", func(t *testing.T) {
			_, own := m.(model.ProposalIncremental)
			if _, ok := m.(model.ProposalGradient); !ok {
				_, own = m.(model.RelaxedIncremental)
			}
			checkTracker(t, name, m, func(z []int) model.GradientTracker { return model.NewProposalTracker(m, z) }, freshProposal, own)
		})
	}
}

// checkTracker runs the walk of TestTrackersMatchFreshGradient on the
// tracker that newT makes, against fresh; own says whether it is a model's
// own (exact but for the RBM's).
func checkTracker(t *testing.T, name string, m model.Model, newT func(z []int) model.GradientTracker, fresh func(model.Model, []int) []float64, own bool) {
	d := m.Dim()
	r := rand.New(rand.NewPCG(7, uint64(d)))
	z := make([]int, d)
	for i := range z {
		z[i] = r.IntN(len(m.States(i)))
	}
	tr := newT(z)
	for step := range 20000 {
		i := r.IntN(d)
		k := len(m.States(i))
		if k < 2 {
			continue
		}
		s := (tr.State()[i] + 1 + r.IntN(k-1)) % k
		tr.Try(i, s)
		if r.IntN(2) == 0 {
			tr.Commit()
			z[i] = s
		}
		if step%1000 != 999 || math.IsInf(m.LogProb(z), -1) {
			continue // the gradient at an impossible state may be NaN
		}
		for v := range z {
			if tr.State()[v] != z[v] {
				t.Fatalf("%s: tracker state %v; want %v", name, tr.State(), z)
			}
		}
		want := fresh(m, z)
		scale := 0.0
		for _, x := range want {
			if !math.IsInf(x, 0) {
				scale = math.Max(scale, math.Abs(x))
			}
		}
		for k, got := range tr.Grad() {
			exact := own && name != "rbm" && name != "rbm-d=100"
			if exact && got != want[k] && !(got != got && want[k] != want[k]) {
				t.Fatalf("%s: after %d changes gradient entry %d = %v; fresh %v (want equal bits)", name, step+1, k, got, want[k])
			}
			if !close(got, want[k], 1e-9, scale) {
				t.Fatalf("%s: after %d changes gradient entry %d = %v; fresh %v", name, step+1, k, got, want[k])
			}
		}
	}
}

// checkState compares a chain's incremental state with a fresh
// computation: the tracker's configuration and gradient, the logits
// (within 1e-9 relative to the gradient's size), the weights and tree
// (exact: they are functions of the logits and the reference), and the
// log normaliser ref + log(total) against a fresh log-sum-exp (within
// 1e-9).
func checkState(t *testing.T, name string, s *Sampler) {
	t.Helper()
	for c := range s.chains {
		ch := &s.chains[c]
		for i, v := range ch.t.State() {
			if v != ch.Z[i] {
				t.Fatalf("%s: chain %d: tracker state differs from the chain's", name, c)
			}
		}
		g := freshProposal(s.m, ch.Z)
		scale := 0.0
		for _, x := range g {
			scale = math.Max(scale, math.Abs(x))
		}
		want := make([]float64, len(g))
		for i := range s.d {
			s.blockLogits(want, g, i, ch.Z[i])
		}
		for k, l := range ch.logit {
			if !close(l, want[k], 1e-9, scale) {
				t.Fatalf("%s: chain %d: logit %d = %v; fresh %v", name, c, k, l, want[k])
			}
			if w := math.Exp(l - ch.ref); ch.w[k] != w {
				t.Fatalf("%s: chain %d: weight %d = %v; exp(logit − ref) = %v", name, c, k, ch.w[k], w)
			}
		}
		tree := make([]float64, len(ch.tree))
		for i := range s.d {
			for _, w := range ch.w[s.off[i]:s.off[i+1]] {
				tree[s.leaves+i] += w
			}
		}
		s.rebuild(tree)
		for j := 1; j < len(tree); j++ {
			if tree[j] != ch.tree[j] {
				t.Fatalf("%s: chain %d: tree node %d = %v; recomputed %v", name, c, j, ch.tree[j], tree[j])
			}
		}
		if lse, got := numeric.LogSumExp(want), ch.ref+math.Log(ch.tree[1]); !close(got, lse, 1e-9, math.Abs(lse)) {
			t.Fatalf("%s: chain %d: log normaliser %v; fresh %v", name, c, got, lse)
		}
		if ch.tree[1] < minTotal && ch.tree[1] != 0 {
			t.Fatalf("%s: chain %d: total weight %v below %v", name, c, ch.tree[1], minTotal)
		}
	}
}

// After 100 sweeps (10⁴ proposals per chain on the d = 100 models) every
// chain's incremental state equals a fresh recomputation.
func TestIncrementalStateMatchesRecomputation(t *testing.T) {
	for name, m := range models(t) {
		tr, err := transform.ForModel(transform.Normal{}, m)
		if err != nil {
			t.Fatal(err)
		}
		s, err := newS(m, tr, 8, Settings{}, 4)
		if err != nil {
			t.Fatal(err)
		}
		checkState(t, name, s)
		for range 100 {
			if err := s.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		checkState(t, name, s)
	}
}

// The chains make the same draws as the previous implementation, which
// recomputed the whole gradient and normaliser for every proposal, from
// the same key. The proposal probabilities and acceptance ratios differ
// from it only by rounding (sums in another order; for the RBM,
// preactivations updated in place and log p* changes from tanh tables), so
// a draw can differ only when a uniform falls within about 1e-15 of a
// boundary: about 1e-15 per proposal, against the 10⁴–10⁵ proposals per
// model here (200 chains × 30 sweeps on the small models, 100 × 5 on the
// d = 100 ones). A difference here is a bug, not bad luck.
func TestSameDrawsAsFullRecomputation(t *testing.T) {
	for name, m := range models(t) {
		tr, err := transform.ForModel(transform.Normal{}, m)
		if err != nil {
			t.Fatal(err)
		}
		n, sweeps := 200, 30
		if m.Dim() > 20 {
			n, sweeps = 100, 5
		}
		p := func() *sampler.Problem { return sampler.NewProblem(m, tr, n, sampler.Init{}, rng.NewKey(11)) }
		s, err := New(p(), Settings{})
		if err != nil {
			t.Fatal(err)
		}
		ref, err := newRef(p())
		if err != nil {
			t.Fatal(err)
		}
		for range sweeps {
			if err := s.Step(context.Background()); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := ref.Step(context.Background()); err != nil {
				t.Fatalf("%s: full recomputation: %v", name, err)
			}
		}
		a, b := s.Current(), ref.Current()
		for k := range a {
			if a[k] != b[k] {
				t.Fatalf("%s: chain %d differs from the full recomputation after %d sweeps", name, k/m.Dim(), sweeps)
			}
		}
		for c := range s.chains {
			if s.chains[c].Accepted != ref.chains[c].Accepted || s.chains[c].Evals != ref.chains[c].Evals {
				t.Fatalf("%s: chain %d: %d accepted, %d evaluations; full recomputation %d, %d", name, c,
					s.chains[c].Accepted, s.chains[c].Evals, ref.chains[c].Accepted, ref.chains[c].Evals)
			}
		}
	}
}

// Models with huge parameters: couplings of ±1e90 and fields of ±1e89, RBM
// weights of size 1e40, factor tables spanning ±300 (gradients up to
// e^600) and categorical probabilities down to 1e-300. The logits span
// hundreds of orders of magnitude, so the reference of the weights moves;
// no NaN or Inf may appear in any logit of a move that can be proposed,
// weight, total, reference or acceptance ratio, and no chain may fail.
func TestExtremeParameters(t *testing.T) {
	r := rng.NewKey(5).For(rng.Model).Rand()
	sign := func() float64 { return float64(2*r.IntN(2) - 1) }
	edges := ising.GridEdges(6, 6, false, 1)
	for k := range edges {
		edges[k].Coupling = sign() * 1e90 * (0.5 + r.Float64())
	}
	h := make([]float64, 36)
	for i := range h {
		h[i] = sign() * 1e89 * r.Float64()
	}
	huge, err := ising.NewGrid(6, 6, false, edges, h)
	if err != nil {
		t.Fatal(err)
	}
	W := make([][]float64, 20)
	for i := range W {
		W[i] = make([]float64, 5)
		for k := range W[i] {
			W[i][k] = 1e40 * r.NormFloat64()
		}
	}
	bigRBM, err := rbm.New(W, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var fs []factorgraph.Factor
	for v := range 6 {
		tab := make([]float64, 9)
		for a := range tab {
			tab[a] = 300 * (2*r.Float64() - 1)
		}
		fs = append(fs, factorgraph.Factor{Scope: []int{v, (v + 1) % 6}, LogTable: tab})
	}
	steep, err := factorgraph.New([]int{3, 3, 3, 3, 3, 3}, fs)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := categorical.New([]categorical.Variable{
		{States: []float64{0, 1, 2, 3}, Probs: []float64{1e-300, 0.5, 1e-200, 0.5 - 1e-200}},
		{States: []float64{0, 1}, Probs: []float64{1 - 1e-16, 1e-16}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]model.Model{"ising-1e90": huge, "rbm-1e40": bigRBM, "potts-300": steep, "categorical-1e-300": cat} {
		tr, err := transform.ForModel(transform.Normal{}, m)
		if err != nil {
			t.Fatal(err)
		}
		s, err := newS(m, tr, 50, Settings{}, 6)
		if err != nil {
			t.Fatal(err)
		}
		for range 50 {
			if err := s.Step(context.Background()); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for c := range s.chains {
				ch := &s.chains[c]
				if math.IsNaN(ch.ref) || math.IsInf(ch.ref, 0) {
					t.Fatalf("%s: chain %d: reference %v", name, c, ch.ref)
				}
				for j, x := range ch.tree {
					if math.IsNaN(x) || math.IsInf(x, 0) {
						t.Fatalf("%s: chain %d: tree node %d is %v", name, c, j, x)
					}
				}
				if ch.tree[1] < minTotal {
					t.Fatalf("%s: chain %d: total weight %v", name, c, ch.tree[1])
				}
				for k, l := range ch.logit {
					if math.IsNaN(l) || math.IsInf(l, 1) || math.IsNaN(ch.w[k]) || math.IsInf(ch.w[k], 0) {
						t.Fatalf("%s: chain %d: logit %d = %v, weight %v", name, c, k, l, ch.w[k])
					}
				}
			}
		}
		acc := acceptance(s)
		if math.IsNaN(acc) || acc < 0 || acc > 1 {
			t.Fatalf("%s: acceptance rate %v", name, acc)
		}
		checkState(t, name, s)
		t.Logf("%s: acceptance rate %.3f", name, acc)
	}
}

// A sweep of 100 chains allocates nothing once the chains are running,
// nor does a tried and committed change of a model's own proposal tracker.
func TestStepAllocatesNothing(t *testing.T) {
	ms := map[string]model.Model{"grid-10x10": grid(t, 3), "rbm-d=100": rbm100(t, 1), "potts-4x4": potts(t, 2)}
	for _, tg := range samplertest.MultiStateTargets(t) {
		ms[tg.Name] = tg.Model
	}
	for name, m := range ms {
		if _, own := m.(model.ProposalIncremental); own {
			tr := model.NewProposalTracker(m, make([]int, m.Dim()))
			i := 0
			move := func() {
				i = (i + 7) % m.Dim()
				tr.Try(i, (tr.State()[i]+1)%len(m.States(i)))
				tr.Commit()
			}
			move()
			if a := testing.AllocsPerRun(100, move); a != 0 {
				t.Errorf("%s: %v allocations per tried and committed change of the proposal tracker", name, a)
			}
		}
		tr, _ := transform.ForModel(transform.Normal{}, m)
		s, err := newS(m, tr, 100, Settings{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		s.Step(ctx)
		if a := testing.AllocsPerRun(20, func() { s.Step(ctx) }); a != 0 {
			t.Errorf("%s: %v allocations per sweep", name, a)
		}
	}
}

// A factor graph whose log-table spans ±800 has relaxed gradients of
// e^800 = +Inf at some states (its proposal gradient, ±800, is finite, so
// the relaxation is reached through generic). A chain that starts at one
// reports an error, as the full recomputation does; a chain elsewhere
// rejects every move into one (the reverse move's probability is 0 there)
// and carries on, its weights finite.
func TestInfiniteGradient(t *testing.T) {
	fg, err := factorgraph.New([]int{2, 2}, []factorgraph.Factor{{Scope: []int{0, 1}, LogTable: []float64{0, 800, -800, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	g := generic{fg}
	tr, _ := transform.ForModel(transform.Normal{}, g)
	for _, start := range [][]int{{0, 0}, {1, 0}, {1, 1}, {0, 1}} {
		p := sampler.NewProblem(g, tr, 1, sampler.Init{}, rng.NewKey(1))
		copy(p.Z, start)
		s, err := New(p, Settings{})
		if err != nil {
			t.Fatal(err)
		}
		ref, err := newRef(p)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Step(context.Background())
		errRef := ref.Step(context.Background())
		if (err == nil) != (errRef == nil) {
			t.Fatalf("start %v: error %v; full recomputation %v", start, err, errRef)
		}
		if err != nil {
			continue
		}
		for range 10 {
			if err := s.Step(context.Background()); err != nil {
				t.Fatalf("start %v: %v", start, err)
			}
		}
		if z := s.Current(); z[0] != start[0] || z[1] != start[1] {
			t.Errorf("start %v: moved to %v", start, z)
		}
		checkState(t, "±800", s)
	}
}
