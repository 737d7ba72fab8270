package infer

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dstein/dstein/diag"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gibbs"
)

// Source says where a run's error bars come from.
type Source string

// The sources of error bars.
const (
	// SourceChains: the draws of several MCMC chains (Monte Carlo standard
	// errors from the effective sample size).
	SourceChains Source = "chains"
	// SourceReplicates: independent replicates of the whole run (the
	// spread of the replicates' estimates).
	SourceReplicates Source = "replicates"
	// SourceIID: the exact method's independent draws.
	SourceIID Source = "iid"
	// SourceNone: the final states or particles of one run, which carry
	// no error bar.
	SourceNone Source = "none"
)

// Quantity is one monitored quantity of a run: log p*, a model-level
// statistic, a variable's value or a state's indicator.
type Quantity struct {
	Name string `json:"name"`
	// Mean and SD are the estimate and the spread over all kept samples.
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	// MCSE is the Monte Carlo standard error of Mean; for a Rare quantity
	// (or one widened for ThinVisits) at least the half-width of CI90
	// (before clipping) over z, since sd/√ESS is about 0 for a state the
	// draws hardly met.
	MCSE float64 `json:"mcse"`
	// BulkESS and TailESS are the effective sample sizes of the bulk and
	// of the 5% and 95% tails (for replicates: the sizes implied by the
	// replicates' spread, (SD/MCSE)²).
	BulkESS float64 `json:"ess_bulk"`
	TailESS float64 `json:"ess_tail"`
	// Rhat is the rank-normalised split-R̂ over the chains (or
	// replicates); +Inf (JSON "inf") when each chain is constant and they
	// differ.
	Rhat Float `json:"rhat"`
	// CI90 is the nominal 90% interval of the mean: Mean ± z·MCSE with
	// z the normal 95% quantile (1.645) for chains and exact draws, the
	// Student t quantile with R − 1 degrees of freedom for R replicates
	// (whose MCSE is itself estimated from R values: 1.833 for R = 10).
	// For a Rare quantity it also holds the Clopper–Pearson interval of
	// the state's frequency (clopperPearson), so it never has zero width
	// for a state that the draws could have missed; so does a chains' or
	// exact draws' quantity whose less frequent state had fewer than
	// ThinVisits effective visits. A variable's interval
	// is clipped to the values its quantity can take ([0, 1] for a
	// probability).
	CI90 [2]float64 `json:"ci90"`
	// Rare marks a variable's quantity whose less frequent state was seen
	// fewer than RareVisits times in the kept samples.
	Rare bool `json:"rare"`
	// ArviZ's names: MCSEMean is MCSE, RHat is Rhat (the old names stay
	// for one schema version), MCSESD the Monte Carlo standard error of
	// SD (diag.Summary.MCSESD; for replicates, the spread of their SDs
	// over √R).
	MCSEMean float64 `json:"mcse_mean"`
	MCSESD   float64 `json:"mcse_sd"`
	RHat     Float   `json:"r_hat"`
	// Q5, Q50 and Q95 are the 5%, 50% and 95% quantiles of the quantity
	// over the kept samples (numpy's default, linear interpolation) for
	// log p* and the observables; nil (JSON null) for the variables,
	// whose quantities are means of indicators or conditionals.
	Q5  *float64 `json:"q5"`
	Q50 *float64 `json:"q50"`
	Q95 *float64 `json:"q95"`
}

// Float is a number whose JSON form writes ±Inf as "inf" and "-inf".
type Float float64

// MarshalJSON writes finite values as numbers, ±Inf as strings and NaN
// as null (no diagnostic produces it).
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsInf(v, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-inf"`), nil
	case math.IsNaN(v):
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// Diagnostics are a run's estimates with error bars and its convergence
// warnings.
type Diagnostics struct {
	Source Source `json:"source"`
	// Estimates says how the variables' quantities were estimated:
	// "rao-blackwell" (averages of each variable's conditional
	// distribution given the rest of the draw) or "frequencies" (counts
	// of the draws). log p* and the observables are always the draws'
	// averages.
	Estimates string `json:"estimates"`
	// Groups are the chains or replicates, each of Length samples.
	Groups int `json:"groups"`
	Length int `json:"length"`
	// Quantities are log_p (log p*), the model's observables, then each
	// variable: its value when it has two states, else one indicator
	// "z3=v" per state value v. Empty when Source is "none".
	Quantities []Quantity `json:"quantities"`
	// Warnings say which quantities fail the convergence checks, one line
	// each; empty when every check passes.
	Warnings []string `json:"warnings"`
	// Note says in one line where the error bars come from ("from 4
	// chains of …"), or how to get them.
	Note string `json:"note"`
}

// Quantity returns the named quantity, or nil.
func (d *Diagnostics) Quantity(name string) *Quantity {
	for k := range d.Quantities {
		if d.Quantities[k].Name == name {
			return &d.Quantities[k]
		}
	}
	return nil
}

// RareVisits is the number of visits below which a state counts as rare:
// a quantity whose less frequent state (a two-state variable's, or an
// indicator's state or its complement) was seen fewer times in the kept
// samples gets an interval that also holds the Clopper–Pearson interval
// of the state's frequency (Quantity.Rare), and the run warns.
const RareVisits = 10

// ThinVisits is the number of effective visits (the less frequent
// state's frequency times the binomial effective size p(1 − p)/MCSE²)
// below which a quantity's interval also holds the Clopper–Pearson
// interval at that size, however often the state was seen: the normal
// interval of a binomial proportion covers less than its level below
// about 20 expected successes (Brown, Cai and DasGupta 2001), and
// autocorrelated chains meet a state in excursions, so many visits can
// be few effective ones.
const ThinVisits = 20

// normal90 is the standard normal's 95% quantile: mean ± normal90·MCSE
// is a nominal 90% interval.
const normal90 = 1.6448536269514722

// formatState writes a state value as quantity names do.
func formatState(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// diagnoseMemory estimates the bytes Diagnose allocates for rows samples:
// one quantity's values and the diagnostics' work buffers at a time.
func diagnoseMemory(rows float64) float64 { return 8 * 8 * rows }

// stratifiedChains reports whether the draws come from stratified Gibbs
// chains (the last stage's gibbs.Settings.Stratified), which share their
// random numbers.
func stratifiedChains(pl sampler.Pipeline) bool {
	if len(pl.Stages) == 0 {
		return false
	}
	st, ok := pl.Stages[len(pl.Stages)-1].Settings.(*gibbs.Settings)
	return ok && st.Stratified
}

// Diagnose computes the run's quantities with their error bars and
// convergence diagnostics (Vehtari et al. 2021, package diag) from the
// output's samples and layout, and the warnings.
func Diagnose(ctx context.Context, m model.Model, out *Output) (*Diagnostics, error) {
	lay := out.Layout
	dg := &Diagnostics{Groups: lay.Groups, Length: lay.Length, Quantities: []Quantity{}, Warnings: []string{}}
	// The estimates are named whether or not error bars follow: the
	// means and marginals are estimated either way.
	dg.Estimates = Frequencies.String()
	if out.cond != nil {
		dg.Estimates = RaoBlackwell.String()
	}
	switch {
	case lay.Kind == LayoutChains:
		dg.Source = SourceChains
		dg.Note = fmt.Sprintf("from %d chains of %d draws (warm-up %d, thinned by %d): MCSE = sd/√ESS", lay.Groups, lay.Length, lay.Warmup, lay.Thin)
		switch lay.Stopped {
		case StopTarget:
			dg.Note += "; the run stopped when every quantity's ESS reached its target"
		case StopIters:
			dg.Note += "; the run stopped at its iteration limit (--max-iters) before every quantity's ESS reached its target and every rare state was entered often enough"
		case StopTime:
			dg.Note += "; the run stopped at its time limit (--max-time), so another run with the same seed may keep other draws"
		}
		if stratifiedChains(out.Pipeline) {
			dg.Note += "; the chains are stratified, not independent"
			dg.Warnings = append(dg.Warnings, stratifiedWarning)
		}
	case lay.Kind == LayoutReplicates:
		dg.Source = SourceReplicates
		dg.Note = fmt.Sprintf("from %d independent replicates of %d: MCSE = sd of the replicates' estimates/√%d", lay.Groups, lay.Length, lay.Groups)
	case out.lastOneShot():
		dg.Source = SourceIID
		dg.Note = fmt.Sprintf("from %d independent exact draws: MCSE = sd/√ESS", lay.Length)
	default:
		dg.Source = SourceNone
		dg.Note = "none: these are the final states or particles of one run; give --replicates R (R ≥ 2 independent runs) or, for an MCMC method, --draws (and --chains)"
		dg.Warnings = append(dg.Warnings, out.Warnings...)
		return dg, nil
	}
	if dg.Source != SourceReplicates && lay.Length < diag.MinDraws {
		// Too short for split-R̂ and ESS: the samples stand, without
		// error bars.
		what, flag := "draws per chain", "--draws"
		switch {
		case dg.Source == SourceIID:
			what, flag = "exact draws", "--n"
		case len(out.Pipeline.Stages) == 0:
			// Draws read from a file (dstein summary): no flag of this
			// command makes more of them.
			flag = "in the file"
		}
		dg.Source = SourceNone
		dg.Note = fmt.Sprintf("none: %d %s are too few for R̂ and ESS (at least %d)", lay.Length, what, diag.MinDraws)
		dg.Warnings = append(dg.Warnings, out.Warnings...)
		dg.Warnings = append(dg.Warnings, fmt.Sprintf("no error bars: %d %s are too few for R̂ and ESS; keep at least %d (%s)", lay.Length, what, diag.MinDraws, flag))
		return dg, nil
	}
	s := out.Samples
	qs := quantities(m)
	results := make([]Quantity, len(qs))
	errs := make([]error, len(qs))
	skip := make([]bool, len(qs))
	z := normal90
	if lay.Kind == LayoutReplicates {
		z = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(lay.Groups - 1)}.Quantile(0.95)
	}
	if out.cond != nil {
		dg.Note += "; variables Rao–Blackwellised (each draw's conditional probabilities given its other variables, averaged)"
	}
	summarize := func(groups [][]float64) (Quantity, error) {
		if lay.Kind == LayoutReplicates {
			return replicateQuantity(groups)
		}
		sm, err := diag.Summarize(groups) // pooled workspaces
		return Quantity{Mean: sm.Mean, SD: sm.SD, MCSE: sm.MCSE, BulkESS: sm.BulkESS, TailESS: sm.TailESS, Rhat: Float(sm.Rhat), MCSESD: sm.MCSESD}, err
	}
	// The visits of each variable quantity's state, and whether some state
	// is rare.
	visits := make([]int, len(qs))
	anyRare := false
	for k, q := range qs {
		if q.v >= 0 {
			visits[k] = q.visits(s)
			anyRare = anyRare || (min(visits[k], s.N-visits[k]) < RareVisits && !q.ruledOut(m))
		}
	}
	// widen holds rareWidening's bound per variable; fallback says that it
	// would have cost too much.
	var widen []float64
	fallback := false
	// logpESS is log p*'s bulk ESS: the effective size of a rare state's
	// frequency when its own series is constant.
	logpESS := float64(s.N)
	do := func(k int, vals []float64, groups [][]float64) {
		q := qs[k]
		q.fill(vals, s)
		if slices.ContainsFunc(vals, func(v float64) bool { return math.IsInf(v, 0) || math.IsNaN(v) }) {
			skip[k] = true
			return
		}
		visits := visits[k]
		rare := q.v >= 0 && min(visits, s.N-visits) < RareVisits && !q.ruledOut(m)
		// With a rare state somewhere, the conditionals of the other
		// variables were averaged over draws that missed configurations
		// in which they may differ much (the strong RBM's z1: its
		// conditional is 0.987 in most draws and far lower in about one
		// in a thousand; runs of 1000 draws that missed those covered
		// the exact mean 46% of the time): their MCSE takes in
		// rareWidening's variance, or, where that would cost too much,
		// their intervals also hold the frequencies' own.
		var freq [2]float64
		hull := false
		if q.v >= 0 && out.cond != nil {
			if fallback && !rare {
				qf, err := summarize(groups)
				if err != nil {
					errs[k] = fmt.Errorf("diagnosing %s: %w", q.name, err)
					return
				}
				freq, hull = [2]float64{qf.Mean - z*qf.MCSE, qf.Mean + z*qf.MCSE}, true
			}
			q.fillConditional(vals, m, out.cond)
		}
		qt, err := summarize(groups)
		if err != nil {
			errs[k] = fmt.Errorf("diagnosing %s: %w", q.name, err)
			return
		}
		qt.Name = q.name
		qt.CI90 = [2]float64{qt.Mean - z*qt.MCSE, qt.Mean + z*qt.MCSE}
		if widen != nil && q.v >= 0 && widen[q.v] > 0 {
			scale := 1.0
			if q.state < 0 {
				st := m.States(q.v)
				scale = math.Abs(st[1] - st[0])
			}
			qt.MCSE = math.Sqrt(qt.MCSE*qt.MCSE + scale*scale*widen[q.v])
			qt.CI90 = [2]float64{qt.Mean - z*qt.MCSE, qt.Mean + z*qt.MCSE}
		}
		if hull {
			qt.CI90 = [2]float64{min(qt.CI90[0], freq[0]), max(qt.CI90[1], freq[1])}
		}
		if !rare && q.v >= 0 && lay.Kind != LayoutReplicates && qt.MCSE > 0 {
			// A state met often in few long excursions: the normal
			// interval around a frequency of few effective visits is
			// skewed and misses on one side (a two-state Markov chain
			// with P(1) = 0.01 and lag-1 correlation 0.9, 4 × 4000
			// draws: 160 visits but 8 effective ones; 16.1% of 1727
			// unflagged intervals missed, 251 of the 278 misses below
			// the truth; TestThinlyMetStateCoverage). Below ThinVisits
			// effective visits the interval also holds the
			// Clopper–Pearson interval at the binomial effective size
			// p(1 − p)/MCSE²: 9.7% missed, still mostly below the truth
			// (8.2% below, 1.6% above), since the number of excursions
			// spreads more than a binomial count of that size.
			lo, width := 0.0, 1.0
			if q.state < 0 {
				st := m.States(q.v)
				lo, width = st[0], st[1]-st[0]
			}
			p, se := (qt.Mean-lo)/width, qt.MCSE/math.Abs(width)
			if p > 0 && p < 1 {
				neff := max(p*(1-p)/(se*se), 1)
				if min(p, 1-p)*neff < ThinVisits {
					cl, ch := clopperPearson(p*neff, neff, 0.90)
					cl, ch = lo+width*cl, lo+width*ch
					if cl > ch {
						cl, ch = ch, cl
					}
					qt.CI90 = [2]float64{min(qt.CI90[0], cl), max(qt.CI90[1], ch)}
					qt.MCSE = max(qt.MCSE, (qt.CI90[1]-qt.CI90[0])/(2*z))
				}
			}
		}
		if q.v >= 0 && lay.Kind == LayoutReplicates && out.cond == nil {
			// Each replicate's estimate is a count over its lay.Length
			// draws, so it moves in steps of one draw. Replicates of
			// stratified chains can all land on the same count (the count
			// nearest n·p, to either side), and then their spread is zero:
			// rbm-small.json's z0 under `hybrid --replicates 5` read
			// 0.06 ± 0 against the exact 0.0625. Agreeing replicates
			// place the answer within a step of their count, so the
			// interval is at least that wide.
			step := 1 / float64(lay.Length)
			if q.state < 0 {
				st := m.States(q.v)
				step *= math.Abs(st[1] - st[0])
			}
			if qt.CI90[1]-qt.CI90[0] < 2*step {
				qt.CI90 = [2]float64{min(qt.CI90[0], qt.Mean-step), max(qt.CI90[1], qt.Mean+step)}
				qt.MCSE = max(qt.MCSE, step/z)
			}
		}
		if rare {
			qt.Rare = true
			neff := logpESS
			if qt.SD > 0 {
				neff = qt.BulkESS
			}
			neff = min(max(neff, 1), float64(s.N))
			lo, hi := clopperPearson(float64(visits)/float64(s.N)*neff, neff, 0.90)
			if q.state < 0 {
				st := m.States(q.v)
				lo, hi = st[0]+(st[1]-st[0])*lo, st[0]+(st[1]-st[0])*hi
				if lo > hi {
					lo, hi = hi, lo
				}
			}
			qt.CI90 = [2]float64{min(qt.CI90[0], lo), max(qt.CI90[1], hi)}
			// The MCSE says as much: the interval's half-width over z, where
			// that is more (sd/√ESS is about 0 for a state the draws hardly
			// met, and a reader of the MCSE alone would trust it).
			qt.MCSE = max(qt.MCSE, (qt.CI90[1]-qt.CI90[0])/(2*z))
		}
		if q.v >= 0 {
			// A probability lies in [0, 1], a two-state mean between the
			// states' values: the part of the interval outside holds no
			// possible value.
			lo, hi := 0.0, 1.0
			if q.state < 0 {
				st := m.States(q.v)
				lo, hi = min(st[0], st[1]), max(st[0], st[1])
			}
			qt.CI90 = [2]float64{max(qt.CI90[0], lo), min(qt.CI90[1], hi)}
		}
		qt.MCSEMean, qt.RHat = qt.MCSE, qt.Rhat
		if q.v < 0 {
			sorted := slices.Clone(vals)
			slices.Sort(sorted)
			q5, q50, q95 := quantile(sorted, 0.05), quantile(sorted, 0.5), quantile(sorted, 0.95)
			qt.Q5, qt.Q50, qt.Q95 = &q5, &q50, &q95
		}
		results[k] = qt
	}
	newBuffers := func() ([]float64, [][]float64) {
		vals := make([]float64, s.N)
		groups := make([][]float64, lay.Groups)
		for g := range groups {
			groups[g] = vals[g*lay.Length : (g+1)*lay.Length]
		}
		return vals, groups
	}
	// log p* first: the rare states' intervals use its ESS (a model
	// without a density has none: its first variable goes first).
	vals, groups := newBuffers()
	do(0, vals, groups)
	if qs[0].v < 0 && qs[0].name == "log_p" && errs[0] == nil && !skip[0] && results[0].SD > 0 {
		logpESS = results[0].BulkESS
	}
	// Rare states move the other variables' intervals (rareWidening).
	if out.cond != nil && anyRare {
		w, ok, err := rareWidening(ctx, m, s, min(max(logpESS, 1), float64(s.N)))
		if err != nil {
			return nil, err
		}
		widen, fallback = w, !ok
	}
	// The other quantities are independent: each chunk of them gets its
	// own buffers, so the results do not depend on the number of cores.
	parallel.For(len(qs)-1, 16, parallel.Func(func(lo, hi int) {
		vals, groups := newBuffers()
		for k := lo + 1; k < hi+1; k++ {
			if err := ctx.Err(); err != nil {
				errs[k] = err
				return
			}
			do(k, vals, groups)
		}
	}))
	var skipped []string
	for k, q := range qs {
		if errs[k] != nil {
			return nil, errs[k]
		}
		if skip[k] {
			skipped = append(skipped, q.name)
			continue
		}
		dg.Quantities = append(dg.Quantities, results[k])
	}
	if len(skipped) > 0 {
		dg.Warnings = append(dg.Warnings, fmt.Sprintf("%s not diagnosed: some samples are in states of probability zero", strings.Join(skipped, ", ")))
	}
	dg.Warnings = append(dg.Warnings, convergenceWarnings(dg)...)
	if w := rareWarning(dg, s); w != "" {
		dg.Warnings = append(dg.Warnings, w)
	}
	if dg.Source == SourceReplicates {
		if a := out.approximateStage(); a != "" {
			dg.Warnings = append(dg.Warnings, fmt.Sprintf(uncalibrated, a))
		} else {
			dg.Warnings = append(dg.Warnings, unconverged)
		}
	}
	dg.Warnings = append(dg.Warnings, out.Warnings...)
	return dg, nil
}

// approximateStage returns the name of the first stage whose method does
// not converge to the model (GF-SVGD), or "".
func (o *Output) approximateStage() string {
	for _, st := range o.Pipeline.Stages {
		if m, err := sampler.Lookup(st.Method); err == nil && m.Approximate {
			return st.Method
		}
	}
	return ""
}

// lastOneShot reports whether the run's last stage makes independent
// exact draws.
func (o *Output) lastOneShot() bool {
	if len(o.Pipeline.Stages) == 0 {
		return false
	}
	m, err := sampler.Lookup(o.Pipeline.Stages[len(o.Pipeline.Stages)-1].Method)
	return err == nil && m.OneShot
}
