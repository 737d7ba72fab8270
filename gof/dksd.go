package gof

import (
	"context"
	"fmt"
	"strings"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/stein"
)

// DKSD runs the discrete kernelized Stein discrepancy test of Yang et al.
// (2018) with the kernel exp(−H(z, z')/d).
//
// With ¬_l the cyclic move of coordinate l to its next possible state (in
// the model's state order, skipping states model.Support rules out) and ¬⁻¹_l
// its inverse, the score is s_l(z) = 1 − p(¬_l z)/p(z), the Stein operator
// T f(z) = s(z) f(z) − (f(z) − f(¬⁻¹ z)) (E_p T f = 0 for any f), and
//
//	κ(z, z') = Σ_l [s_l s'_l k − s_l Δ*_{z',l} k − s'_l Δ*_{z,l} k + Δ*_{z,l} Δ*_{z',l} k].
//
// For the Hamming kernel, k(¬⁻¹_l z, z')/k(z, z') is e^(−1/d) when z_l = z'_l,
// e^(1/d) when z'_l = ¬⁻¹ z_l and 1 otherwise, and k(¬⁻¹z, ¬⁻¹z') = k(z, z'),
// so κ is a sum over coordinates with no kernel evaluations beyond k itself:
// O(n²d) time and O(n²) memory. Like Yang et al., the Stein identity behind
// the test needs p > 0 on every state the cycles visit: states that are
// impossible only jointly (a zero factor between two variables) bias it,
// and DKSD then reports LevelChecked false, with a Warning, when the
// samples' cycles meet such a state (the simulated null, Simulation or
// Auto, holds the level there).
//
// The statistic's null mean is exactly 0 (the tests check it by
// enumeration), but where the ratios p(¬_l z)/p(z) are heavy-tailed it is 0
// only through states too rare for n samples to contain, and the bootstrap
// then rejects a true model far more often than α. DKSD estimates the bias
// this leaves (Result.TailBias, see TailBiasFactor) and reports
// LevelChecked false, with a Warning, when it exceeds TailBiasFactor
// bootstrap standard deviations.
func DKSD(ctx context.Context, m model.Model, s *sampler.Samples, o Options) (*Result, error) {
	if res, done, err := notBootstrapped(ctx, "dksd", m, s, o, func(ctx context.Context, s *sampler.Samples, o Options) (*Result, error) {
		return DKSD(ctx, m, s, o)
	}); done {
		return res, err
	}
	o, rej, err := admit("dksd", m, s, o)
	if rej != nil || err != nil {
		return rej, err
	}
	pts, err := dksdPoints(m, s)
	if err != nil {
		return nil, err
	}
	h, err := dksdMatrixOf(ctx, pts)
	if err != nil {
		return nil, err
	}
	res, err := steinTest(ctx, "dksd", h, s.N, o)
	if err != nil {
		return nil, err
	}
	res.Bandwidth = float64(s.D)
	if o.statisticOnly {
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	bias, err := dksdTailBias(m, pts, s.Z[:s.N*s.D], float64(s.N), nil, false)
	if err != nil {
		return nil, err
	}
	res.TailBias, res.BootstrapSD = bias, res.bootSD
	if bias > TailBiasFactor*res.bootSD {
		res.LevelChecked = false
		res.Warning = tailWarning(bias, res.bootSD)
	}
	jz, err := dksdJointZeros(ctx, m, pts)
	if err != nil {
		return nil, err
	}
	if jz.count > 0 {
		res.jointZeros = jz.count
		res.LevelChecked = false
		res.Warning = strings.TrimSuffix(jointZeroWarning(m, jz, s.N)+"; "+res.Warning, "; ")
	}
	return res, nil
}

// DKSDScore writes the difference score s_l(z) = 1 − p(¬_l z)/p(z) of every
// coordinate into dst for a possible z, ¬_l moving variable l to its next
// possible state cyclically (0 for variables with one possible state).
func DKSDScore(dst []float64, m model.Model, z []int) error {
	if err := stein.NewCycle(m).Score(dst, m, z); err != nil {
		return fmt.Errorf("dksd: %w", err)
	}
	return nil
}

// dksdMatrix returns the n×n matrix of κ(z_i, z_j) with ℓ = d.
func dksdMatrix(m model.Model, s *sampler.Samples) ([]float64, error) {
	pts, err := dksdPoints(m, s)
	if err != nil {
		return nil, err
	}
	return dksdMatrixOf(context.Background(), pts)
}

// dksdPoints prepares the samples' states, predecessors and scores.
func dksdPoints(m model.Model, s *sampler.Samples) (*stein.Points, error) {
	pts, err := stein.Prepare(m, s.Z[:s.N*s.D], s.N)
	if err != nil {
		return nil, fmt.Errorf("dksd: %w", err)
	}
	return pts, nil
}

// dksdMatrixOf returns the n×n matrix of κ over prepared points, ℓ = d.
func dksdMatrixOf(ctx context.Context, pts *stein.Points) ([]float64, error) {
	k, err := stein.NewKernel(pts.D, float64(pts.D))
	if err != nil {
		return nil, err
	}
	return symmetric(ctx, pts.N, func(i, j int) float64 { return k.Eval(pts, i, pts, j) })
}

// symmetric returns the n×n matrix of eval(i, j) for a symmetric eval,
// each pair evaluated once, rows spread over the cores. It looks at ctx
// before each row and returns its error once it is canceled.
func symmetric(ctx context.Context, n int, eval func(i, j int) float64) ([]float64, error) {
	t := &symTask{ctx: ctx, n: n, eval: eval, h: make([]float64, n*n)}
	parallel.For(n, 4, t)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return t.h, nil
}

type symTask struct {
	ctx  context.Context
	n    int
	eval func(i, j int) float64
	h    []float64
}

// Do fills rows [lo, hi) of H for j ≤ i and mirrors them.
func (t *symTask) Do(lo, hi int) {
	for i := lo; i < hi; i++ {
		if t.ctx.Err() != nil {
			return
		}
		for j := 0; j <= i; j++ {
			v := t.eval(i, j)
			t.h[i*t.n+j] = v
			t.h[j*t.n+i] = v
		}
	}
}
