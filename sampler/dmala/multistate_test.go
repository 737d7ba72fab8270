package dmala

import (
	"math"
	"testing"

	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/samplertest"
)

// On variables of more than two states (issue 28, samplertest's
// MultiStateTargets: 200 categorical variables of 4 states, a 3-state Potts
// model on a 3×3 torus), 4 chains of 250 draws after 250 warm-up steps
// (key 1, the default step size), as `dstein sample --method dmala
// --chains 4 --draws 250` keeps them, estimate every state's probability
// with an RMSE within a few times that of 1000 exact i.i.d. draws
// (computed analytically, sqrt(mean p(1−p)/1000); see
// samplertest.StateRMSE), and accept their proposals often.
//
// The limits come from keys 1–10 (ratio of RMSEs; acceptance rate):
//
//	                     proposal gradient        relaxation's gradient
//	categorical-200x4    5.3–7.0;  0.16–0.20      12.7–15.7; 0.004–0.013
//	potts-3x3            1.0–3.2;  0.80–0.82       1.8–3.9;  0.51–0.55
//
// (key 1: 6.27, 2.32; 0.162, 0.812 against 13.6, 3.94; 0.006, 0.540).
// The default step size, chosen on binary models, is too large for 200
// variables of 4 states (acceptance 0.16); TestAdaptedStepSize holds the
// adapted step size, with thinning, to 3×. The limits here, 9× and 4.5× on
// the ratio and 0.08 and 0.7 on the acceptance rate, hold for every key
// measured with the proposal gradient, and the first and last fail with
// the relaxation's, whose proposals are far off where log-ratios are
// large.
func TestMultiStateTargets(t *testing.T) {
	limits := map[string]struct{ ratio, acc float64 }{
		"categorical-200x4": {9, 0.08},
		"potts-3x3":         {4.5, 0.7},
	}
	for _, tg := range samplertest.MultiStateTargets(t) {
		s, smp := samplertest.KeepDraws(t, tg.Model, 4, 250, 250, 1, func(p *sampler.Problem) (sampler.Sampler, error) {
			return New(p, Settings{})
		})
		rmse, iid := samplertest.StateRMSE(tg.Model, s, tg.Marginals)
		acc, _ := smp.Stats().Value("acceptance_rate")
		t.Logf("%s: RMSE %.4f, %.2f× that of 1000 i.i.d. draws (%.4f); acceptance rate %.3f", tg.Name, rmse, rmse/iid, iid, acc)
		lim := limits[tg.Name]
		if rmse > lim.ratio*iid {
			t.Errorf("%s: RMSE of the state probabilities %.4f is %.1f× that of 1000 i.i.d. draws (%.4f); want at most %v×", tg.Name, rmse, rmse/iid, iid, lim.ratio)
		}
		if acc < lim.acc {
			t.Errorf("%s: acceptance rate %.3f; want at least %v", tg.Name, acc, lim.acc)
		}
	}
}

// With its step size adapted (Settings.Adapt, 250 steps, to the default
// target 0.574) and every third state kept, 4 chains of 250 draws after
// 750 warm-up steps (key 1), as `dstein sample --method dmala --adapt 250
// --chains 4 --draws 250 --thin 3` keeps them, estimate every state's
// probability of 300 and 200 categorical variables of 4 states and of the
// Potts torus with an RMSE within 3× that of 1000 exact i.i.d. draws
// (issue 28).
//
// Over keys 1–10 the ratios were 2.25–2.43 (300 variables; key 1: 2.31),
// 2.08–2.40 (200; 2.20) and 0.77–1.93 (Potts; 1.30), with α adapted to
// 0.35–0.37, 0.38–0.39 and 1.2–1.4. The spread of the categorical ratios
// (sd 0.06 on 300 variables) is their sampling error: an RMSE over
// 300 × 3 free state frequencies has a relative standard error of about
// sqrt(2/900)/2 = 2.4%, 0.06 on a ratio of 2.35, so the limit of 3 lies
// more than 10 standard errors above. The sampler without adaptation (the
// default α = 0.6, acceptance 0.09 and 0.16) gave 4.1–7.5 (300; 5.12 with
// key 1) and 3.2–4.7 (200; 4.03 with key 1) in the same layout, keys 1–10.
// Without thinning the adapted sampler gave 4.1–4.4 and 3.5–4.0 (one step
// per draw: no step size does much better, see the package comment), with
// a thinning of 2 2.7–3.1 and 2.6–2.8.
func TestAdaptedStepSize(t *testing.T) {
	const chains, draws, thin, adapt = 4, 250, 3, 250
	targets := append([]samplertest.Target{samplertest.CategoricalTarget(t, 300)}, samplertest.MultiStateTargets(t)...)
	for _, tg := range targets {
		s, smp := samplertest.KeepThinned(t, tg.Model, chains, draws*thin, draws, thin, 1, func(p *sampler.Problem) (sampler.Sampler, error) {
			return New(p, Settings{Adapt: adapt})
		})
		rmse, iid := samplertest.StateRMSE(tg.Model, s, tg.Marginals)
		st := smp.Stats()
		acc, _ := st.Value("tuned_acceptance_rate")
		alpha, _ := st.Value("step_size")
		t.Logf("%s: RMSE %.4f, %.2f× that of 1000 i.i.d. draws (%.4f); α %.3f, acceptance rate after adaptation %.3f", tg.Name, rmse, rmse/iid, iid, alpha, acc)
		if rmse > 3*iid {
			t.Errorf("%s: RMSE of the state probabilities %.4f is %.1f× that of 1000 i.i.d. draws (%.4f); want at most 3×", tg.Name, rmse, rmse/iid, iid)
		}
	}
}

// On the categorical target of the DISCS benchmark (2000 variables of 4
// states, logits N(0, 1.5²): samplertest.CategoricalTarget), whose DMALA
// adapts its step size to an acceptance rate of 0.574, 4 chains adapting
// for 250 steps accept about that fraction of their next 250 proposals.
// Over keys 1–10 the fraction was 0.55–0.64 (mean 0.58, sd 0.027, about
// the binomial standard error of 1000 proposals, 0.016, widened by the
// adaptation's error in α; α 0.28–0.29), so the test allows the target
// ± 0.11, four such standard deviations. At the default step size the
// chains accept 0.03–0.04 of their proposals (keys 1–3).
func TestAdaptedAcceptanceDISCS(t *testing.T) {
	tg := samplertest.CategoricalTarget(t, 2000)
	_, smp := samplertest.KeepDraws(t, tg.Model, 4, 500, 0, 1, func(p *sampler.Problem) (sampler.Sampler, error) {
		return New(p, Settings{Adapt: 250})
	})
	st := smp.Stats()
	acc, _ := st.Value("tuned_acceptance_rate")
	alpha, _ := st.Value("step_size")
	t.Logf("%s: α %.3f, acceptance rate after adaptation %.3f", tg.Name, alpha, acc)
	if math.Abs(acc-DefaultTargetAcceptance) > 0.11 {
		t.Errorf("%s: acceptance rate after adaptation %.3f; want %v ± 0.11", tg.Name, acc, DefaultTargetAcceptance)
	}
}
