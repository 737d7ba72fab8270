package gfsvgd

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/svgd"
	"github.com/dstein/dstein/transform"
)

// testResult is what a run's tests look at.
type testResult struct {
	Samples    *sampler.Samples
	WeightESS  float64
	Impossible int
}

func result(s *Sampler) (*testResult, error) {
	st := s.Stats()
	ess, _ := st.Value("weight_ess")
	imp, _ := st.Value("impossible")
	return &testResult{Samples: &sampler.Samples{N: s.n, D: s.d, Z: append([]int(nil), s.Current()...)}, WeightESS: ess, Impossible: int(imp)}, nil
}

// newGF starts n particles drawn from init (N(0, 1) when not given) with r.
func newGF(m model.Model, tr *transform.Transform, rho transform.Surrogate, n int, set Settings, r *rand.Rand, init ...sampler.Init) (*Sampler, error) {
	in := sampler.Init{}
	if len(init) > 0 {
		in = init[0]
	}
	in = in.Resolved()
	x := sampler.InitialParticles(nil, max(n, 0), m.Dim(), in.Mean, in.Std, r)
	return NewWith(m, tr, rho, x, n, set)
}

// paperSettings and paperInit are the paper preset's (package infer).
var (
	paperSettings = Settings{LearningRate: 0.05, Bandwidth: kernel.Bandwidth{Rule: kernel.RuleMedianPaper}}
	paperInit     = sampler.Init{Mean: -2, Std: 1}
)

func run(t *testing.T, m model.Model, relaxed bool, n, iters int, set Settings, seed uint64, init ...sampler.Init) (*Sampler, *testResult) {
	t.Helper()
	tr, err := transform.ForModel(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	var rho transform.Surrogate = transform.BaseSurrogate{T: tr}
	if relaxed {
		if rho, err = transform.NewRelaxed(tr, m.(model.Relaxed), 0); err != nil {
			t.Fatal(err)
		}
	}
	s, err := newGF(m, tr, rho, n, set, rng.NewKey(seed).For(rng.Init).Rand(), init...)
	if err != nil {
		t.Fatal(err)
	}
	out := sampler.Run(context.Background(), s, sampler.RunOptions{Iters: iters})
	if out.Status != sampler.Completed {
		t.Fatalf("run ended %v after %d iterations: %v", out.Status, out.Iters, out.Err)
	}
	res, err := result(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, res
}

var paperCategorical = categorical.Variable{States: []float64{-1, -0.5, 0, 0.5, 1}, Probs: []float64{0.1, 0.2, 0.3, 0.1, 0.3}}

// The paper's appendix example: n = 1000, 500 iterations, ρ = p0 with the
// paper's preset (init N(−2, 1)). The issue asks for frequencies within 0.02
// of the probabilities; for scale, i.i.d. sampling has a standard error of
// at most 0.016 per frequency at n = 1000, so 0.02 is about 1.3 i.i.d.
// standard errors. The same example the way dstein runs by default (relaxed
// surrogate, default preset) is held to 3 i.i.d. standard errors,
// 3·√(p(1−p)/n) for each state: it lands 0.01–0.025 away depending on the
// seed and on rounding-level details, so the 0.02 bar would be a coin flip.
func TestPaperCategoricalExample(t *testing.T) {
	if testing.Short() {
		t.Skip("n = 1000 for 500 iterations")
	}
	m, err := categorical.New([]categorical.Variable{paperCategorical})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	for _, c := range []struct {
		preset  string
		relaxed bool
	}{{"paper", false}, {"default", true}} {
		set, init := Settings{}, sampler.Init{}
		if c.preset == "paper" {
			set, init = paperSettings, paperInit
		}
		_, res := run(t, m, c.relaxed, n, 500, set, 1, init)
		freq := sampler.Marginals(m, res.Samples)[0]
		for s, p := range paperCategorical.Probs {
			tol := 0.02
			if c.preset == "default" {
				tol = 3 * math.Sqrt(p*(1-p)/n)
			}
			if math.Abs(freq[s]-p) > tol {
				t.Errorf("preset %s: frequency of %v is %v; want %v ± %.3f", c.preset, paperCategorical.States[s], freq[s], p, tol)
			}
		}
		t.Logf("preset %s: frequencies %v, weight ESS %.0f", c.preset, freq, res.WeightESS)
	}
}

// meansCheck compares GF-SVGD's means with exact enumeration, n = 500, 500
// iterations. The tolerance is stated relative to i.i.d. sampling: exact
// marginals give the expected MSE of n i.i.d. draws, (1/d) Σ Var(z_i)/n,
// and GF-SVGD must reach an RMSE within 2.5 times the i.i.d. RMSE. This is a
// quality bar, not a statistical bound: GF-SVGD is deterministic given its
// initial draw and its error is mostly bias. Over 6 seeds the largest RMSE
// ratio measured was 1.32 (Ising, relaxed), 1.67 (Ising, base surrogate with
// the paper's bandwidth) and 1.30 (RBM, relaxed). The check can fail for the
// right reason: the RMSE of a sampler that ignores the model (all means 0)
// is asserted to exceed the tolerance.
func meansCheck(t *testing.T, name string, m model.Model, relaxed bool, set Settings) {
	t.Helper()
	ex, err := exact.Enumerate(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	const n = 500
	var iidMSE, naive float64
	for i, mu := range ex.Means {
		var v float64
		for s, p := range ex.Marginals[i] {
			dv := m.States(i)[s] - mu
			v += p * dv * dv
		}
		iidMSE += v / n
		naive += mu * mu
	}
	d := float64(m.Dim())
	iidRMSE := math.Sqrt(iidMSE / d)
	tol := 2.5 * iidRMSE
	if math.Sqrt(naive/d) <= tol {
		t.Fatalf("%s: the model's means are too small (RMS %v) for a tolerance of %v to discriminate", name, math.Sqrt(naive/d), tol)
	}
	_, res := run(t, m, relaxed, n, 500, set, 2)
	got := sampler.Means(m, sampler.Marginals(m, res.Samples))
	var mse float64
	for i := range got {
		mse += (got[i] - ex.Means[i]) * (got[i] - ex.Means[i])
	}
	rmse := math.Sqrt(mse / d)
	t.Logf("%s: RMSE of the means %.4f; i.i.d. RMSE %.4f (ratio %.2f); tolerance %.4f", name, rmse, iidRMSE, rmse/iidRMSE, tol)
	if rmse > tol {
		t.Errorf("%s: RMSE of the means %v exceeds %v (2.5 × i.i.d. RMSE); estimates %v, exact %v", name, rmse, tol, got, ex.Means)
	}
}

func TestMeansAgreeWithEnumeration(t *testing.T) {
	r := rng.NewKey(11).For(rng.Model).Rand()
	fields := make([]float64, 16)
	for i := range fields {
		fields[i] = -0.3 + 0.6*r.Float64()
	}
	g, err := ising.Grid(4, 4, false, 0.3, fields)
	if err != nil {
		t.Fatal(err)
	}
	// ρ = p0 works best with the paper's narrower kernel; the relaxed
	// surrogate with the default (wider) one.
	meansCheck(t, "ising 4×4, base surrogate, paper bandwidth", g, false, Settings{Bandwidth: kernel.Bandwidth{Rule: kernel.RuleMedianPaper}})
	meansCheck(t, "ising 4×4, relaxed surrogate, defaults", g, true, Settings{})

	b, err := rbm.Random(10, 4, 0.5, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	meansCheck(t, "rbm 10×4, relaxed surrogate, defaults", b, true, Settings{})
}

// The direction of one iteration against a brute-force evaluation of
// Σ_j w_j [∇log ρ(x_j) k(x_j, x_i) + ∇_{x_j} k(x_j, x_i)] with weights and
// bandwidth computed independently.
func TestDirectionMatchesBruteForce(t *testing.T) {
	m, err := rbm.Random(5, 3, 0.8, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := transform.ForModel(nil, m)
	rho, _ := transform.NewRelaxed(tr, m, 0.7)
	for _, weights := range []svgd.Weighting{svgd.SelfNormalized, svgd.Rank} {
		for _, bw := range []kernel.Bandwidth{{}, {Rule: kernel.RuleMedianPaper, Scale: 1.5}} {
			n, d := 9, 5
			set := Settings{Weights: weights, Bandwidth: bw}
			s, err := newGF(m, tr, rho, n, set, rng.Key{Seed: 3, Stream: 0}.Rand())
			if err != nil {
				t.Fatal(err)
			}
			x := append([]float64(nil), s.Positions()...)
			if err := s.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
			// Brute force.
			score := make([]float64, n*d)
			logw := make([]float64, n)
			z := make([]int, d)
			for j := range n {
				xj := x[j*d : (j+1)*d]
				lr := rho.LogProbScore(score[j*d:(j+1)*d], xj)
				logw[j] = lr - tr.LogTarget(m, xj, z)
			}
			w := bruteWeights(logw, weights)
			var d2 []float64
			sq := func(i, j int) float64 {
				var v float64
				for q := range d {
					v += (x[i*d+q] - x[j*d+q]) * (x[i*d+q] - x[j*d+q])
				}
				return v
			}
			for i := range n {
				for j := range i {
					d2 = append(d2, sq(i, j))
				}
			}
			sort.Float64s(d2)
			h := bw.FromMedian((d2[(len(d2)-1)/2]+d2[len(d2)/2])/2, n)
			if math.Abs(h-s.Last().Bandwidth) > 1e-12*h {
				t.Fatalf("bandwidth %v; brute force %v", s.Last().Bandwidth, h)
			}
			for i := range n {
				for q := range d {
					var want float64
					for j := range n {
						k := math.Exp(-sq(i, j) / h)
						want += w[j] * (score[j*d+q]*k + 2/h*(x[i*d+q]-x[j*d+q])*k)
					}
					if got := s.grad[i*d+q]; math.Abs(got-want) > 1e-10*(1+math.Abs(want)) {
						t.Fatalf("%v %+v: direction[%d][%d] = %v; brute force %v", weights, bw, i, q, got, want)
					}
				}
			}
		}
	}
}

func bruteWeights(logw []float64, how svgd.Weighting) []float64 {
	n := len(logw)
	w := make([]float64, n)
	if how == svgd.SelfNormalized {
		copy(w, logw)
		numeric.NormalizeLogWeights(w)
		return w
	}
	var sum float64
	for j := range n {
		if math.IsInf(logw[j], -1) {
			continue // ρ = 0: no weight
		}
		c := 0
		for l := range n {
			if logw[l] >= logw[j] {
				c++
			}
		}
		w[j] = float64(n) / float64(c)
		sum += w[j]
	}
	for j := range w {
		w[j] /= sum
	}
	return w
}

// Same seed, same particles to the last bit, on one core, two and three
// (the evaluation's chunks of particles differ with each).
func TestSameBitsAtAnyGOMAXPROCS(t *testing.T) {
	m, err := rbm.Random(30, 5, 0.3, 1, 9)
	if err != nil {
		t.Fatal(err)
	}
	procs := []int{1, 2, 3, 16}
	var runs [4][]float64
	for k, procs := range procs {
		old := runtime.GOMAXPROCS(procs)
		s, _ := run(t, m, true, 70, 25, Settings{}, 4)
		runtime.GOMAXPROCS(old)
		runs[k] = append([]float64(nil), s.Positions()...)
	}
	for c := 1; c < len(runs); c++ {
		for k := range runs[0] {
			if math.Float64bits(runs[0][k]) != math.Float64bits(runs[c][k]) {
				t.Fatalf("particle value %d differs between GOMAXPROCS 1 and %d: %v vs %v", k, procs[c], runs[0][k], runs[c][k])
			}
		}
	}
}

// One particle, one variable, coincident particles: defined, finite.
func TestDegenerateSizes(t *testing.T) {
	m, _ := categorical.New([]categorical.Variable{{States: []float64{0, 1}, Probs: []float64{0.3, 0.7}}})
	s, res := run(t, m, true, 1, 50, Settings{}, 1)
	if res.Samples.N != 1 || math.IsNaN(s.Positions()[0]) || res.WeightESS != 1 {
		t.Fatalf("n = 1: result %+v, particle %v", res, s.Positions())
	}
	tr, _ := transform.ForModel(nil, m)
	same, err := NewWith(m, tr, transform.BaseSurrogate{T: tr}, []float64{0.5, 0.5, 0.5}, 3, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err := same.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range same.Positions() {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("coincident start: particles %v", same.Positions())
		}
	}
}

// exclusion is a test model with joint zeros: spins in pairs (0,1), (2,3),
// … may not both be +1, and a field on spin 0.
type exclusion struct{ d int }

func (e exclusion) Dim() int             { return e.d }
func (e exclusion) States(int) []float64 { return model.Spins }
func (e exclusion) LogProb(z []int) float64 {
	for i := 0; i+1 < e.d; i += 2 {
		if z[i] == 1 && z[i+1] == 1 {
			return math.Inf(-1)
		}
	}
	return 0.3 * model.Spin(z[0])
}

// Joint zeros: particles that start in impossible states leave them, moves
// into impossible states are undone, nothing is NaN, and the means land
// within 4 i.i.d. standard errors (at most 1/√n each) of the exact ones.
func TestJointZerosLeaveNoImpossibleParticles(t *testing.T) {
	m := exclusion{6}
	ex, _ := exact.Enumerate(m, 0)
	const n = 300
	for _, mean := range []float64{-2, 0} {
		_, res := run(t, m, false, n, 500, Settings{}, 1, sampler.Init{Mean: mean})
		if res.Impossible != 0 {
			t.Errorf("init mean %v: %d particles end in impossible states", mean, res.Impossible)
		}
		got := sampler.Means(m, sampler.Marginals(m, res.Samples))
		for i := range got {
			if math.Abs(got[i]-ex.Means[i]) > 4/math.Sqrt(n) {
				t.Errorf("init mean %v: E[z_%d] = %v; exact %v", mean, i, got[i], ex.Means[i])
			}
		}
	}
}

// Unary zeros: states of probability zero have no bin, so no particle ever
// reaches them, and the other states get their probabilities.
func TestUnaryZerosAreNeverSampled(t *testing.T) {
	m, _ := categorical.New([]categorical.Variable{
		{States: []float64{-1, 0, 1}, Probs: []float64{0.3, 0, 0.7}},
		{States: []float64{-1, 0, 1}, Probs: []float64{0, 1, 0}},
	})
	const n = 300
	for _, relaxed := range []bool{false, true} {
		_, res := run(t, m, relaxed, n, 300, Settings{}, 5, sampler.Init{Mean: -2})
		marg := sampler.Marginals(m, res.Samples)
		if marg[0][1] != 0 || marg[1][0] != 0 || marg[1][2] != 0 || res.Impossible != 0 {
			t.Fatalf("relaxed=%v: impossible states sampled: %v", relaxed, marg)
		}
		// 4 i.i.d. standard errors of a frequency near 0.3: 4·√(0.21/n).
		if math.Abs(marg[0][0]-0.3) > 4*math.Sqrt(0.21/n) {
			t.Errorf("relaxed=%v: P(z0 = −1) = %v; want 0.3", relaxed, marg[0][0])
		}
	}
}

type nanSurrogate struct{}

func (nanSurrogate) LogProbScore(score, x []float64) float64 {
	for i := range score {
		score[i] = math.NaN()
	}
	return 0
}

// nanLater is the base surrogate until it has been called after bad
// calls, then returns NaN scores.
type nanLater struct {
	base  transform.BaseSurrogate
	calls *atomic.Int64
	bad   int64
}

func (s nanLater) LogProbScore(score, x []float64) float64 {
	v := s.base.LogProbScore(score, x)
	if s.calls.Add(1) > s.bad {
		for i := range score {
			score[i] = math.NaN()
		}
	}
	return v
}

// A NaN score at the start is an error of the constructor; one that
// appears during a run is an error of the step, and the error sticks.
func TestNaNSurrogateIsAnError(t *testing.T) {
	m, _ := ising.Grid(2, 2, false, 0.1, nil)
	tr, _ := transform.ForModel(nil, m)
	if _, err := newGF(m, tr, nanSurrogate{}, 4, Settings{}, rng.Key{Seed: 1, Stream: 0}.Rand()); err == nil {
		t.Fatal("a NaN score was accepted")
	}
	s, err := newGF(m, tr, nanLater{transform.BaseSurrogate{T: tr}, new(atomic.Int64), 4}, 4, Settings{}, rng.Key{Seed: 1}.Rand())
	if err != nil {
		t.Fatal(err)
	}
	err = s.Step(context.Background())
	if err == nil {
		t.Fatal("a NaN score during the run was accepted")
	}
	if err2 := s.Step(context.Background()); err2 != err {
		t.Fatalf("second Step returned %v; want the same error", err2)
	}
}

func TestRunCanBeCanceled(t *testing.T) {
	m, _ := ising.Grid(2, 2, false, 0.1, nil)
	tr, _ := transform.ForModel(nil, m)
	s, _ := newGF(m, tr, transform.BaseSurrogate{T: tr}, 4, Settings{}, rng.Key{Seed: 1, Stream: 0}.Rand())
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	out := sampler.Run(ctx, s, sampler.RunOptions{Iters: 100, AfterStep: func(done int) error {
		calls++
		if done == 7 {
			cancel()
		}
		return nil
	}})
	if out.Status != sampler.Canceled || out.Iters != 7 || s.Iter() != 7 {
		t.Fatalf("outcome %+v after %d steps; want canceled after 7", out, s.Iter())
	}
}

func TestStepDoesNotAllocate(t *testing.T) {
	m, _ := rbm.Random(20, 5, 0.3, 1, 1)
	tr, _ := transform.ForModel(nil, m)
	rho, _ := transform.NewRelaxed(tr, m, 1)
	for _, w := range []svgd.Weighting{svgd.SelfNormalized, svgd.Rank} {
		s, _ := newGF(m, tr, rho, 64, Settings{Weights: w}, rng.Key{Seed: 1, Stream: 0}.Rand())
		s.Step(context.Background())
		// sync.Pool may refill after a garbage collection: allow a stray
		// allocation, not one per step.
		ctx := context.Background()
		if a := testing.AllocsPerRun(50, func() { s.Step(ctx) }); a >= 1 {
			t.Errorf("%v weights: %.2f allocations per step", w, a)
		}
	}
}

func TestBadConstruction(t *testing.T) {
	m, _ := ising.Grid(2, 2, false, 0.1, nil)
	tr, _ := transform.ForModel(nil, m)
	rho := transform.BaseSurrogate{T: tr}
	if _, err := NewWith(m, tr, rho, []float64{1, 2, 3}, 1, Settings{}); err == nil {
		t.Error("wrong initial length accepted")
	}
	if _, err := newGF(m, tr, rho, 0, Settings{}, rng.Key{Seed: 1, Stream: 0}.Rand()); err == nil {
		t.Error("n = 0 accepted")
	}
	if _, err := newGF(m, tr, rho, 3, Settings{LearningRate: -1}, rng.Key{Seed: 1, Stream: 0}.Rand()); err == nil {
		t.Error("negative learning rate accepted")
	}
	tr3, _ := transform.New(nil, []int{2, 2, 2})
	if _, err := newGF(m, tr3, rho, 3, Settings{}, rng.Key{Seed: 1, Stream: 0}.Rand()); err == nil {
		t.Error("transform of the wrong dimension accepted")
	}
	if _, err := newGF(m, tr, rho, 3, Settings{Surrogate: "nope"}, rng.Key{Seed: 1}.Rand()); err == nil {
		t.Error("unknown preset accepted")
	}
}

// zeroRight is ρ = p0 except that it is zero (log −Inf) where x_0 > 2, with
// a NaN score there, as a surrogate may legitimately be.
type zeroRight struct{ t *transform.Transform }

func (z zeroRight) LogProbScore(score, x []float64) float64 {
	f := transform.BaseSurrogate{T: z.t}.LogProbScore(score, x)
	if x[0] > 2 {
		for i := range score {
			score[i] = math.NaN()
		}
		return math.Inf(-1)
	}
	return f
}

// Particles where ρ = 0 carry no weight under either weighting, so their
// (undefined) scores never reach the update; a surrogate that is zero at
// every particle is an error, and the error sticks.
func TestZeroSurrogateParticlesCarryNoWeight(t *testing.T) {
	m, _ := ising.Grid(1, 2, false, 0.2, nil)
	tr, _ := transform.ForModel(nil, m)
	for _, w := range []svgd.Weighting{svgd.SelfNormalized, svgd.Rank} {
		x := []float64{3, 0.5, -0.4, 0.2, 0.1, -1, 1.5, 0.3}
		s, err := NewWith(m, tr, zeroRight{tr}, x, 4, Settings{Weights: w})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Step(context.Background()); err != nil {
			t.Fatalf("%v: %v", w, err)
		}
		if s.w[0] != 0 {
			t.Errorf("%v: particle with ρ = 0 has weight %v", w, s.w[0])
		}
		for _, v := range s.Positions() {
			if math.IsNaN(v) {
				t.Fatalf("%v: NaN particle %v", w, s.Positions())
			}
		}
	}
	_, err := NewWith(m, tr, zeroRight{tr}, []float64{3, 0, 4, 0}, 2, Settings{})
	if err == nil || !strings.Contains(err.Error(), "zero at every particle") {
		t.Fatalf("error %v; want the surrogate to be reported zero everywhere", err)
	}
}
