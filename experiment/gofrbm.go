// The RBM goodness-of-fit experiments: gof-rbm-sigma and gof-rbm-n.

package experiment

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// gofRBMSize returns d, M and n of the RBM experiments.
func gofRBMSize(mode Mode) (d, hidden, n int) {
	switch mode {
	case Quick:
		return 50, 12, 100
	case Tiny:
		return 10, 4, 20
	}
	return 50, 25, 100
}

// perturbed returns the RBM with weights W + ε, ε of independent N(0, σ²)
// entries drawn from the trial's key tweaked by σ, and the same biases.
func perturbed(m *rbm.RBM, sigma float64, key rng.Key) (*rbm.RBM, error) {
	if sigma == 0 {
		return m, nil
	}
	g := key.Tweak(math.Float64bits(sigma)).For(rng.Model).Rand()
	d, h := m.Dim(), m.Hidden()
	w := make([][]float64, d)
	for i := range w {
		w[i] = make([]float64, h)
		for k := range w[i] {
			w[i][k] = m.Weight(i, k) + sigma*g.NormFloat64()
		}
	}
	return rbm.New(w, m.VisibleBias(), m.HiddenBias())
}

// rbmAltDraw draws n exact samples from W + ε with ε fresh for each trial
// (the same ε for every point of one trial and noise level), caching the
// exact sampler of the current trial.
func rbmAltDraw(ctx context.Context, null *rbm.RBM, nullTruth exact.Truth, sigma float64) func(trial int, n int, key rng.Key) (*sampler.Samples, error) {
	cached, cachedTrial := exact.Truth(nil), -1
	return func(trial int, n int, key rng.Key) (*sampler.Samples, error) {
		if sigma == 0 {
			return exactDrawer(nullTruth, null.Dim())(n, key)
		}
		if cachedTrial != trial {
			alt, err := perturbed(null, sigma, key)
			if err != nil {
				return nil, err
			}
			t, err := exact.ForContext(ctx, alt)
			if err != nil {
				return nil, err
			}
			cached, cachedTrial = t, trial
		}
		return exactDrawer(cached, null.Dim())(n, key)
	}
}

func gofRBMNull(r *runner) (*rbm.RBM, exact.Truth, int, error) {
	d, hidden, n := gofRBMSize(r.cfg.Mode)
	null, err := rbm.Random(d, hidden, 1/math.Sqrt(float64(hidden)), 1, r.cfg.Seed)
	if err != nil {
		return nil, nil, 0, err
	}
	r.logf("%s: exact sampler of the RBM with d = %d, M = %d …", r.name, d, hidden)
	truth, err := exact.ForContext(r.ctx, null)
	return null, truth, n, err
}

func rbmGOFNote(null *rbm.RBM, b int) string {
	return fmt.Sprintf("RBM d = %d, M = %d, W entries N(0, 1/M), b, c ~ N(0, 1) from the seed (rbm.Random); each trial's samples are exact draws from W + ε with fresh ε of N(0, σ'²) entries, MMD's reference exact draws from W; α = 0.05; %d bootstrap draws or permutations.", null.Dim(), null.Hidden(), b)
}

func runGOFRBMSigma(r *runner) (*Result, error) {
	null, truth, n, err := gofRBMNull(r)
	if err != nil {
		return nil, err
	}
	sigmas := []float64{0, 0.025, 0.05, 0.1, 0.15, 0.2}
	switch r.cfg.Mode {
	case Quick:
		sigmas = []float64{0, 0.2}
	case Tiny:
		sigmas = []float64{0, 0.5}
	}
	var pts []gofPoint
	for _, sg := range sigmas {
		draw := rbmAltDraw(r.ctx, null, truth, sg)
		pts = append(pts, gofPoint{x: sg, null: null, n: n, draw: func(tr int, key rng.Key) (*sampler.Samples, error) { return draw(tr, n, key) }, drawNull: exactDrawer(truth, null.Dim())})
	}
	return gofResult(r, pts, gofMethods("relaxed"), rbmGOFNote(null, bootstrapDraws(r.cfg.Mode)),
		fmt.Sprintf("n = %d; σ' = 0 is the null (the rejection rate there is the level).", n),
		fmt.Sprintf("RBM d = %d, M = %d, model W, exact samples from W + ε, ε ~ N(0, σ'²) fresh in each trial; n = %d", null.Dim(), null.Hidden(), n), "weight noise σ'", false)
}

// GOFRBMNSettings are the options of gof-rbm-n.
type GOFRBMNSettings struct {
	// Sigma is the standard deviation σ' of the noise on the alternative's
	// weights.
	Sigma float64 `opt:"sigma" flag:"sigma,nonnegative" help:"standard deviation σ' of the noise added to the RBM's weights"`
}

func runGOFRBMN(r *runner) (*Result, error) {
	null, truth, _, err := gofRBMNull(r)
	if err != nil {
		return nil, err
	}
	sigma := settingsOf[GOFRBMNSettings](r).Sigma
	ns := []int{50, 100, 200, 500, 1000}
	switch r.cfg.Mode {
	case Quick:
		ns = []int{50, 200}
	case Tiny:
		ns = []int{20, 40}
	}
	draw := rbmAltDraw(r.ctx, null, truth, sigma)
	var pts []gofPoint
	for _, n := range ns {
		pts = append(pts, gofPoint{x: float64(n), null: null, n: n, draw: func(tr int, key rng.Key) (*sampler.Samples, error) { return draw(tr, n, key) }, drawNull: exactDrawer(truth, null.Dim())})
	}
	return gofResult(r, pts, gofMethods("relaxed"), rbmGOFNote(null, bootstrapDraws(r.cfg.Mode)),
		fmt.Sprintf("σ' = %g.", sigma), fmt.Sprintf("RBM d = %d, M = %d, model W, exact samples from W + ε, ε ~ N(0, σ'²) fresh in each trial, σ' = %g; %s", null.Dim(), null.Hidden(), sigma, rangeNote("n", intsF(ns))), "sample size n", true)
}
