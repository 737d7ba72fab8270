package infer

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// SummarizeDraws diagnoses draws made elsewhere (dstein summary): s holds
// chains of equal length, chain by chain, as states of m. The output has
// the draws' marginals and means and the same Diagnostics as a run of
// dstein's: R̂, ESS, MCSE and the warnings. Rao–Blackwellised estimates
// need est == RaoBlackwell and a model with conditionals (not a
// model.NoDensity); otherwise the draws' frequencies are used.
func SummarizeDraws(ctx context.Context, m model.Model, s *sampler.Samples, chains int, est Estimates) (*Output, error) {
	if chains < 1 || s.N%chains != 0 {
		return nil, fmt.Errorf("%d draws do not split into %d chains of equal length", s.N, chains)
	}
	if s.D != m.Dim() {
		return nil, fmt.Errorf("draws of %d variables for a model of %d", s.D, m.Dim())
	}
	out := &Output{N: chains, Dim: s.D, Samples: s, Status: sampler.Completed,
		Layout: Layout{Kind: LayoutChains, Groups: chains, Length: s.N / chains, Thin: 1}}
	out.Marginals = sampler.Marginals(m, s)
	out.Impossible = sampler.Impossible(m, s)
	if _, none := m.(model.NoDensity); est == RaoBlackwell && !none && hasConditionals(m) {
		var err error
		if out.cond, err = conditionals(ctx, m, s); err != nil {
			return nil, err
		}
		out.Marginals = out.cond.marginals(m)
	}
	out.Means = sampler.Means(m, out.Marginals)
	var err error
	out.Diagnostics, err = Diagnose(ctx, m, out)
	out.cond = nil
	if err != nil {
		return nil, err
	}
	if out.Diagnostics.Source == SourceChains {
		out.Diagnostics.Note = fmt.Sprintf("from %d chains of %d draws as given (no warm-up removed): MCSE = sd/√ESS", chains, s.N/chains)
		if out.Diagnostics.Estimates == RaoBlackwell.String() {
			out.Diagnostics.Note += "; variables Rao–Blackwellised (each draw's conditional probabilities given its other variables, averaged)"
		}
	}
	return out, nil
}
