package infer

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/dstein/dstein/compress"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// Compression rules (package compress).
const (
	RuleHerding = "herding"
	RuleStein   = "stein"
	// RuleSteinReg is Stein thinning with the entropic regulariser of
	// Bénard et al. (2023) at their λ = 1/n.
	RuleSteinReg = "stein-reg"
)

// CompressionRules lists the rules a Compression may name.
var CompressionRules = []string{RuleHerding, RuleStein, RuleSteinReg}

// Compress picks n points from the candidates c by the named rule (Ell 0:
// the rule's default bandwidth), with weights w for herding (nil: equal).
func Compress(ctx context.Context, m model.Model, c *sampler.Samples, w []float64, rule string, n int, ell float64) (*compress.Result, error) {
	o := compress.Options{Ell: ell}
	switch rule {
	case RuleHerding:
		return compress.Herd(ctx, c, w, n, o)
	case RuleStein, RuleSteinReg:
		if rule == RuleSteinReg {
			o.Regularize = 1 / float64(n)
		}
		return compress.SteinThin(ctx, m, c, n, o)
	}
	return nil, fmt.Errorf("unknown compression rule %q; want one of %v", rule, CompressionRules)
}

// MaxWeightIters bounds the iterations of the Stein weights' solver.
const MaxWeightIters = 5000

// Compression asks a run to end by picking N representative points from
// its samples (the draws of its chains, usually): the run's last stage.
// The zero value compresses nothing.
type Compression struct {
	// Rule is RuleHerding (kernel herding: match the draws' empirical
	// measure) or RuleStein (greedy Stein thinning against the model).
	Rule string `json:"rule"`
	// N is the number of points.
	N int `json:"n"`
	// Ell is the bandwidth ℓ of the Hamming kernel exp(−H/ℓ); 0 takes the
	// rule's default (compress.Options).
	Ell float64 `json:"ell,omitempty"`
	// Reweight puts Stein importance weights on the draws before herding
	// (compress.SteinWeights, ℓ = d), so that herding matches the
	// reweighted measure.
	Reweight bool `json:"reweight,omitempty"`
}

// On reports whether the compression does anything.
func (c Compression) On() bool { return c != Compression{} }

// Validate reports a compression that cannot run.
func (c Compression) Validate() error {
	if !c.On() {
		return nil
	}
	switch {
	case !slices.Contains(CompressionRules, c.Rule):
		return fmt.Errorf("unknown compression rule %q; want one of %v", c.Rule, CompressionRules)
	case c.N < 1:
		return fmt.Errorf("the number of points to compress to must be at least 1, got %d", c.N)
	case c.Ell < 0 || math.IsNaN(c.Ell) || math.IsInf(c.Ell, 0):
		return fmt.Errorf("the compression's bandwidth ℓ must be a positive finite number (or 0 for the default), got %v", c.Ell)
	case c.Reweight && c.Rule != RuleHerding:
		// Stein thinning already targets the model.
		return fmt.Errorf("Stein weights apply before herding (Stein thinning already targets the model)")
	}
	return nil
}

// Compressed records what a compression did.
type Compressed struct {
	Rule     string `json:"rule"`
	N        int    `json:"n"`
	Reweight bool   `json:"reweight"`
	// Ell is the bandwidth used.
	Ell float64 `json:"ell"`
	// Candidates is the number of draws the points were picked from,
	// Distinct their distinct states, Reference the draws herding matched
	// (all unless compress.DefaultMaxReference applied).
	Candidates int `json:"candidates"`
	Distinct   int `json:"distinct"`
	Reference  int `json:"reference"`
	// Repeats counts points that repeat an earlier point's state.
	Repeats int `json:"repeats"`
	// MaxMeanGap is the largest |mean of the points − mean of the draws|
	// (of the Stein-weighted draws with Reweight) over the variables'
	// state values: how far the compression moved the estimates it
	// compresses.
	MaxMeanGap float64 `json:"max_mean_gap"`
	// WeightsESS is the effective sample size of the Stein weights (0
	// without them), WeightsKSD2 and UnweightedKSD2 the weighted and
	// unweighted squared Stein discrepancies of the draws (0 without
	// weights).
	WeightsESS     float64 `json:"weights_ess"`
	WeightsKSD2    float64 `json:"weights_ksd2"`
	UnweightedKSD2 float64 `json:"unweighted_ksd2"`
	// WeightedMeans and WeightedMarginals are the Stein-weighted draws'
	// estimates (with Reweight; nil, JSON null, without), which herding's
	// points approximate.
	WeightedMeans     []float64   `json:"weighted_mean"`
	WeightedMarginals [][]float64 `json:"weighted_marginals"`
	Seconds           float64     `json:"seconds"`
}

// compressOutput replaces out's samples (the candidates) by c.N points and
// their means and marginals; out's diagnostics stay those of the
// candidates.
func compressOutput(ctx context.Context, m model.Model, out *Output, c Compression) error {
	cand := out.Samples
	rec := &Compressed{Rule: c.Rule, N: c.N, Reweight: c.Reweight, Candidates: cand.N}
	var w []float64
	if c.Reweight {
		wts, err := compress.SteinWeights(ctx, m, cand, compress.Options{}, MaxWeightIters)
		if err != nil {
			return err
		}
		w = wts.W
		rec.WeightsESS, rec.WeightsKSD2, rec.UnweightedKSD2 = wts.ESS, wts.KSD2, wts.Unweighted
		rec.WeightedMarginals = weightedMarginals(m, cand, w)
		rec.WeightedMeans = sampler.Means(m, rec.WeightedMarginals)
	}
	res, err := Compress(ctx, m, cand, w, c.Rule, c.N, c.Ell)
	if err != nil {
		return err
	}
	rec.Ell, rec.Distinct, rec.Reference = res.Ell, res.Distinct, res.Reference
	rec.Repeats = res.Repeats()
	out.Samples = res.Points
	out.Marginals = sampler.Marginals(m, out.Samples)
	means := sampler.Means(m, out.Marginals)
	target := out.Means // what the points stand for: the draws, or the weighted draws
	if c.Reweight {
		target = rec.WeightedMeans
	}
	for i := range means {
		rec.MaxMeanGap = max(rec.MaxMeanGap, math.Abs(means[i]-target[i]))
	}
	out.Means = means
	out.Impossible = sampler.Impossible(m, out.Samples)
	out.Compressed = rec
	return nil
}

// weightedMarginals returns Σ_r w_r [z_ri = s] for every variable i and
// state s (w sums to 1).
func weightedMarginals(m model.Model, c *sampler.Samples, w []float64) [][]float64 {
	marg := make([][]float64, c.D)
	for i := range marg {
		marg[i] = make([]float64, len(m.States(i)))
	}
	for r := range c.N {
		for i, z := range c.Row(r) {
			marg[i][z] += w[r]
		}
	}
	return marg
}

// compressMemory estimates the bytes a compression of rows draws of d
// variables allocates.
func compressMemory(c Compression, rows, d float64) float64 {
	if !c.On() {
		return 0
	}
	need := compress.Memory(int(rows), int(d)) + 8*float64(c.N)*d
	if c.Rule == RuleHerding && !c.Reweight {
		// Herding without Stein weights needs no Stein points.
		need = compress.HerdMemory(int(rows), int(d)) + 8*float64(c.N)*d
	}
	if c.Reweight {
		u := min(rows, compress.MaxWeightStates)
		need += 8*u*u + 48*u // the Stein kernel matrix and the solver's vectors
	}
	return need
}
