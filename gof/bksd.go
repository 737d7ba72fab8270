package gof

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/stein"
)

// BKSD runs a kernelized Stein discrepancy test whose Stein operator is
// the generator of a locally balanced jump process with Barker's rates
// (stein.BalancedKernel), with the kernel exp(−H(z, z')/d):
//
//	A f(z) = Σ_l Σ_{y ∈ N_l(z)} r(z, y) (f(y) − f(z)),  r(z, y) = p(y)/(p(z) + p(y)),
//
// N_l(z) the states one step along variable l's cycle of possible states
// (as DKSD's ¬_l, both ways). Its statistic is the U-statistic of
// κ = A_z A_z' k, with the bootstrap of GF-KSD and DKSD. The rates lie in
// [0, 1], where DKSD's score 1 − p(¬z)/p(z) is unbounded above, so no
// rare state's ratio can dominate the statistic: BKSD holds its level on
// the heavy-tailed models where DKSD's tail check fires (frustrated Ising
// models, RBMs with large weights; see the tests), and needs no care for
// states of probability zero beside the samples. It costs O(n²d) time and
// O(n²) memory, about 1.3× DKSD's time.
func BKSD(ctx context.Context, m model.Model, s *sampler.Samples, o Options) (*Result, error) {
	if res, done, err := notBootstrapped(ctx, "bksd", m, s, o, func(ctx context.Context, s *sampler.Samples, o Options) (*Result, error) {
		return BKSD(ctx, m, s, o)
	}); done {
		return res, err
	}
	o, rej, err := admit("bksd", m, s, o)
	if rej != nil || err != nil {
		return rej, err
	}
	h, err := bksdMatrix(ctx, m, s)
	if err != nil {
		return nil, err
	}
	res, err := steinTest(ctx, "bksd", h, s.N, o)
	if err != nil {
		return nil, err
	}
	res.Bandwidth = float64(s.D)
	return res, nil
}

// bksdMatrix returns the n×n matrix of κ(z_i, z_j) with ℓ = d.
func bksdMatrix(ctx context.Context, m model.Model, s *sampler.Samples) ([]float64, error) {
	pts, err := stein.PrepareBalanced(m, s.Z[:s.N*s.D], s.N)
	if err != nil {
		return nil, fmt.Errorf("bksd: %w", err)
	}
	k, err := stein.NewBalancedKernel(s.D, float64(s.D))
	if err != nil {
		return nil, err
	}
	return symmetric(ctx, s.N, func(i, j int) float64 { return k.Eval(pts, i, pts, j) })
}
