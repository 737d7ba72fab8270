package gfsvgd

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/dstein/dstein/kernel"
)

// Optimizer turns the GF-SVGD direction into a step.
type Optimizer int

const (
	// Adam applies Adam per element of the particle array, ascending along
	// the direction (the default).
	Adam Optimizer = iota
	// Plain takes x ← x + lr·Δx.
	Plain
)

// String returns "adam" or "plain".
func (o Optimizer) String() string {
	if o == Plain {
		return "plain"
	}
	return "adam"
}

// Weighting selects how the importance ratios ρ/p_c become weights.
type Weighting int

const (
	// SelfNormalized uses w_j = (ρ/p_c)(x_j) / Σ_l (ρ/p_c)(x_l) (the
	// default).
	SelfNormalized Weighting = iota
	// Rank uses the paper's BNN appendix weights: γ_j = 1/H(μ_j) with
	// H(t) = #{l : μ_l ≥ t}/n, normalised to sum to one.
	Rank
)

// String returns "self" or "rank".
func (w Weighting) String() string {
	if w == Rank {
		return "rank"
	}
	return "self"
}

// Settings configure GF-SVGD. The zero value is valid; each field documents
// its default.
type Settings struct {
	// LearningRate is Adam's step size, or the step size of Plain steps.
	// Default (0) is DefaultLearningRate.
	LearningRate float64
	// Optimizer defaults to Adam.
	Optimizer Optimizer
	// Beta1 and Beta2 are Adam's moment decay rates. Defaults 0.9 and
	// 0.999.
	Beta1, Beta2 float64
	// Epsilon is Adam's denominator offset. Default 1e-8.
	Epsilon float64
	// Bandwidth chooses the RBF bandwidth. Default: h = med²/log(n+1),
	// median over distinct pairs, multiplier 1 (twice the paper's h; see
	// package kernel).
	Bandwidth kernel.Bandwidth
	// Weights defaults to SelfNormalized.
	Weights Weighting
	// InitMean and InitStd give the initial draw x ~ N(InitMean,
	// InitStd²) per coordinate. Defaults 0 and 1 (0 means 1).
	InitMean, InitStd float64

	// Kernel selects the kernel of the transport. Default RBF, one
	// Gaussian kernel on R^d; Coordinatewise uses one 1-D Gaussian kernel
	// per coordinate (a diagonal matrix-valued kernel).
	Kernel KernelKind
	// WeightPower β tempers the self-normalised importance weights,
	// w_j ∝ (ρ/p_c)(x_j)^β, to fight weight degeneracy in high dimension.
	// With β < 1 the particles settle at ρ^(1−β) p_c^β rather than at p_c,
	// so WeightAnneal should raise β to 1. Default (0) means 1: no
	// tempering. Needs SelfNormalized weights.
	WeightPower float64
	// WeightAnneal is the number of iterations over which β rises
	// linearly from WeightPower to 1. Default 0: β stays at WeightPower.
	WeightAnneal int
	// Sweeps is the number of Gibbs sweeps (single-site, systematic scan
	// over the variables, exact conditionals of the model) applied to
	// Γ(x) of every particle when Result is called: a hybrid of the
	// transport and exact-conditional moves. The particles themselves are
	// not changed. Default 0: Result returns Γ(x).
	Sweeps int
	// Stratified couples the sweeps across particles: the uniforms that
	// update one variable in all particles come from one systematic
	// sample over the particles (in a random order), so that each particle
	// still makes an exact Gibbs move while the number of particles that
	// land in each state is close to the sum of their conditional
	// probabilities (for two-state variables within one of it). Only with
	// Sweeps > 0.
	Stratified bool
	// SweepSeed seeds the sweeps' randomness. New fills a zero SweepSeed
	// from its generator, after the initial draw (so the initial particles
	// do not depend on it); NewFrom uses it as given.
	SweepSeed uint64
}

// KernelKind selects the kernel of the GF-SVGD transport.
type KernelKind int

const (
	// RBF is k(x, y) = exp(−‖x − y‖²/h) on R^d (the default).
	RBF KernelKind = iota
	// Coordinatewise is the diagonal matrix-valued kernel
	// K(x, y) = diag_q exp(−(x_q − y_q)²/h_q): coordinate q of the
	// direction is Σ_j w_j [k_q s_jq + ∂_{x_jq} k_q], with h_q from the
	// bandwidth rule applied to coordinate q's own pairwise distances. Its
	// fixed points satisfy the Stein identity of every one-dimensional
	// conditional, and the kernel does not flatten as d grows.
	Coordinatewise
)

// String returns "rbf" or "coordinatewise".
func (k KernelKind) String() string {
	if k == Coordinatewise {
		return "coordinatewise"
	}
	return "rbf"
}

// DefaultLearningRate is the step size when Settings.LearningRate is 0.
const DefaultLearningRate = 0.1

func (s Settings) withDefaults() Settings {
	if s.LearningRate == 0 {
		s.LearningRate = DefaultLearningRate
	}
	if s.Beta1 == 0 {
		s.Beta1 = 0.9
	}
	if s.Beta2 == 0 {
		s.Beta2 = 0.999
	}
	if s.Epsilon == 0 {
		s.Epsilon = 1e-8
	}
	if s.InitStd == 0 {
		s.InitStd = 1
	}
	return s
}

func bad(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

// Validate reports the first setting that cannot be used.
func (s Settings) Validate() error {
	s = s.withDefaults()
	switch {
	case bad(s.LearningRate) || s.LearningRate < 0:
		return fmt.Errorf("learning rate is %v; want a finite number > 0", s.LearningRate)
	case s.Optimizer != Adam && s.Optimizer != Plain:
		return fmt.Errorf("unknown optimizer %d", int(s.Optimizer))
	case bad(s.Beta1) || s.Beta1 < 0 || s.Beta1 >= 1 || bad(s.Beta2) || s.Beta2 < 0 || s.Beta2 >= 1:
		return fmt.Errorf("Adam betas are %v and %v; want each in [0, 1)", s.Beta1, s.Beta2)
	case bad(s.Epsilon) || s.Epsilon < 0:
		return fmt.Errorf("Adam epsilon is %v; want a finite number > 0", s.Epsilon)
	case s.Weights != SelfNormalized && s.Weights != Rank:
		return fmt.Errorf("unknown weighting %d", int(s.Weights))
	case bad(s.InitMean):
		return fmt.Errorf("initial mean is %v; want a finite number", s.InitMean)
	case bad(s.InitStd) || s.InitStd < 0:
		return fmt.Errorf("initial spread is %v; want a finite number > 0", s.InitStd)
	case s.Kernel != RBF && s.Kernel != Coordinatewise:
		return fmt.Errorf("unknown kernel %d", int(s.Kernel))
	case bad(s.WeightPower) || s.WeightPower < 0 || s.WeightPower > 1:
		return fmt.Errorf("weight power is %v; want a number in (0, 1] (0 means 1)", s.WeightPower)
	case s.WeightAnneal < 0:
		return fmt.Errorf("weight annealing length is %d; want ≥ 0", s.WeightAnneal)
	case s.WeightPower != 1 && s.WeightPower != 0 && s.Weights != SelfNormalized:
		return fmt.Errorf("weight tempering needs self-normalised weights")
	case s.Sweeps < 0:
		return fmt.Errorf("number of Gibbs sweeps is %d; want ≥ 0", s.Sweeps)
	case s.Stratified && s.Sweeps == 0:
		return fmt.Errorf("stratified sweeps need Sweeps > 0")
	}
	return s.Bandwidth.Validate()
}

// PaperLearningRate is the Adam step size of the "paper" preset. The paper
// states ε = 1e-4 with Adam; at that size a particle moves at most about
// 500·1e-4 = 0.05 in 500 iterations, so particles started at N(−2, 1) never
// reach the positive half-line. The later public re-implementation of the
// method uses 0.01, which still leaves the paper's categorical example 0.036
// away from its probabilities after 500 iterations from N(−2, 1); 0.05 is
// the smallest of {0.01, 0.05, 0.1} at which that example converges (within
// 0.01) in 500 iterations, so the preset uses it.
const PaperLearningRate = 0.05

// HybridSweeps is the number of stratified Gibbs sweeps of the "default"
// preset, and HybridIters the iterations of transport before them. They
// were chosen in the variant study of EXPERIMENTS.md ("A particle method
// that beats i.i.d. sampling"): 10 sweeps beat exact i.i.d. sampling at
// n ≤ 100 on the 10×10 Ising grid with fields and on the d = 100 RBM, but
// the RBM needed 30 at n = 200; at 500 iterations the transport took 12–30
// times the wall time of 500 Gibbs sweeps on the Ising grid with no gain once
// the sweeps follow, so the preset stops at 100.
const (
	HybridSweeps = 30
	HybridIters  = 100
)

var presets = map[string]struct {
	s     Settings
	iters int
	desc  string
}{
	"paper": {Settings{
		LearningRate: PaperLearningRate,
		Optimizer:    Adam,
		Bandwidth:    kernel.Bandwidth{Rule: kernel.RuleMedianPaper},
		Weights:      SelfNormalized,
		InitMean:     -2,
		InitStd:      1,
	}, 500, "the paper's settings: Adam, h = med²/(2 log(n+1)) over distinct pairs, self-normalised weights, init N(−2, 1), learning rate 0.05 (the paper's 1e-4 does not move the particles in 500 iterations), 500 iterations"},
	"transport": {Settings{}, 500, "the transport alone: Adam with learning rate 0.1, h = med²/log(n+1) over distinct pairs, self-normalised weights, init N(0, 1), 500 iterations; meant for the relaxed surrogate (dstein's default before the hybrid)"},
	"default": {Settings{Sweeps: HybridSweeps, Stratified: true}, HybridIters,
		"dstein's default, a hybrid: 100 iterations of the transport preset, then 30 stratified Gibbs sweeps of the particles (exact conditionals; the particles' uniforms for each variable form one systematic sample). The accuracy comes mostly from the stratified sweeps: see EXPERIMENTS.md"},
}

// Preset returns the named settings: "paper", "transport" or "default".
// Experiments name the preset they use, so that a later change of defaults
// never changes a published number silently.
func Preset(name string) (Settings, error) {
	p, ok := presets[name]
	if !ok {
		return Settings{}, fmt.Errorf("unknown GF-SVGD preset %q: want one of %s", name, strings.Join(PresetNames(), ", "))
	}
	return p.s, nil
}

// PresetIters returns the number of iterations a preset is meant to run.
func PresetIters(name string) int { return presets[name].iters }

// PresetDescription returns a one-line description of a preset.
func PresetDescription(name string) string { return presets[name].desc }

// PresetNames lists the presets in alphabetical order.
func PresetNames() []string {
	var out []string
	for k := range presets {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
