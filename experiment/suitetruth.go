package experiment

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/metrics"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// suiteExactMMD is the largest number of joint states for which the suite
// computes MMD² against the model itself rather than against a reference
// sample.
const suiteExactMMD = 1 << 16

// suiteExactBins is the largest number of joint states for which the
// energy bins come from the exact distribution of log p*.
const suiteExactBins = 1 << 20

// suiteTarget is a suite model with its ground truth.
type suiteTarget struct {
	suiteModel
	n     int
	truth exact.Truth
	means []float64
	marg  [][]float64
	pairs *exact.Pairs
	bins  *metrics.EnergyBins
	// mode is the exact or reference mass of positive magnetisation of a
	// ferromagnet; nil for other models.
	mode *metrics.ModeMass
	// ref is the exact reference sample for MMD² when the model has too
	// many states to compute it against the model itself.
	ref *metrics.Reference
	// truthNote says where each part of the truth comes from.
	truthNote string
	ok        map[string]bool
}

// truthOf returns variable elimination's answer as an exact.Truth, or its
// error with no Truth.
func truthOf(ve *exact.VE, err error) (exact.Truth, error) {
	if err != nil {
		return nil, err
	}
	return ve, nil
}

// newSuiteTarget computes the ground truth of sm: exact marginals and
// pair marginals, the energy distribution's bins, the mode mass of a
// ferromagnet, and a reference sample where exact sums are out of reach.
func newSuiteTarget(r *runner, sm suiteModel, n int) (*suiteTarget, error) {
	ctx := r.ctx
	m := sm.m
	tg := &suiteTarget{suiteModel: sm, n: n, ok: map[string]bool{}}
	// The exact answers of a network of --uai are held to the run's
	// memory budget (a refusal, never another route); the built-in
	// targets' are fixed by the suite.
	budget := memlimit.Budget{}
	if sm.input {
		budget = r.cfg.Budget
	}
	var err error
	if g, ok := m.(*factorgraph.Graph); ok && sm.input {
		tg.truth, err = truthOf(exact.ForFactorGraphContext(ctx, g, exact.DefaultMaxWidth, budget))
	} else {
		tg.truth, err = exact.ForContext(ctx, m)
	}
	if err != nil {
		return nil, err
	}
	res := tg.truth.Result()
	tg.means, tg.marg = res.Means, res.Marginals
	states := model.StateCount(m)
	var refS *sampler.Samples
	pairs, perr := exact.PairsFor(ctx, m, budget)
	var over *memlimit.Exceeded
	if perr != nil && (ctx.Err() != nil || errors.As(perr, &over)) {
		return nil, perr
	}
	if states > suiteExactMMD || states > suiteExactBins || perr != nil {
		size := referenceSize(r.cfg.Mode)
		z := make([]int, size*m.Dim())
		if err := tg.truth.SampleContext(ctx, z, rng.NewKey(r.cfg.Seed).ForIndex(rng.Test, int(sm.x)).Rand()); err != nil {
			return nil, err
		}
		refS = &sampler.Samples{N: size, D: m.Dim(), Z: z}
	}
	if perr != nil {
		// No exact route (a wide network): the pair marginals of the
		// exact reference sample, each with SE sqrt(p(1 − p)/size).
		pairs = exact.EmpiricalPairs(m, refS.Z, refS.N)
	}
	tg.pairs = pairs
	notes := []string{"marginals exact", "pairs " + tg.pairs.Route()}
	if states <= suiteExactBins {
		tg.bins, err = metrics.ExactEnergyBins(ctx, m, suiteExactBins, metrics.DefaultEnergyBins)
		notes = append(notes, "energy exact")
	} else {
		tg.bins, err = metrics.ReferenceEnergyBins(m, refS, metrics.DefaultEnergyBins)
		notes = append(notes, fmt.Sprintf("energy bins from %d exact draws", refS.N))
	}
	if err != nil {
		return nil, err
	}
	if states <= suiteExactMMD {
		notes = append(notes, "MMD² exact")
	} else {
		tg.ref = metrics.NewReference(refS)
		notes = append(notes, fmt.Sprintf("MMD² against %d exact draws", refS.N))
	}
	if sm.modes {
		mm, err := metrics.ExactModeMass(ctx, m, budget)
		if err != nil {
			if errors.As(err, &over) || ctx.Err() != nil || refS == nil {
				return nil, err
			}
			if mm, err = metrics.ReferenceModeMass(m, refS); err != nil {
				return nil, err
			}
			notes = append(notes, fmt.Sprintf("mode mass %.4f ± %.4f from %d exact draws", mm.P, mm.SE, mm.N))
		} else {
			notes = append(notes, fmt.Sprintf("mode mass %.4f exact", mm.P))
		}
		tg.mode = &mm
	}
	tg.truthNote = strings.Join(notes, ", ")
	return tg, nil
}

// runs reports whether the method's pipeline applies to the target
// (cached).
func (tg *suiteTarget) runs(name string, p sampler.Pipeline) bool {
	ok, seen := tg.ok[name]
	if !seen {
		ok = applies(p, tg.m)
		tg.ok[name] = ok
	}
	return ok
}

// mseRounding is the smallest MSE of the means the suite records: (1e-12)².
const mseRounding = 1e-24

// score runs the pipeline once with the trial's key and scores its
// samples against the truth.
func (tg *suiteTarget) score(r *runner, mt suiteMethod, p sampler.Pipeline, budget int, key rng.Key) (map[string]float64, error) {
	start := time.Now()
	// The means are scored as users see them: Rao–Blackwellised where
	// the draws allow (infer.RaoBlackwell). The journals of rounds one and
	// two were computed from the draws' frequencies (the option estimates
	// = 0). Exact i.i.d. sampling, the reference of every ratio, is always
	// scored by its frequencies: the ratios compare with n independent
	// draws as they are usually counted.
	est := settingsOf[SuiteSettings](r).Estimates.Estimates
	if mt.name == suiteReference {
		est = infer.Frequencies
	}
	spec := infer.Spec{Pipeline: p, N: tg.n, Key: key, Truth: tg.truth, Estimates: est}
	if mt.chains > 0 {
		spec.N, spec.Keep, spec.Compress = mt.chains, mt.keep(budget, tg.n, tg.m), mt.compression(tg.n)
	}
	out, err := infer.Run(r.ctx, tg.m, spec)
	if err != nil {
		return nil, err
	}
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	secs := time.Since(start).Seconds()
	s := out.Samples
	// A Rao–Blackwellised mean of independent variables is exact up to
	// rounding (MSE near 1e-32); below (1e-12)², far under any Monte Carlo
	// error of n ≤ 10⁶ draws, an MSE is rounding, floored so that ratios of
	// rounding errors do not count as differences.
	res := map[string]float64{
		"mse":       max(metrics.MSE(out.Means, tg.means), mseRounding),
		"pair_rmse": metrics.PairRMSE(s, tg.pairs),
		"energy_tv": tg.bins.TV(s),
		// The first-order part of the draws' MMD² (below), from their
		// frequencies whatever the means' estimator.
		"mmd2_first":  metrics.FirstOrderMMD2(sampler.Marginals(tg.m, s), tg.marg),
		"seconds":     secs,
		"evaluations": float64(out.Evaluations),
	}
	if tg.ref != nil {
		res["mmd2"] = tg.ref.MMD2ToModel(s)
	} else {
		total, _, err := metrics.ExactMMD2(r.ctx, tg.m, s, suiteExactMMD)
		if err != nil {
			return nil, err
		}
		res["mmd2"] = total
	}
	if tg.mode != nil {
		p, err := metrics.SampleModeMass(tg.m, s)
		if err != nil {
			return nil, err
		}
		res["mode_mass"] = p
		res["mode_err2"] = (p - tg.mode.P) * (p - tg.mode.P)
	}
	return res, nil
}
