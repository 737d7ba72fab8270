package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/experiment/journal"
	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/internal/suggest"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/metrics"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/sampler/iid"
	"github.com/dstein/dstein/svgd"
)

// variant is one GF-SVGD variant of the high-dimension study: iters
// iterations of GF-SVGD with the relaxed surrogate at τ (0: the default)
// and the given settings, then sweeps Gibbs sweeps of the particles
// (stratified or not). iters = 0 with sweeps > 0 is the ablation: the sweeps
// alone from Γ of the N(0, 1) initial draw.
type variant struct {
	name       string
	iters      int
	tau        float64
	set        gfsvgd.Settings
	sweeps     int
	stratified bool
}

func bwScale(s float64) kernel.Bandwidth { return kernel.Bandwidth{Scale: s} }

// variantTable holds every variant of the study (EXPERIMENTS.md, "A
// particle method that beats i.i.d. sampling").
var variantTable = []variant{
	{name: "transport", iters: 500},
	{name: "bw16", iters: 500, set: gfsvgd.Settings{Bandwidth: bwScale(16)}},
	{name: "bw4", iters: 500, set: gfsvgd.Settings{Bandwidth: bwScale(4)}},
	{name: "bw64", iters: 500, set: gfsvgd.Settings{Bandwidth: bwScale(64)}},
	{name: "tau0.1", iters: 500, tau: 0.1},
	{name: "tau0.1-bw16", iters: 500, tau: 0.1, set: gfsvgd.Settings{Bandwidth: bwScale(16)}},
	{name: "beta0.2-anneal300", iters: 500, set: gfsvgd.Settings{WeightPower: 0.2, WeightAnneal: 300}},
	{name: "beta0.2-anneal300-bw16", iters: 500, set: gfsvgd.Settings{WeightPower: 0.2, WeightAnneal: 300, Bandwidth: bwScale(16)}},
	{name: "beta0.1", iters: 500, set: gfsvgd.Settings{WeightPower: 0.1}},
	{name: "coord", iters: 500, set: gfsvgd.Settings{Kernel: svgd.Coordinatewise}},
	{name: "coord-200", iters: 200, set: gfsvgd.Settings{Kernel: svgd.Coordinatewise}},
	{name: "coord-beta0.2", iters: 200, set: gfsvgd.Settings{Kernel: svgd.Coordinatewise, WeightPower: 0.2, WeightAnneal: 150}},
	{name: "bw16+sweeps5", iters: 500, set: gfsvgd.Settings{Bandwidth: bwScale(16)}, sweeps: 5},
	{name: "bw16+ssweeps5", iters: 500, set: gfsvgd.Settings{Bandwidth: bwScale(16)}, sweeps: 5, stratified: true},
	{name: "bw16-100+ssweeps5", iters: 100, set: gfsvgd.Settings{Bandwidth: bwScale(16)}, sweeps: 5, stratified: true},
	{name: "bw16-100+ssweeps20", iters: 100, set: gfsvgd.Settings{Bandwidth: bwScale(16)}, sweeps: 20, stratified: true},
	{name: "bw16-100+sweeps20", iters: 100, set: gfsvgd.Settings{Bandwidth: bwScale(16)}, sweeps: 20},
	{name: "transport-100", iters: 100},
	{name: "bw16-100", iters: 100, set: gfsvgd.Settings{Bandwidth: bwScale(16)}},
	{name: "bw4-100", iters: 100, set: gfsvgd.Settings{Bandwidth: bwScale(4)}},
	{name: "transport-100+ssweeps10", iters: 100, sweeps: 10, stratified: true},
	{name: "transport-100+sweeps10", iters: 100, sweeps: 10},
	{name: "bw16-100+ssweeps10", iters: 100, set: gfsvgd.Settings{Bandwidth: bwScale(16)}, sweeps: 10, stratified: true},
	{name: "bw16-200", iters: 200, set: gfsvgd.Settings{Bandwidth: bwScale(16)}},
	{name: "bw32-100", iters: 100, set: gfsvgd.Settings{Bandwidth: bwScale(32)}},
	{name: "bw16-lr0.2-100", iters: 100, set: gfsvgd.Settings{Bandwidth: bwScale(16), LearningRate: 0.2}},
	{name: "bw16-50", iters: 50, set: gfsvgd.Settings{Bandwidth: bwScale(16)}},
	{name: "transport-50", iters: 50},
	{name: "transport-200", iters: 200},
	{name: "beta0.3-100", iters: 100, set: gfsvgd.Settings{WeightPower: 0.3}},
	{name: "transport-50+ssweeps5", iters: 50, sweeps: 5, stratified: true},
	{name: "transport-100+ssweeps30", iters: 100, sweeps: 30, stratified: true},
	{name: "ssweeps5-only", sweeps: 5, stratified: true},
	{name: "ssweeps10-only", sweeps: 10, stratified: true},
	{name: "ssweeps20-only", sweeps: 20, stratified: true},
	{name: "ssweeps30-only", sweeps: 30, stratified: true},
	{name: "ssweeps100-only", sweeps: 100, stratified: true},
	{name: "sweeps10-only", sweeps: 10},
	{name: "sweeps20-only", sweeps: 20},
	{name: "sweeps30-only", sweeps: 30},
}

// VariantNames lists the variants the variants-* experiments know.
func VariantNames() []string {
	var out []string
	for _, v := range variantTable {
		out = append(out, v.name)
	}
	return out
}

// DefaultVariants are the variants run when none are named: the hybrid
// preset (the first round's default) and its ablation.
var DefaultVariants = []string{"transport-100+ssweeps30", "ssweeps30-only"}

// variantName maps the first round's names of the transport variants
// ("default", "default-100+ssweeps30", …: the transport settings were the
// default preset then) to today's, so that the first round's commands
// still run; results carry today's names.
func variantName(n string) string {
	if n == "default" || strings.HasPrefix(n, "default-") {
		return "transport" + strings.TrimPrefix(n, "default")
	}
	return n
}

// presetOf names the GF-SVGD preset whose pipeline a variant's p is
// exactly (the same resolved initial draw and stages), or "" when it is
// none. Presets with chain defaults (default, compact) are not compared: no
// variant runs chains.
func presetOf(p sampler.Pipeline) string {
	resolved := func(q sampler.Pipeline) ([]byte, error) {
		q = q.Resolved()
		q.Name, q.Description = "", ""
		return json.Marshal(q)
	}
	want, err := resolved(p)
	if err != nil {
		return ""
	}
	for _, name := range infer.PresetNames() {
		if _, chains := infer.PresetChains(name); chains {
			continue
		}
		q, err := infer.Preset(name)
		if err != nil {
			continue
		}
		if got, err := resolved(q); err == nil && bytes.Equal(got, want) {
			return name
		}
	}
	return ""
}

// pipeline returns the variant's run.
func (v variant) pipeline() sampler.Pipeline {
	var p sampler.Pipeline
	if v.iters > 0 {
		set := v.set
		set.Surrogate, set.Temperature = "relaxed", v.tau
		p.Stages = append(p.Stages, sampler.Stage{Method: gfsvgd.Name, Iters: v.iters, Settings: &set})
	}
	if v.sweeps > 0 {
		// Single-site sweeps, as the study defines them: stratified sweeps
		// are single-site anyway, and plain ones must not turn into block
		// Gibbs on the RBM (the scan's default there), which is another
		// sampler (hidden units drawn, not summed out) that mixes more
		// slowly from a poor start.
		set := &gibbs.Settings{Stratified: v.stratified}
		if !v.stratified {
			set.Scan = gibbs.Systematic
		}
		p.Stages = append(p.Stages, sampler.Stage{Method: gibbs.Name, Iters: v.sweeps, Settings: set})
	}
	return p
}

func init() {
	for _, m := range []string{"ising", "rbm"} {
		title := "Ising grid (10×10 in full runs; coupling 0.1, fields U(−0.2, 0.2))"
		if m == "rbm" {
			title = "RBM (d = 100, M = 25 in full runs), W ~ N(0, 0.05)"
		}
		register(&Experiment{
			Name:         "variants-" + m,
			Title:        "GF-SVGD variants against exact i.i.d. sampling and Gibbs (500 sweeps in full runs), paired trials: " + title,
			Trials:       20,
			QuickTrials:  2,
			Setting:      "n",
			Settings:     VariantsSettings{},
			UsesVariants: true,
			body:         func(r *runner) (*Result, error) { return runVariants(r, m) },
		})
	}
}

// VariantsSettings are the options of variants-ising and variants-rbm.
type VariantsSettings struct {
	NMax int `opt:"nmax,select" flag:"nmax,positive" help:"only sample sizes n ≤ NMAX (default: all)"`
}

func variantModel(name string, mode Mode, seed uint64) (model.Model, error) {
	if name == "ising" {
		side := 10
		if mode == Tiny {
			side = 4
		}
		return ising.RandomGrid(side, 0.1, 0.2, seed)
	}
	d, hidden := 100, 25
	switch mode {
	case Quick:
		hidden = 12
	case Tiny:
		d, hidden = 12, 4
	}
	return rbmModel(d, hidden, seed)
}

func runVariants(r *runner, modelName string) (*Result, error) {
	var vs []variant
	names := r.cfg.Variants
	if len(names) == 0 {
		names = DefaultVariants
	}
	seen := map[string]bool{}
	for _, given := range names {
		given = strings.TrimSpace(given)
		n := variantName(given)
		if seen[n] {
			continue // named twice, or by its old and its new name
		}
		seen[n] = true
		found := false
		for _, v := range variantTable {
			if v.name == n {
				vs, found = append(vs, v), true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown variant %q%s; want some of %s", given, suggest.Hint(given, VariantNames()), strings.Join(VariantNames(), ", "))
		}
	}
	// Every variant is a method this experiment knows, so that a journal
	// holding other variants than this run's resumes (their trials are
	// kept, not used), as the suite does with its methods.
	for _, v := range variantTable {
		r.methods[v.name] = true
	}
	for _, k := range r.j.Order() {
		if now := variantName(k.Method); now != k.Method {
			return nil, fmt.Errorf("%s holds trials of %q, the first round's name of %q; use another --out-dir, or --restart to start over", r.j.Path(), k.Method, now)
		}
	}
	m, err := variantModel(modelName, r.cfg.Mode, r.cfg.Seed)
	if err != nil {
		return nil, err
	}
	truth, err := exact.ForContext(r.ctx, m)
	if err != nil {
		return nil, err
	}
	refS := make([]int, referenceSize(r.cfg.Mode)*m.Dim())
	if err := truth.SampleContext(r.ctx, refS, rng.NewKey(r.cfg.Seed).ForIndex(rng.Sample, 1<<20).Rand()); err != nil {
		return nil, err
	}
	ref := metrics.NewReference(samplesOf(refS, m.Dim()))
	ns := []int{20, 50, 100, 200}
	gibbsSweeps := 500
	switch r.cfg.Mode {
	case Quick:
		ns = []int{20, 100}
	case Tiny:
		ns, gibbsSweeps = []int{10, 20}, 20
		for k := range vs {
			vs[k].iters = min(vs[k].iters, 20)
		}
	}
	ns, err = limitN(ns, float64(settingsOf[VariantsSettings](r).NMax))
	if err != nil {
		return nil, err
	}
	type method struct {
		name string
		p    sampler.Pipeline
	}
	gibbsP, _ := sampler.Single(gibbs.Name, nil, gibbsSweeps)
	exactP, _ := sampler.Single(iid.Name, nil, 1)
	methods := []method{{"exact", exactP}, {fmt.Sprintf("gibbs%d", gibbsSweeps), gibbsP}}
	for _, v := range vs {
		methods = append(methods, method{v.name, v.pipeline()})
	}
	for _, mt := range methods {
		// Trials made before the experiment recorded each method's
		// settings cannot be checked against them (plain sweeps on the RBM
		// were block Gibbs then): refuse them rather than relabel them.
		if r.j.HasMethod(mt.name) && r.j.MethodSettings(mt.name) == nil {
			return nil, fmt.Errorf("%s holds trials of %s made before dstein recorded each method's settings, so they cannot be checked; use another --out-dir, or --restart to start over", r.j.Path(), mt.name)
		}
		// The record is the pipeline alone: the preset's name is a label
		// (the CSV's preset column, the figure), and a later change of the
		// preset must not invalidate trials of an unchanged pipeline.
		if err := r.describe(mt.name, methodRecord("", mt.p)); err != nil {
			return nil, err
		}
		r.presets[mt.name] = presetOf(mt.p)
	}
	means := truth.Result().Means
	for tr := range r.trials {
		if !r.inShard(tr) {
			continue
		}
		key := r.trialKey(tr)
		for _, n := range ns {
			for _, mt := range methods {
				_, err := r.trial(mt.name, float64(n), tr, func() (map[string]float64, error) {
					// Frequencies, as the published journal was made.
					out, err := infer.Run(r.ctx, m, infer.Spec{Pipeline: mt.p, N: n, Key: key, Truth: truth, Estimates: infer.Frequencies})
					if err != nil {
						return nil, err
					}
					if err := r.ctx.Err(); err != nil {
						return nil, err
					}
					return map[string]float64{"mse": metrics.MSE(out.Means, means), "mmd2": ref.MMD2(out.Samples), "seconds": out.Seconds}, nil
				})
				if err != nil {
					return nil, err
				}
			}
		}
		r.trialDone(tr)
	}
	rows := r.summarize()
	res := &Result{Rows: rows, Show: []string{"mse", "mmd2", "seconds"}}
	for _, metric := range []string{"mse", "mmd2"} {
		line := metric + " relative to exact i.i.d. sampling, Σ over paired trials (± delta-method SE):"
		for _, n := range ns {
			line += fmt.Sprintf(" n = %d:", n)
			for _, mt := range methods[1:] {
				rt, se := r.pairedRatio(mt.name, "exact", float64(n), metric)
				line += fmt.Sprintf(" %s %.3g ± %.2g;", mt.name, rt, se)
			}
		}
		res.Notes = append(res.Notes, line)
	}
	res.Notes = append(res.Notes, "Variants: iterations of GF-SVGD (relaxed surrogate, transport settings unless named: bwS = bandwidth ×S, tauT = τ, betaB = tempered weights, coord = coordinatewise kernel), then K single-site Gibbs sweeps of the particles in a systematic scan (+sweepsK; +ssweepsK stratified); …-only: the sweeps alone from Γ of the N(0, 1) draw. Every method of a trial uses the trial's key.")
	what := variantModelNote(m)
	baseline := "Gibbs sweeps"
	if _, ok := m.(gibbs.BlockModel); ok {
		baseline = "block Gibbs sweeps (hidden and visible units in turn, the default scan on this model)"
	}
	res.Notes = append(res.Notes, fmt.Sprintf("Model: %s; MMD² against %d exact draws; %s: %d %s.", what, referenceSize(r.cfg.Mode), methods[1].name, gibbsSweeps, baseline))
	if r.cfg.Mode == Tiny {
		res.Notes = append(res.Notes, "This tiny run caps every variant's GF-SVGD at 20 iterations, whatever its name says.")
	}
	var names2 []string
	labels := map[string]string{"exact": "exact i.i.d.", methods[1].name: fmt.Sprintf("Gibbs, %d sweeps", gibbsSweeps)}
	for _, mt := range methods {
		names2 = append(names2, mt.name)
		if pr := r.presets[mt.name]; pr != "" && pr != mt.name {
			labels[mt.name] = fmt.Sprintf("%s (the %s preset)", mt.name, pr)
		}
	}
	fig := report.Figure{SharedLegend: true, Title: figureTitle(r, rows, "GF-SVGD variants: "+what, rangeNote("n", intsF(ns))), Panels: []report.Panel{
		{Title: "MSE of the means E[z] (mean ± SE over trials)", XLabel: "sample size n", YLabel: "MSE", LogX: true, LogY: true, XTicksAtData: true, Dodge: true, Series: series(rows, "mse", names2, labels)},
		{Title: "MMD² to p (mean ± SE over trials)", XLabel: "sample size n", YLabel: "MMD²", LogX: true, LogY: true, XTicksAtData: true, Dodge: true, Series: series(rows, "mmd2", names2, labels)},
	}}
	return res, r.save(fig)
}

// pairedRatio returns Σ_t a_t / Σ_t b_t of a metric over the trials that
// both methods have at x, with its delta-method standard error.
func (r *runner) pairedRatio(a, b string, x float64, metric string) (float64, float64) {
	var as, bs []float64
	for t := range r.trials {
		va, oka := r.j.Done(journal.Key{Method: a, X: x, Trial: t})
		vb, okb := r.j.Done(journal.Key{Method: b, X: x, Trial: t})
		if oka && okb {
			as, bs = append(as, va[metric]), append(bs, vb[metric])
		}
	}
	if len(as) == 0 {
		return math.NaN(), math.NaN()
	}
	var sa, sb float64
	for t := range as {
		sa += as[t]
		sb += bs[t]
	}
	rt := sa / sb
	T := float64(len(as))
	var v float64
	for t := range as {
		e := as[t] - rt*bs[t]
		v += e * e
	}
	if len(as) > 1 {
		v /= T - 1
	}
	return rt, math.Sqrt(v/T) / (sb / T)
}

// variantModelNote describes the model of a variants experiment from the
// model itself (the mode changes its size).
func variantModelNote(m model.Model) string {
	if h, ok := m.(interface{ Hidden() int }); ok {
		return fmt.Sprintf("Bernoulli RBM d = %d, M = %d, W ~ N(0, 0.05), b, c ~ N(0, 1)", m.Dim(), h.Hidden())
	}
	side := int(math.Round(math.Sqrt(float64(m.Dim()))))
	return fmt.Sprintf("%d×%d open Ising grid, coupling 0.1, fields drawn once from U(−0.2, 0.2)", side, side)
}
