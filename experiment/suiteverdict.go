package experiment

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/dstein/dstein/report"
)

// Why one file of about 500 lines: the suite's tables, verdict rule and figure read the
// same ratio table; the rule's two conditions and tie-break are documented once, here.

// suiteStats are the suite's scores, each lower-is-better, with the words
// the table uses.
var suiteStats = []struct{ metric, label string }{
	{"mse", "MSE of the means"},
	{"pair_rmse", "RMSE of the pair moments"},
	{"energy_tv", "TV distance of the energy (log p*) distribution"},
	{"mmd2", "MMD² with exp(−H/d)"},
	{"mode_err2", "squared error of the mode mass P(M > 0)"},
}

// ratio is a ratio of two mean scores with its 95% interval.
type ratio struct {
	v, lo, hi float64
	ok        bool
}

// ratioOf divides two independent means with standard errors; the
// interval is exp(±1.96·SE) of the log ratio, SE² the sum of the squared
// relative standard errors (the delta method).
func ratioOf(a, sa, b, sb float64) ratio {
	if !(a > 0) || !(b > 0) {
		if a == 0 && b == 0 {
			return ratio{1, 1, 1, true}
		}
		return ratio{}
	}
	v := a / b
	se := math.Hypot(sa/a, sb/b)
	f := math.Exp(1.96 * se)
	return ratio{v, v / f, v * f, true}
}

// halfWidth is the relative half-width of the interval.
func (r ratio) halfWidth() float64 { return (r.hi/r.v - r.lo/r.v) / 2 }

type cell struct {
	mean, se float64
	trials   int
}

// suiteTable indexes the summary rows: method → x → metric.
type suiteTable map[string]map[float64]map[string]cell

func newSuiteTable(rows []Row) suiteTable {
	t := suiteTable{}
	for _, r := range rows {
		if t[r.Method] == nil {
			t[r.Method] = map[float64]map[string]cell{}
		}
		if t[r.Method][r.X] == nil {
			t[r.Method][r.X] = map[string]cell{}
		}
		t[r.Method][r.X][r.Metric] = cell{r.Mean, r.SE, r.Trials}
	}
	return t
}

// trials is the number of trials behind a ratio of two methods' metric
// at x: the trials both ran (a target or method with capped trials, such
// as rbm-100's 12 or GWG's 10, has fewer than the suite).
func (t suiteTable) trials(a, b string, x float64, metric string) int {
	ca, ok1 := t.get(a, x, metric)
	cb, ok2 := t.get(b, x, metric)
	switch {
	case ok1 && ok2:
		return min(ca.trials, cb.trials)
	case ok1:
		return ca.trials
	}
	return cb.trials
}

func (t suiteTable) get(method string, x float64, metric string) (cell, bool) {
	c, ok := t[method][x][metric]
	return c, ok
}

// best returns the method with the smallest mean of metric at x among the
// methods other than exact sampling.
func (t suiteTable) best(methods []suiteMethod, x float64, metric string) (string, bool) {
	name, v := "", math.Inf(1)
	for _, m := range methods {
		if m.name == suiteReference {
			continue
		}
		if c, ok := t.get(m.name, x, metric); ok && c.mean < v {
			name, v = m.name, c.mean
		}
	}
	return name, name != ""
}

func (t suiteTable) ratio(a, b string, x float64, metric string) ratio {
	ca, ok1 := t.get(a, x, metric)
	cb, ok2 := t.get(b, x, metric)
	if !ok1 || !ok2 {
		return ratio{}
	}
	return ratioOf(ca.mean, ca.se, cb.mean, cb.se)
}

// verdict is a candidate's record over the suite.
type verdict struct {
	method string
	// worst is its largest ratio to the best method, at (model, stat).
	worst     ratio
	worstAt   string
	vsGibbs   ratio
	vsGibbsAt string
	// gibbsFailures are the ratios to Gibbs whose whole 95% interval
	// lies above 1.5.
	gibbsFailures []string
	gibbsWorse    []ratio
	modeFailures  []string
	ran           int
	// logSum is the sum of the logs of its ratios to the best method over
	// the ran cells: exp(logSum/ran) is their geometric mean, the tie-break.
	logSum float64
}

// geoMean is the geometric mean of the candidate's ratios to the best
// method over every model and statistic it ran.
func (v verdict) geoMean() float64 { return math.Exp(v.logSum / float64(v.ran)) }

// suiteResult adds the ratio rows, writes the table of ratios and the
// verdict as notes, and draws the figure.
func suiteResult(r *runner, rows []Row, targets []*suiteTarget, methods []suiteMethod, budget, n int) (*Result, error) {
	t := newSuiteTable(rows)
	var extra []Row
	add := func(method, ref string, x float64, stat, prefix string, rt ratio) {
		if rt.ok {
			extra = append(extra, Row{Method: method, Setting: r.setting, X: x, Metric: prefix + stat, Mean: rt.v, SE: (rt.hi - rt.lo) / (2 * 1.96), Trials: t.trials(method, ref, x, stat)})
		}
	}
	for _, tg := range targets {
		for _, st := range suiteStats {
			best, ok := t.best(methods, tg.x, st.metric)
			if !ok {
				continue
			}
			for _, m := range methods {
				add(m.name, best, tg.x, st.metric, "ratio_to_best:", t.ratio(m.name, best, tg.x, st.metric))
				add(m.name, suiteReference, tg.x, st.metric, "ratio_to_iid:", t.ratio(m.name, suiteReference, tg.x, st.metric))
				add(m.name, suiteBaseline, tg.x, st.metric, "ratio_to_gibbs:", t.ratio(m.name, suiteBaseline, tg.x, st.metric))
			}
		}
		for _, m := range methods {
			first, ok1 := t.get(m.name, tg.x, "mmd2_first")
			all, ok2 := t.get(m.name, tg.x, "mmd2")
			if ok1 && ok2 && all.mean > 0 {
				extra = append(extra, Row{Method: m.name, Setting: r.setting, X: tg.x, Metric: "mmd2_first_share", Mean: first.mean / all.mean, Trials: all.trials})
			}
		}
	}
	res := &Result{Rows: append(rows, extra...), Show: []string{"mode_mass"}}
	res.Notes = append(res.Notes, fmt.Sprintf("Every method returns n = %d samples at a cost of %d sweeps per sample (pt: %d rounds of 8 temperatures; dhmc: %d iterations of 8 leapfrog steps; hybrid: 100 GF-SVGD iterations + %d stratified sweeps); %d trials; models by x:",
		n, budget, max(1, budget/8), max(1, budget/8), max(1, budget-100), r.trials))
	for _, tg := range targets {
		res.Notes = append(res.Notes, fmt.Sprintf("  x = %g  %-16s %s; %s", tg.x, tg.name, tg.what, tg.truthNote))
	}
	for _, st := range suiteStats {
		res.Notes = append(res.Notes, ratioMatrix(t, targets, methods, st.metric, st.label)...)
	}
	res.Notes = append(res.Notes, firstOrderLines(t, targets, methods)...)
	res.Notes = append(res.Notes, wallLines(t, targets, methods)...)
	res.Notes = append(res.Notes, widthLines(t, targets, methods)...)
	verdicts := suiteVerdicts(t, targets, methods)
	res.Rows = append(res.Rows, verdictRows(r, verdicts)...)
	res.Notes = append(res.Notes, verdictLines(verdicts)...)
	if r.trials < minVerdictTrials {
		res.Notes = append(res.Notes, fmt.Sprintf("  (%d trials: too few for the intervals the verdict relies on; the default was chosen from the full run of %d trials, EXPERIMENTS.md)", r.trials, suiteTrials))
	}
	return res, suiteFigure(r, rows, t, targets, methods, budget, n)
}

// Rows of the verdict on the default, at x = 0 (the whole suite), one set
// per candidate: whether it meets both conditions (1 or 0), its worst
// ratio to the best method (SE from the 95% interval), and, for the one
// the rule chooses, a row of value 1. The computed verdict of the result
// (judgeDefault) reads them.
const (
	metricConditions = "default_conditions"
	metricWorst      = "default_worst_ratio"
	metricChoice     = "default_choice"
)

func verdictRows(r *runner, vs []verdict) []Row {
	var out, meets []Row
	var ok []verdict
	for _, v := range vs {
		met := 0.0
		if len(v.gibbsFailures) == 0 && len(v.modeFailures) == 0 {
			met = 1
			ok = append(ok, v)
		}
		out = append(out,
			Row{Method: v.method, Setting: r.setting, Metric: metricConditions, Mean: met, Trials: r.trials},
			Row{Method: v.method, Setting: r.setting, Metric: metricWorst, Mean: v.worst.v, SE: (v.worst.hi - v.worst.lo) / (2 * 1.96), Trials: r.trials})
	}
	if len(ok) > 0 {
		choice, _ := chooseVerdict(ok)
		meets = append(meets, Row{Method: choice.method, Setting: r.setting, Metric: metricChoice, Mean: 1, Trials: r.trials})
	}
	return append(out, meets...)
}

// matrix writes a model × method table under a title: one cell per
// model and method from cell ("—" where the method did not run).
func matrix(title string, targets []*suiteTarget, methods []suiteMethod, cell func(m suiteMethod, tg *suiteTarget) (string, bool)) []string {
	out := []string{"", title}
	line := fmt.Sprintf("%-16s", "model")
	for _, m := range methods {
		line += fmt.Sprintf(" %13s", m.name)
	}
	out = append(out, line)
	for _, tg := range targets {
		line := fmt.Sprintf("%-16s", tg.name)
		for _, m := range methods {
			c, ok := cell(m, tg)
			if !ok {
				c = "—"
			}
			line += fmt.Sprintf(" %13s", c)
		}
		out = append(out, line)
	}
	return out
}

// ratioMatrix writes one statistic as a model × method table of ratios to
// exact i.i.d. sampling, the best method of each row marked with *.
func ratioMatrix(t suiteTable, targets []*suiteTarget, methods []suiteMethod, metric, label string) []string {
	var scored []*suiteTarget
	for _, tg := range targets {
		if _, ok := t.best(methods, tg.x, metric); ok {
			scored = append(scored, tg)
		}
	}
	targets = scored
	return matrix(label+": ratio to exact i.i.d. (* best at equal cost; ± = 95% CI half-width)", targets, methods, func(m suiteMethod, tg *suiteTarget) (string, bool) {
		c, ran := t.get(m.name, tg.x, metric)
		if !ran {
			return "", false
		}
		rt := t.ratio(m.name, suiteReference, tg.x, metric)
		if !rt.ok {
			return report.FormatValue(c.mean), true
		}
		mark := " "
		if best, _ := t.best(methods, tg.x, metric); m.name == best {
			mark = "*"
		}
		return fmt.Sprintf("%.3g±%.0f%%%s", rt.v, 100*rt.halfWidth(), mark), true
	})
}

// firstOrderLines report the share of MMD² that is first-order (from the
// marginals alone) for exact sampling and each method.
func firstOrderLines(t suiteTable, targets []*suiteTarget, methods []suiteMethod) []string {
	return matrix("share of MMD² that is first-order (mean first-order part / mean MMD²)", targets, methods, func(m suiteMethod, tg *suiteTarget) (string, bool) {
		f, ok1 := t.get(m.name, tg.x, "mmd2_first")
		a, ok2 := t.get(m.name, tg.x, "mmd2")
		if !ok1 || !ok2 || a.mean <= 0 {
			return "", false
		}
		return fmt.Sprintf("%.0f%%", 100*f.mean/a.mean), true
	})
}

// wallLines write the mean wall time of a run per model and method.
func wallLines(t suiteTable, targets []*suiteTarget, methods []suiteMethod) []string {
	return matrix("wall time per run, seconds (mean over trials; the machine's 2 cores)", targets, methods, func(m suiteMethod, tg *suiteTarget) (string, bool) {
		c, ok := t.get(m.name, tg.x, "seconds")
		return fmt.Sprintf("%.3g", c.mean), ok
	})
}

// widthLines say, per statistic, how many ratios to exact sampling have a
// 95% interval within ±20% (the suite's target for its number of trials).
func widthLines(t suiteTable, targets []*suiteTarget, methods []suiteMethod) []string {
	out := []string{"", "ratios to exact i.i.d. sampling whose 95% interval is within ±20%"}
	for _, st := range suiteStats {
		in, tot := 0, 0
		for _, tg := range targets {
			for _, m := range methods {
				if m.name == suiteReference {
					continue
				}
				if rt := t.ratio(m.name, suiteReference, tg.x, st.metric); rt.ok {
					tot++
					if rt.hi/rt.v <= 1.2 && rt.v/rt.lo <= 1.2 {
						in++
					}
				}
			}
		}
		out = append(out, fmt.Sprintf("  %-10s %d of %d", st.metric, in, tot))
	}
	return out
}

// minVerdictTrials is the fewest trials whose delta-method intervals the
// verdict trusts: with fewer, the standard errors of the squared errors
// are themselves too noisy (a --quick run has 2).
const minVerdictTrials = 20

// suiteVerdicts scores each candidate: its worst ratio to the best method
// over every model and statistic, its worst ratio to plain Gibbs, and the
// two-mode models whose mode mass it misses by more than 3 standard
// errors.
func suiteVerdicts(t suiteTable, targets []*suiteTarget, methods []suiteMethod) []verdict {
	var out []verdict
	for _, m := range methods {
		if !m.candidate {
			continue
		}
		v := verdict{method: m.name}
		for _, tg := range targets {
			for _, st := range suiteStats {
				best, ok := t.best(methods, tg.x, st.metric)
				if !ok {
					continue
				}
				if rt := t.ratio(m.name, best, tg.x, st.metric); rt.ok {
					v.ran++
					v.logSum += math.Log(rt.v)
					if !v.worst.ok || rt.v > v.worst.v {
						v.worst, v.worstAt = rt, tg.name+" / "+st.metric
					}
				}
				if rg := t.ratio(m.name, suiteBaseline, tg.x, st.metric); rg.ok {
					if !v.vsGibbs.ok || rg.v > v.vsGibbs.v {
						v.vsGibbs, v.vsGibbsAt = rg, tg.name+" / "+st.metric
					}
					if rg.lo > 1.5 {
						v.gibbsWorse = append(v.gibbsWorse, rg)
						v.gibbsFailures = append(v.gibbsFailures, fmt.Sprintf("%s / %s %.3g× [%.3g, %.3g]", tg.name, st.metric, rg.v, rg.lo, rg.hi))
					}
				}
			}
			if tg.mode == nil || math.Abs(tg.mode.P-0.5) < 1e-9 {
				// Symmetric modes (no field): the mass is scored, but
				// the condition is about the two-mode models with a field.
				continue
			}
			if c, ok := t.get(m.name, tg.x, "mode_mass"); ok {
				se := math.Hypot(c.se, tg.mode.SE)
				if math.Abs(c.mean-tg.mode.P) > 3*se {
					v.modeFailures = append(v.modeFailures, fmt.Sprintf("%s: %.3f ± %.3f against %.3f", tg.name, c.mean, se, tg.mode.P))
				}
			}
		}
		if v.ran > 0 {
			// The largest failures first.
			idx := make([]int, len(v.gibbsFailures))
			for k := range idx {
				idx[k] = k
			}
			sort.SliceStable(idx, func(a, b int) bool { return v.gibbsWorse[idx[a]].v > v.gibbsWorse[idx[b]].v })
			sorted := make([]string, len(idx))
			for k, i := range idx {
				sorted[k] = v.gibbsFailures[i]
			}
			v.gibbsFailures = sorted
			out = append(out, v)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].worst.v < out[b].worst.v })
	return out
}

// verdictLines write the candidates in order of their worst ratio to the
// best method, with the two conditions a default must meet, and name the
// choice. The rule (fixed in round three, before the run that added the
// Potts target): among the candidates that meet both conditions, the one
// with the smallest worst ratio leads; every candidate that meets them and
// whose worst ratio's 95% interval overlaps the leader's is tied with it,
// and among the tied ones the smallest geometric mean of the ratios to the
// best method, over every model and statistic, wins. A single worst cell
// ranks candidates by noise when their intervals overlap; the geometric
// mean weighs every cell alike.
func verdictLines(vs []verdict) []string {
	out := []string{"", "verdict: candidates for the default, by their worst ratio to the best method at equal cost (all models and statistics); geo = geometric mean of the ratios to the best over all of them"}
	var meets []verdict
	for _, v := range vs {
		okGibbs := len(v.gibbsFailures) == 0
		okMode := len(v.modeFailures) == 0
		status := "meets both conditions"
		if !okGibbs || !okMode {
			var why []string
			if !okGibbs {
				why = append(why, fmt.Sprintf("worse than 1.5× Gibbs beyond the 95%% interval in %d places: %s", len(v.gibbsFailures), firstFew(v.gibbsFailures)))
			}
			if !okMode {
				why = append(why, "mode mass off by > 3 SE ("+firstFew(v.modeFailures)+")")
			}
			status = "fails: " + strings.Join(why, "; ")
		} else {
			meets = append(meets, v)
		}
		out = append(out, fmt.Sprintf("  %-14s worst %.3g× the best [%.3g, %.3g] at %s; geo %.3g×; worst vs Gibbs %.3g× [%.3g, %.3g] at %s; %s",
			v.method, v.worst.v, v.worst.lo, v.worst.hi, v.worstAt, v.geoMean(), v.vsGibbs.v, v.vsGibbs.lo, v.vsGibbs.hi, v.vsGibbsAt, status))
	}
	if len(meets) == 0 {
		out = append(out, "  no candidate meets both conditions (never worse than Gibbs by more than 1.5× beyond the 95% interval; mode masses of the two-mode models with fields within 3 SE)")
		return out
	}
	choice, tied := chooseVerdict(meets)
	if len(tied) == 1 {
		out = append(out, fmt.Sprintf("  choice: %s (the smallest worst ratio among the candidates that meet both conditions; no other one's interval overlaps it)", choice.method))
		return out
	}
	names := make([]string, len(tied))
	for k, v := range tied {
		names[k] = fmt.Sprintf("%s %.3g×", v.method, v.geoMean())
	}
	out = append(out, fmt.Sprintf("  choice: %s (the worst ratios' intervals of %d candidates that meet both conditions overlap the smallest one's; among them the smallest geometric mean of the ratios to the best: %s)", choice.method, len(tied), strings.Join(names, ", ")))
	return out
}

// chooseVerdict applies the rule of verdictLines to the candidates that
// meet both conditions (vs sorted by worst ratio, not empty): it returns
// the choice and the tied candidates, the leader first.
func chooseVerdict(vs []verdict) (verdict, []verdict) {
	lead := vs[0]
	tied := []verdict{lead}
	for _, v := range vs[1:] {
		if v.worst.lo <= lead.worst.hi && lead.worst.lo <= v.worst.hi {
			tied = append(tied, v)
		}
	}
	choice := tied[0]
	for _, v := range tied[1:] {
		if v.geoMean() < choice.geoMean() {
			choice = v
		}
	}
	return choice, tied
}

// firstFew joins up to three items and counts the rest.
func firstFew(s []string) string {
	if len(s) <= 3 {
		return strings.Join(s, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(s[:3], "; "), len(s)-3)
}

// suiteFigure draws, per statistic, each method's ratio to exact i.i.d.
// sampling on a log scale, per model, with 95% intervals; each method keeps
// its place in methods as its style index, so that no two of the suite's
// methods share colour, marker and dashes.
func suiteFigure(r *runner, rows []Row, t suiteTable, targets []*suiteTarget, methods []suiteMethod, budget, n int) error {
	var labels []string
	for _, tg := range targets {
		labels = append(labels, tg.name)
	}
	var panels []report.Panel
	for _, st := range suiteStats {
		p := report.Panel{Title: st.label + ": ratio to exact i.i.d. sampling (95% interval)", YLabel: "ratio to exact i.i.d. (log scale)", XLabels: labels, LogY: true}
		shown, exactMeans := 0, false
		for k, m := range methods {
			if m.name == suiteReference {
				continue
			}
			s := report.Series{Name: m.label, Points: true, ColorIndex: k}
			off := -0.35 + 0.7*float64(shown)/float64(len(methods)-2)
			for i, tg := range targets {
				rt := t.ratio(m.name, suiteReference, tg.x, st.metric)
				if !rt.ok {
					continue
				}
				if c, ok := t.get(m.name, tg.x, "mse"); ok && st.metric == "mse" && c.mean <= 2*mseRounding {
					// Exact up to rounding (Rao–Blackwellised means of
					// independent variables): left out, so that the axis
					// shows the others.
					exactMeans = true
					continue
				}
				s.X = append(s.X, float64(i+1)+off)
				s.Y = append(s.Y, rt.v)
				s.Lo = append(s.Lo, rt.lo)
				s.Hi = append(s.Hi, rt.hi)
			}
			shown++
			if len(s.X) > 0 {
				p.Series = append(p.Series, s)
			}
		}
		if exactMeans {
			p.Title += "; means exact up to rounding (Rao–Blackwellised, independent variables) left out"
		}
		p.Series = append(p.Series, report.Series{Name: "exact i.i.d. (ratio 1)", X: []float64{0.5, float64(len(targets)) + 0.5}, Y: []float64{1, 1}, Dashed: true, LineOnly: true, ColorIndex: exactIndex(methods)})
		panels = append(panels, p)
	}
	fig := report.Figure{Panels: panels, Cols: 1, Width: 11 * 72, Height: 4.2 * 72, SharedLegend: true, Title: figureTitle(r, rows,
		"benchmark suite: each method's score over exact i.i.d. sampling's on every model (below 1: better than i.i.d. draws)",
		fmt.Sprintf("n = %d samples per run, %d sweeps per sample", n, budget))}
	return r.save(fig)
}

// exactIndex is the style index of the exact method (its place in
// methods), which the ratio-1 line takes; 0 when it is not there.
func exactIndex(methods []suiteMethod) int {
	for k, m := range methods {
		if m.name == suiteReference {
			return k
		}
	}
	return 0
}
