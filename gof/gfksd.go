package gof

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dstein/dstein/internal/gemm"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/transform"
)

// GFKSDSettings configure GF-KSD. The zero value is the default: the
// relaxed surrogate at τ = DefaultTestTemperature where the model has a
// relaxed form (ρ = p0 otherwise) and the bandwidth DefaultTestBandwidth.
type GFKSDSettings struct {
	// Surrogate is "relaxed", "base" (ρ = p0) or "" for the default.
	Surrogate string
	// Temperature is the relaxed surrogate's τ; 0 means
	// DefaultTestTemperature.
	Temperature float64
	// Bandwidth of the RBF kernel exp(−‖x − x'‖²/h) (or of the features,
	// see Kernel); nil means DefaultTestBandwidth.
	Bandwidth *kernel.Bandwidth
	// Kernel is "rbf" (the paper's RBF kernel on x) or "soft" (the RBF
	// kernel on the soft bin memberships φ(x) at temperature KernelTemp:
	// exp(−‖φ(x) − φ(x')‖²/h), which compares the bins that x and x' lie
	// in rather than where they lie inside them). "" means DefaultKernel.
	Kernel string
	// KernelTemp is the memberships' temperature of the soft kernel; 0
	// means DefaultKernelTemp.
	KernelTemp float64
}

// DefaultKernel and DefaultKernelTemp are GF-KSD's default kernel.
const (
	DefaultKernel     = "rbf"
	DefaultKernelTemp = 0.5
)

// DefaultTestTemperature is the default τ of GF-KSD's relaxed surrogate.
// It is much sharper than the sampler's: on a d = 50 RBM at n = 100, ρ = p0
// rejected a true model in 80% of 100 trials at α = 0.05 (weight ESS 2.8 of
// 100) and τ = 0.25 in 13% (ESS 5.6), while τ = 0.05 rejected in 2% (ESS 32)
// and τ = 0.02 in 4% (ESS 61) (TestLevelRBMSurrogates, build tag long); of
// the calibrated settings τ = 0.02 had the most power against W + N(0, 0.1²)
// noise, 0.47 against 0.23 for τ = 0.05 (TestPowerSettingsRBM).
const DefaultTestTemperature = 0.02

// MinCheckedTemperature and MaxCheckedTemperature bound the temperatures
// at which GF-KSD's level was measured (EXPERIMENTS.md); Result.LevelChecked
// is false outside them.
const (
	MinCheckedTemperature = 0.02
	MaxCheckedTemperature = 0.05
)

// DefaultTestBandwidth is GF-KSD's default bandwidth: h = med², the median
// heuristic of kernel tests.
var DefaultTestBandwidth = kernel.Bandwidth{Rule: kernel.RuleMedian}

// resolve fills the defaults for m.
func (set GFKSDSettings) resolve(m model.Model) (GFKSDSettings, error) {
	if set.Surrogate == "" {
		set.Surrogate = "base"
		if _, ok := m.(model.Relaxed); ok {
			set.Surrogate = "relaxed"
		}
	}
	if set.Temperature == 0 {
		set.Temperature = DefaultTestTemperature
	}
	if set.Bandwidth == nil {
		bw := DefaultTestBandwidth
		set.Bandwidth = &bw
	}
	if set.Kernel == "" {
		set.Kernel = DefaultKernel
	}
	if set.Kernel != "rbf" && set.Kernel != "soft" {
		return set, fmt.Errorf("unknown GF-KSD kernel %q; want rbf or soft", set.Kernel)
	}
	if set.KernelTemp == 0 {
		set.KernelTemp = DefaultKernelTemp
	}
	if !(set.KernelTemp > 0) || math.IsInf(set.KernelTemp, 1) {
		return set, fmt.Errorf("kernel temperature %v: want a finite number > 0", set.KernelTemp)
	}
	if err := set.Bandwidth.Validate(); err != nil {
		return set, err
	}
	return set, nil
}

func buildSurrogate(name string, m model.Model, t *transform.Transform, tau float64) (transform.Surrogate, error) {
	return transform.ByName(name, m, t, tau)
}

// checkSamples validates the shape and the state indices of s against m.
func checkSamples(m model.Model, s *sampler.Samples, minN int) error {
	if s == nil || s.N < minN {
		n := 0
		if s != nil {
			n = s.N
		}
		return fmt.Errorf("%d samples: a test needs at least %d", n, minN)
	}
	if s.D != m.Dim() {
		return fmt.Errorf("samples have %d variables, the model has %d", s.D, m.Dim())
	}
	if len(s.Z) != s.N*s.D {
		return fmt.Errorf("samples hold %d states, want %d×%d", len(s.Z), s.N, s.D)
	}
	for i := range s.N {
		for l, z := range s.Row(i) {
			if k := len(m.States(l)); z < 0 || z >= k {
				return fmt.Errorf("sample %d, variable %d: state index %d, want 0…%d", i, l, z, k-1)
			}
		}
	}
	return nil
}

// Lift draws, for each sample z_i, a continuous point x_i (row-major n×d)
// from the base density truncated to z_i's bins, so that x follows p_c
// exactly when z follows p*: the paper's transform of discrete samples. The
// draws come from key.For(rng.Lift).
func Lift(t *transform.Transform, s *sampler.Samples, key rng.Key) ([]float64, error) {
	if s.D != t.Dim() {
		return nil, fmt.Errorf("samples have %d variables, the transform has %d", s.D, t.Dim())
	}
	for i := range s.N {
		for l, z := range s.Row(i) {
			if z < 0 || z >= t.NumStates(l) || !t.HasBin(l, z) {
				return nil, fmt.Errorf("sample %d, variable %d: state %d has probability zero under the model", i, l, z)
			}
		}
	}
	x := make([]float64, s.N*s.D)
	r := key.For(rng.Lift).Rand()
	for i := range s.N {
		t.SampleGiven(x[i*s.D:(i+1)*s.D], s.Row(i), r)
	}
	return x, nil
}

// GFKSD runs the gradient-free KSD test of the samples against m.
func GFKSD(ctx context.Context, m model.Model, s *sampler.Samples, set GFKSDSettings, o Options) (*Result, error) {
	if res, done, err := notBootstrapped(ctx, "gfksd", m, s, o, func(ctx context.Context, s *sampler.Samples, o Options) (*Result, error) {
		return GFKSD(ctx, m, s, set, o)
	}); done {
		return res, err
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := checkSamples(m, s, 2); err != nil {
		return nil, err
	}
	set, err = set.resolve(m)
	if err != nil {
		return nil, err
	}
	if bad := sampler.Impossible(m, s); bad > 0 {
		return rejectImpossible("gfksd", s.N, bad, o), nil
	}
	t, err := transform.ForModel(transform.Normal{}, m)
	if err != nil {
		return nil, err
	}
	sur, err := buildSurrogate(set.Surrogate, m, t, set.Temperature)
	if err != nil {
		return nil, err
	}
	x, err := Lift(t, s, o.Key)
	if err != nil {
		return nil, err
	}
	var feat *features
	if set.Kernel == "soft" {
		feat, err = softFeatures(m, t, x, s.N, set.KernelTemp)
		if err != nil {
			return nil, err
		}
	}
	g, err := newGFKSDMatrix(m, t, sur, s, x, *set.Bandwidth, feat)
	if err != nil {
		return nil, err
	}
	res, err := steinTest(ctx, "gfksd", g.h, s.N, o)
	if err != nil {
		return nil, err
	}
	res.Bandwidth, res.ESS = g.bw, g.ess
	res.Surrogate, res.Kernel, res.BandwidthRule = set.Surrogate, set.Kernel, set.Bandwidth.Rule.String()
	if set.Surrogate == "relaxed" {
		res.Temperature = set.Temperature
	}
	res.LevelChecked = set.Surrogate == "relaxed" && set.Temperature >= MinCheckedTemperature && set.Temperature <= MaxCheckedTemperature
	return res, nil
}

// gfksdMatrix is the weighted Stein kernel matrix H_ij = w_i κ_ρ(x_i, x_j) w_j.
type gfksdMatrix struct {
	h       []float64
	bw, ess float64
}

func newGFKSDMatrix(m model.Model, t *transform.Transform, sur transform.Surrogate, s *sampler.Samples, x []float64, bw kernel.Bandwidth, feat *features) (*gfksdMatrix, error) {
	n, d := s.N, s.D
	score := make([]float64, n*d)
	logw := make([]float64, n)
	for i := range n {
		xi := x[i*d : (i+1)*d]
		lr := sur.LogProbScore(score[i*d:(i+1)*d], xi)
		lp := t.LogBase(xi) + m.LogProb(s.Row(i))
		switch {
		case math.IsNaN(lr) || math.IsInf(lr, 1):
			return nil, fmt.Errorf("gfksd: the surrogate's log-density is %v at sample %d", lr, i)
		case math.IsInf(lr, -1):
			logw[i] = math.Inf(-1) // ρ = 0: weight 0, score unused
			clear(score[i*d : (i+1)*d])
		default:
			logw[i] = lr - lp
		}
		for _, v := range score[i*d : (i+1)*d] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("gfksd: the surrogate's score is %v at sample %d", v, i)
			}
		}
	}
	// Weights in log space, normalised once to mean 1 (a common factor
	// scales the statistic and every bootstrap draw alike).
	mx := math.Inf(-1)
	for _, v := range logw {
		mx = max(mx, v)
	}
	if math.IsInf(mx, -1) {
		return nil, fmt.Errorf("gfksd: the surrogate gives every sample density zero")
	}
	w := make([]float64, n)
	var sw, sw2 float64
	for i, v := range logw {
		w[i] = math.Exp(v - mx)
		sw += w[i]
		sw2 += w[i] * w[i]
	}
	for i := range w {
		w[i] *= float64(n) / sw
	}
	ess := sw * sw / sw2

	if feat != nil {
		return feat.matrix(score, w, bw, ess), nil
	}
	rbf := kernel.NewRBF(n, d)
	h := rbf.Compute(x, bw)
	ss := make([]float64, n*n)
	sx := make([]float64, n*n)
	(&gemm.ABt{C: ss, A: score, B: score, M: n, N: n, K: d, Ldc: n, Lda: d, Ldb: d}).Mul()
	(&gemm.ABt{C: sx, A: score, B: x, M: n, N: n, K: d, Ldc: n, Lda: d, Ldb: d}).Mul()
	task := &gfksdTask{k: rbf.K, ss: ss, sx: sx, w: w, n: n, h: h, d: float64(d)}
	parallel.For(n, 16, task)
	return &gfksdMatrix{h: ss, bw: h, ess: ess}, nil
}

// gfksdTask turns rows of S·Sᵀ into rows of H in place:
//
//	κ_ij = k_ij [s_i·s_j + (2/h) s_i·(x_i − x_j) − (2/h) s_j·(x_i − x_j) + 2d/h − 4‖x_i − x_j‖²/h²]
//
// for k = exp(−‖x − x'‖²/h), with ‖x_i − x_j‖² = −h log k_ij.
type gfksdTask struct {
	k, ss, sx, w []float64
	n            int
	h, d         float64
}

func (t *gfksdTask) Do(lo, hi int) {
	n, h := t.n, t.h
	c1, c0 := 2/h, 2*t.d/h
	for i := lo; i < hi; i++ {
		sxii := t.sx[i*n+i]
		for j := range n {
			kij := t.k[i*n+j]
			if kij == 0 {
				t.ss[i*n+j] = 0
				continue
			}
			d2 := 0.0
			if i != j {
				d2 = -h * math.Log(kij)
			}
			// s_i·(x_i − x_j) = sx_ii − sx_ij; s_j·(x_i − x_j) = sx_ji − sx_jj.
			v := t.ss[i*n+j] + c1*(sxii-t.sx[i*n+j]) - c1*(t.sx[j*n+i]-t.sx[j*n+j]) + c0 - 4*d2/(h*h)
			t.ss[i*n+j] = t.w[i] * kij * v * t.w[j]
		}
	}
}

func newTestRand(key rng.Key) *rand.Rand { return key.For(rng.Test).Rand() }
