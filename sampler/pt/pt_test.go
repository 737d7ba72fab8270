package pt

import (
	"context"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

func problem(t testing.TB, m model.Model, n int, seed uint64) *sampler.Problem {
	t.Helper()
	tr, err := transform.ForModel(transform.Normal{}, m)
	if err != nil {
		t.Fatal(err)
	}
	return sampler.NewProblem(m, tr, n, sampler.Init{}, rng.NewKey(seed))
}

func newS(t testing.TB, m model.Model, n int, set Settings, seed uint64) *Sampler {
	t.Helper()
	s, err := New(problem(t, m, n, seed), set)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t testing.TB, s sampler.Sampler, iters int) {
	t.Helper()
	for range iters {
		if err := s.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func stat(s sampler.Sampler, name string) float64 {
	v, ok := s.Stats().Value(name)
	if !ok {
		panic("no statistic " + name)
	}
	return v
}

// plain hides every optional interface of a model (the spin kernel and the
// model's own tracker), so the generic single-site path is tested too.
type plain struct{ model.Model }

// tracked is an Ising model seen through its tracker only: the generic
// single-site path at the speed of the model's own tracker.
type tracked struct{ m *ising.Ising }

func (t tracked) Dim() int                         { return t.m.Dim() }
func (t tracked) States(i int) []float64           { return t.m.States(i) }
func (t tracked) LogProb(z []int) float64          { return t.m.LogProb(z) }
func (t tracked) NewTracker(z []int) model.Tracker { return t.m.NewTracker(z) }

// On every small model (and on the Ising one through the generic path)
// the β = 1 replicas of 2000 chains match exact marginals within
// CheckMarginals' 5 binomial standard errors after 60 iterations (20 of
// them tuning).
func TestSmallModels(t *testing.T) {
	models := samplertest.SmallModels(t)
	models["ising (generic)"] = plain{models["ising"]}
	for name, m := range models {
		s := newS(t, m, 2000, Settings{Tune: 20}, 3)
		run(t, s, 60)
		z := &sampler.Samples{N: 2000, D: m.Dim(), Z: s.Current()}
		worst := samplertest.CheckMarginals(t, "pt on "+name, m, z, 0)
		t.Logf("%s: worst %.1f SE; ladder %.3f; swap rate %.2f (min %.2f), Λ %.2f, round trips %.1f",
			name, worst, s.Ladder(), stat(s, "swap_rate"), stat(s, "min_swap_rate"), stat(s, "barrier"), stat(s, "round_trips"))
	}
}

// exactGrid returns P(M > 0) (M = Σ z_i) and the pair moments E[z_i z_j]
// of an Ising model by visiting its 2^d states, normalised with
// exact.Enumerate's log Z.
func exactGrid(t testing.TB, m *ising.Ising) (float64, [][]float64) {
	t.Helper()
	res, err := exact.Enumerate(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	d := m.Dim()
	pair := make([][]float64, d)
	for i := range pair {
		pair[i] = make([]float64, d)
	}
	z := make([]int, d)
	var pos, total float64
	for code := range 1 << d {
		mag := 0
		for i := range z {
			z[i] = code >> i & 1
			mag += 2*z[i] - 1
		}
		w := math.Exp(m.LogProb(z) - res.LogZ)
		total += w
		if mag > 0 {
			pos += w
		}
		for i := range d {
			for j := i + 1; j < d; j++ {
				pair[i][j] += w * model.Spin(z[i]) * model.Spin(z[j])
			}
		}
	}
	if math.Abs(total-1) > 1e-9 {
		t.Fatalf("probabilities sum to %v", total)
	}
	return pos, pair
}

// sampleGrid returns the fraction of samples with M > 0 and their pair
// moments.
func sampleGrid(z []int, n, d int) (float64, [][]float64) {
	pair := make([][]float64, d)
	for i := range pair {
		pair[i] = make([]float64, d)
	}
	pos := 0.0
	for c := range n {
		row := z[c*d : (c+1)*d]
		mag := 0
		for _, v := range row {
			mag += 2*v - 1
		}
		if mag > 0 {
			pos++
		}
		for i := range d {
			for j := i + 1; j < d; j++ {
				pair[i][j] += model.Spin(row[i]) * model.Spin(row[j]) / float64(n)
			}
		}
	}
	return pos / float64(n), pair
}

// The 4×4 grid at coupling 0.8 with fields 0.05 has two modes (all +1 and
// all −1) that single-site moves rarely cross. Over n = 2000 chains (1000
// for the slower generic path), the fraction in M > 0 must be within 4
// binomial standard errors sqrt(p(1−p)/n) of the exact probability, and
// every pair moment within 5 standard errors sqrt((1 − E[z_i z_j]²)/n)
// (120 pairs; a false alarm of one of them has probability below 10^−4). Plain Gibbs with as many
// sweeps as the β = 1 replica makes, and with as many as all the replicas
// make, is logged for comparison (it relaxes between the modes in about
// 400 sweeps: 150 sweeps leave it about 15 SE off, 1200 about 1 SE).
func TestTwoModeGrid(t *testing.T) {
	fields := make([]float64, 16)
	for i := range fields {
		fields[i] = 0.05
	}
	m, err := ising.Grid(4, 4, false, 0.8, fields)
	if err != nil {
		t.Fatal(err)
	}
	const iters = 150
	wantPos, wantPair := exactGrid(t, m)
	for _, c := range []struct {
		name string
		m    model.Model
		n    int
		kern Kernel
	}{{"spin kernel", m, 2000, Site}, {"generic", tracked{m}, 1000, Site}, {"cluster kernel", m, 2000, Cluster}} {
		name, n := c.name, float64(c.n)
		s := newS(t, c.m, c.n, Settings{Kernel: c.kern}, 11)
		run(t, s, iters)
		pos, pair := sampleGrid(s.Current(), c.n, 16)
		se := math.Sqrt(wantPos * (1 - wantPos) / n)
		if math.Abs(pos-wantPos) > 4*se {
			t.Errorf("%s: P(M > 0) = %.4f; exact %.4f (SE %.4f)", name, pos, wantPos, se)
		}
		worst := 0.0
		for i := range 16 {
			for j := i + 1; j < 16; j++ {
				se := math.Sqrt((1 - wantPair[i][j]*wantPair[i][j]) / n)
				worst = max(worst, math.Abs(pair[i][j]-wantPair[i][j])/se)
				if math.Abs(pair[i][j]-wantPair[i][j]) > 5*se {
					t.Errorf("%s: E[z%d z%d] = %.4f; exact %.4f (SE %.4f)", name, i, j, pair[i][j], wantPair[i][j], se)
				}
			}
		}
		t.Logf("pt (%s): P(M > 0) = %.4f, exact %.4f (SE %.4f); pair moments worst %.1f SE; ladder %.3f; swap rates %.2f (min %.2f), Λ %.2f, round trips %.1f per chain",
			name, pos, wantPos, se, worst, s.Ladder(), stat(s, "swap_rate"), stat(s, "min_swap_rate"), stat(s, "barrier"), stat(s, "round_trips"))
		if c.kern == Cluster && stat(s, "largest_cluster_fraction") < 0.5 {
			t.Errorf("cluster kernel: the largest cluster holds %.2f of the sites at J = 0.8", stat(s, "largest_cluster_fraction"))
		}
		if name == "spin kernel" && stat(s, "round_trips") < 1 {
			t.Errorf("%.2f round trips per chain in %d iterations", stat(s, "round_trips"), iters-DefaultTune)
		}
	}
	const n = 2000
	for _, sweeps := range []int{iters, DefaultLadder * iters} {
		g, err := gibbs.New(problem(t, m, n, 11), gibbs.Settings{})
		if err != nil {
			t.Fatal(err)
		}
		run(t, g, sweeps)
		pos, _ := sampleGrid(g.Current(), n, 16)
		t.Logf("gibbs with %d sweeps: P(M > 0) = %.4f (exact %.4f, %.1f SE off)", sweeps, pos, wantPos, math.Abs(pos-wantPos)/math.Sqrt(wantPos*(1-wantPos)/n))
	}
}

// At β = 0 a sweep draws each variable uniformly among the states that
// keep p* positive: the hot replica of the categorical model (states 0 and
// 2 of variable 1 possible, state 1 not) is uniform on the support; 4000
// chains, 5 binomial standard errors.
func TestBetaZeroIsUniformOnTheSupport(t *testing.T) {
	m := samplertest.SmallModels(t)["categorical"]
	const n = 4000
	s := newS(t, m, n, Settings{Ladder: 2, Tune: -1}, 5)
	run(t, s, 3)
	count := [2][5]float64{}
	for c := range s.chains {
		ch := &s.chains[c]
		for i, v := range ch.tr[ch.perm[1]].State() {
			count[i][v]++
		}
	}
	for i, want := range [][]float64{{0.2, 0.2, 0.2, 0.2, 0.2}, {0.5, 0, 0.5}} {
		for st, p := range want {
			got := count[i][st] / n
			if se := math.Sqrt(p * (1 - p) / n); math.Abs(got-p) > 5*se {
				t.Errorf("β = 0: P(z%d = %d) = %.4f, want %.2f", i, st, got, p)
			}
		}
	}
}

func TestAcceptProb(t *testing.T) {
	inf := math.Inf(-1)
	for _, c := range []struct{ dBeta, la, lb, want float64 }{
		{0.5, -1, -3, math.Exp(-1)},
		{0.5, -3, -1, 1},
		{1, inf, -2, 1},  // an impossible state leaves the higher β
		{1, -2, inf, 0},  // and never comes to it
		{1, inf, inf, 1}, // two impossible states: no NaN
		{0.3, 4, 4, 1},
	} {
		if got := acceptProb(c.dBeta, c.la, c.lb); math.Abs(got-c.want) > 1e-15 || math.IsNaN(got) {
			t.Errorf("acceptProb(%v, %v, %v) = %v, want %v", c.dBeta, c.la, c.lb, got, c.want)
		}
	}
}

// After adaptation the barrier, interpolated linearly over the old ladder,
// takes equal steps between the new β's.
func TestAdaptSplitsTheBarrierEvenly(t *testing.T) {
	ladder := []float64{1, 0.75, 0.5, 0.25, 0}
	old := slices.Clone(ladder)
	rate := []float64{0.9, 0.2, 0.5, 0.95}
	tu := newTuner(10, len(ladder))
	if !tu.adapt(ladder, rate, []int64{1, 1, 1, 1}) {
		t.Fatal("ladder not adapted")
	}
	cum := []float64{0, 0, 0, 0, 0}
	for j := 3; j >= 0; j-- {
		cum[j] = cum[j+1] + max(1-rate[j], minRejection*(old[j]-old[j+1]))
	}
	lambda := func(b float64) float64 {
		for j := range 4 {
			if b >= old[j+1] {
				return cum[j+1] + (b-old[j+1])/(old[j]-old[j+1])*(cum[j]-cum[j+1])
			}
		}
		return 0
	}
	for j := range ladder {
		want := cum[0] * float64(4-j) / 4
		if got := lambda(ladder[j]); math.Abs(got-want) > 1e-12 {
			t.Errorf("Λ(β_%d = %.4f) = %.4f, want %.4f", j, ladder[j], got, want)
		}
	}
	if ladder[0] != 1 || ladder[4] != 0 {
		t.Errorf("ends moved: %v", ladder)
	}
	// A pair never proposed leaves the ladder alone.
	if tu.adapt(ladder, rate, []int64{1, 0, 1, 1}) {
		t.Error("adapted without every pair's rate")
	}
}

// The tuning rounds end at 2, 6, 14 and then run to the end of tuning.
func TestTuningRounds(t *testing.T) {
	tu := newTuner(50, 4)
	var ends []int
	for tu.roundEnd != 0 {
		ends = append(ends, tu.roundEnd)
		tu.next(tu.roundEnd)
	}
	if !slices.Equal(ends, []int{2, 6, 14, 50}) {
		t.Errorf("rounds end at %v", ends)
	}
}

// The ladder moves while tuning, then stays fixed; Stats have the same
// names at every step and evaluations follow their definition.
func TestLadderFreezesAndStats(t *testing.T) {
	m := samplertest.SmallModels(t)["rbm"]
	s := newS(t, m, 50, Settings{Ladder: 5, Tune: 20}, 2)
	even := slices.Clone(s.Ladder())
	var names []string
	for it := range 40 {
		run(t, s, 1)
		var got []string
		for _, v := range s.Stats().Values {
			got = append(got, v.Name)
			if math.IsNaN(v.Value) {
				t.Errorf("iteration %d: %s is NaN", it, v.Name)
			}
		}
		if names == nil {
			names = got
		} else if !slices.Equal(names, got) {
			t.Fatalf("statistics changed from %v to %v", names, got)
		}
		if it == 19 {
			even = slices.Clone(s.Ladder())
		}
	}
	if !slices.Equal(even, s.Ladder()) {
		t.Errorf("ladder moved after tuning: %v, then %v", even, s.Ladder())
	}
	if slices.Equal(even, evenLadder(5, 0)) {
		t.Errorf("ladder never adapted: %v", even)
	}
	want := []string{"swap_rate", "min_swap_rate", "barrier", "beta_min", "round_trips", "swap_1", "swap_2", "swap_3", "swap_4"}
	if !slices.Equal(names, want) {
		t.Errorf("statistics %v, want %v", names, want)
	}
	// 40 iterations of 5 sweeps of d = 8 sites; 2 log p* per proposal,
	// 2 pairs proposed at even iterations and 2 at odd ones.
	if got, want := s.Stats().Evaluations, int64(50*(40*5*8+40*2*2)); got != want {
		t.Errorf("%d evaluations, want %d", got, want)
	}
}

func TestSameBitsAtAnyGOMAXPROCS(t *testing.T) {
	g, _ := ising.Grid(4, 4, false, 0.5, nil)
	for name, m := range map[string]model.Model{"ising": g, "ising (cluster)": g, "factorgraph": samplertest.SmallModels(t)["factorgraph"]} {
		var runs [3][]int
		var ladders [3][]float64
		var stats [3]sampler.Stats
		kern := Site
		if name == "ising (cluster)" {
			kern = Cluster
		}
		for k, procs := range []int{1, 2, 16} {
			old := runtime.GOMAXPROCS(procs)
			s := newS(t, m, 40, Settings{Tune: 12, Kernel: kern}, 8)
			run(t, s, 20)
			runtime.GOMAXPROCS(old)
			runs[k], ladders[k], stats[k] = slices.Clone(s.Current()), slices.Clone(s.Ladder()), s.Stats()
		}
		for c := 1; c < 3; c++ {
			if !slices.Equal(runs[0], runs[c]) || !slices.Equal(ladders[0], ladders[c]) || !slices.Equal(stats[0].Values, stats[c].Values) {
				t.Errorf("%s: results differ between GOMAXPROCS 1 and %d", name, []int{1, 2, 16}[c])
			}
		}
	}
}

func TestSettings(t *testing.T) {
	for _, bad := range []Settings{{Ladder: 1}, {Ladder: -2}, {BetaMin: 1}, {BetaMin: -0.1}, {BetaMin: math.NaN()}, {Tune: -2}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	r := (&Settings{}).Resolved().(*Settings)
	if *r != (Settings{Ladder: DefaultLadder, Tune: DefaultTune}) {
		t.Errorf("resolved %+v", *r)
	}
	m := samplertest.SmallModels(t)["ising"]
	s := newS(t, m, 3, Settings{Ladder: 4, BetaMin: 0.1, Tune: -1}, 1)
	run(t, s, 10)
	if !slices.Equal(s.Ladder(), evenLadder(4, 0.1)) || stat(s, "beta_min") != 0.1 {
		t.Errorf("untuned ladder %v", s.Ladder())
	}
}

// The RBM kernel (Kernel: Block): block Gibbs of the tempered joint. The
// β = 1 replicas' visible units match the exact marginals (within
// CheckMarginals' standard errors) on the conformance kit's RBM, a
// strongly coupled RBM (12 visible, 8 hidden, W ~ N(0, 1.5²), several modes)
// and an RBM with {0, 1} units;
// the kernel is the one that ran, and its results do not depend on the
// number of cores.
func TestRBMKernel(t *testing.T) {
	strong, err := rbm.Random(12, 8, 1.5, 1, 6)
	if err != nil {
		t.Fatal(err)
	}
	W, b, c, err := rbm.RandomParams(9, 5, 0.8, 0.5, 2)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := rbm.NewBinary(W, b, c)
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]model.Model{"kit": samplertest.SmallModels(t)["rbm"], "strong": strong, "binary": bin} {
		s := newS(t, m, 2000, Settings{Tune: 20, Kernel: Block}, 3)
		if s.rbm == nil {
			t.Fatalf("%s: the RBM kernel did not run", name)
		}
		run(t, s, 80)
		z := &sampler.Samples{N: 2000, D: m.Dim(), Z: s.Current()}
		worst := samplertest.CheckMarginals(t, "pt (rbm kernel) on "+name, m, z, 0)
		t.Logf("%s: worst %.1f SE; ladder %.3f; min swap rate %.2f, Λ %.2f", name, worst, s.Ladder(), stat(s, "min_swap_rate"), stat(s, "barrier"))
	}
	var runs [3][]int
	for k, procs := range []int{1, 2, 16} {
		old := runtime.GOMAXPROCS(procs)
		s := newS(t, strong, 40, Settings{Tune: 12, Kernel: Block}, 8)
		run(t, s, 20)
		runtime.GOMAXPROCS(old)
		runs[k] = slices.Clone(s.Current())
	}
	if !slices.Equal(runs[0], runs[1]) || !slices.Equal(runs[0], runs[2]) {
		t.Error("the RBM kernel's results differ between GOMAXPROCS 1, 2 and 16")
	}
	// The zero value keeps single-site sweeps.
	if s := newS(t, strong, 2, Settings{}, 1); s.rbm != nil {
		t.Error("the zero Settings ran the RBM kernel")
	}
}

// Each replica of the RBM kernel targets the tempered joint: with a fixed
// ladder {1, 0.4}, each level's visible units match the exact marginals of
// π_β(z) ∝ exp(β·bᵀz) Π_k 2cosh(β·a_k(z)), enumerated. (A kernel that drew
// the hidden units at β = 1 in every replica kept the β = 1 marginals
// within 4.4 SE over 20,000 chains; it fails here.)
func TestRBMKernelTemperedReplica(t *testing.T) {
	r, err := rbm.Random(8, 4, 1.2, 0.5, 4)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4000
	d := r.Dim()
	s := newS(t, r, n, Settings{Ladder: 2, BetaMin: 0.4, Tune: -1, Kernel: Block}, 9)
	run(t, s, 400)
	for lvl, beta := range s.Ladder() {
		want := make([]float64, d)
		var total float64
		z := make([]float64, d)
		for code := range 1 << d {
			for i := range d {
				z[i] = float64(2*(code>>i&1) - 1)
			}
			lp := 0.0
			for i, b := range r.VisibleBias() {
				lp += beta * b * z[i]
			}
			for k := range r.Hidden() {
				a := r.HiddenBias()[k]
				for i, w := range r.HiddenWeights(k) {
					a += w * z[i]
				}
				lp += math.Log(2 * math.Cosh(beta*a))
			}
			p := math.Exp(lp)
			total += p
			for i := range d {
				if z[i] > 0 {
					want[i] += p
				}
			}
		}
		got := make([]float64, d)
		row := make([]int, d)
		for c := range s.chains {
			ch := &s.chains[c]
			ch.reps[ch.perm[lvl]].states(row)
			for i, v := range row {
				got[i] += float64(v) / n
			}
		}
		for i := range d {
			w := want[i] / total
			se := math.Sqrt(w * (1 - w) / n)
			if math.Abs(got[i]-w) > 5*se {
				t.Errorf("β = %v replica: P(z%d = +1) = %.4f, exact %.4f (SE %.4f)", beta, i, got[i], w, se)
			}
		}
	}
}
