// The notes and equal-compute figures of the sampling experiments.

package experiment

import (
	"fmt"
	"math"
	"strings"

	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/sampler/dhmc"
	"github.com/dstein/dstein/sampler/dmala"
)

// Equal-compute metrics. For a run whose n samples estimate the d means
// with mean squared error MSE, the effective sample size is
//
//	eff_n = (Σ_i Var_p(z_i) / d) / MSE,
//
// the number of independent exact draws whose means would have that MSE on
// average (their expected MSE is Σ_i Var_p(z_i) / (n·d)), computed from the
// exact marginals; ess_per_s = eff_n / seconds, the run's wall time. Both
// are per trial and then averaged over trials. They need no
// autocorrelation estimate, so they apply to every method alike (GF-SVGD
// and exact sampling included), and they charge a chain method for its
// burn-in bias as well as its autocorrelation. One trial's MSE is noisy:
// for independent draws d·MSE·n/Σ Var is close to χ²_d/d, whose inverse has
// mean d/(d−2), so the mean of eff_n over trials overstates n by about that
// factor (2% at d = 100, 14% at d = 16). The exact sampler's seconds exclude
// building the exact answers.
const effNote = "eff_n = (Σ_i Var_p(z_i)/d) / MSE with Var_p from the exact marginals: the number of i.i.d. exact draws whose means have that expected MSE (per trial, so its mean over trials is biased up by about d/(d−2) even for exact draws); ess_per_s = eff_n / wall seconds of the run (exact: sampling only, the exact answers are built once per setting)."

// effNFloorNote says which methods have trials without eff_n because
// their MSE was at machine zero (effNFloor), or "" when none has.
func effNFloorNote(rows []Row) string {
	trials := map[[2]string]int{}
	for _, r := range rows {
		if r.Metric == "eff_n" {
			trials[[2]string{r.Method, report.FormatValue(r.X)}] = r.Trials
		}
	}
	var parts []string
	for _, r := range rows {
		if r.Metric != "mse" {
			continue
		}
		if k := r.Trials - trials[[2]string{r.Method, report.FormatValue(r.X)}]; k > 0 {
			parts = append(parts, fmt.Sprintf("%s at %v (%d of %d trials)", r.Method, report.FormatValue(r.X), k, r.Trials))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("eff_n and ess_per_s are left out where the MSE is below %g × the i.i.d. variance (the means are exact to rounding; the ratio would be rounding noise): %s.", effNFloor, strings.Join(parts, ", "))
}

// slopeFloor is the mean below which a metric counts as zero to rounding
// for the slope fits: the squared rounding error of a mean of ±1 values
// is about 10⁻³², and no sampler's error comes near 10⁻²⁰ otherwise, so
// a fit through such a point would measure rounding.
const slopeFloor = 1e-20

// slopes fits log10(metric) against log10(x) by least squares for each
// method and describes the slopes.
func slopes(rows []Row, metric string, methods []sampleMethod) string {
	s := fmt.Sprintf("fitted slope of log10 %s against log10 n (the paper claims −1 for GF-SVGD):", metric)
	for _, mt := range methods {
		var xs, ys []float64
		zero := false
		for _, r := range rows {
			if r.Method == mt.name && r.Metric == metric {
				if r.Mean <= slopeFloor {
					zero = true
				}
				xs = append(xs, math.Log10(r.X))
				ys = append(ys, math.Log10(r.Mean))
			}
		}
		if zero {
			s += fmt.Sprintf(" %s n/a (%s at machine zero at some n);", mt.name, metric)
			continue
		}
		if len(xs) < 2 {
			continue
		}
		s += fmt.Sprintf(" %s %.2f;", mt.name, lsSlope(xs, ys))
	}
	return s
}

func methodLabels(methods []sampleMethod) ([]string, map[string]string) {
	var names []string
	labels := map[string]string{}
	for _, mt := range methods {
		names = append(names, mt.name)
		labels[mt.name] = mt.label
	}
	return names, labels
}

// isingGrid10 is the 10×10 open grid of the Ising experiments with coupling
// sigma and, when field > 0, fields drawn once from U(−field, field) with
// rng.NewKey(seed).For(rng.Model).Rand().
// fieldNote describes the fields option.
func fieldNote(a float64) string {
	if a == 0 {
		return "no fields"
	}
	return fmt.Sprintf("fields drawn once from U(−%g, %g)", a, a)
}

// gradientNote describes the budgets of the gradient-guided samplers.
func gradientNote(gwgSweeps, iters int) string {
	return fmt.Sprintf("GWG: %d sweeps of d proposals; DMALA: %d steps of one proposal that moves all d variables at once (a step evaluates one full log p* and one relaxed gradient, O(d·degree) work like one Gibbs sweep but slower than dstein's Gibbs kernel), step size α = %g", gwgSweeps, iters, dmala.DefaultStepSize) + hybridNote(iters)
}

// hybridNote describes the GF-SVGD hybrid and its ablation in a run of
// iters iterations, which caps the hybrid's transport (samplingMethods).
func hybridNote(iters int) string {
	return fmt.Sprintf("; gfsvgd-hybrid: %d iterations of the transport preset, then %d stratified Gibbs sweeps of the particles; strat-sweeps: the same sweeps from Γ of the initial draw, no transport", min(iters, infer.HybridIters), infer.HybridSweeps)
}

// evalNote says what the evaluation counts compare.
const evalNote = "evaluations count calls of different cost: a Gibbs site update or a GWG log p* change is local (O(degree)), a full log p* or relaxed gradient (GF-SVGD, GWG and DMALA proposals) is O(d·degree), and exact sampling counts none (left out of the log-scale panels); wall seconds are the fair axis."

// costSeries builds plot series of the mean metric against the mean cost,
// where cost is another metric of the same trials such as seconds or
// evaluations: one point per setting, one series per method (styled as in
// series), with ±SE bars on the metric, in their own units for log axes.
// Settings whose mean cost or metric is not positive are left out (a log
// axis cannot show them).
func costSeries(rows []Row, metric, cost string, methods []string, labels map[string]string) []report.Series {
	type at struct {
		method string
		x      float64
	}
	costs := map[at]float64{}
	for _, r := range rows {
		if r.Metric == cost {
			costs[at{r.Method, r.X}] = r.Mean
		}
	}
	var out []report.Series
	for k, m := range methods {
		s := report.Series{Name: labels[m], ColorIndex: k}
		if s.Name == "" {
			s.Name = m
		}
		for _, r := range rows {
			c, ok := costs[at{m, r.X}]
			if r.Metric != metric || r.Method != m || !ok || !(c > 0) || !(r.Mean > 0) {
				continue
			}
			s.X = append(s.X, c)
			s.Y = append(s.Y, r.Mean)
			s.Lo = append(s.Lo, r.Mean-r.SE)
			s.Hi = append(s.Hi, r.Mean+r.SE)
		}
		if len(s.X) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func dhmcNote() string {
	return fmt.Sprintf("step size %g (jitter ±%g%%), %d integration steps per iteration", dhmc.DefaultStepSize, 100*dhmc.DefaultStepJitter, dhmc.DefaultSteps)
}
