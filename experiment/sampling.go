package experiment

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/metrics"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/dhmc"
	"github.com/dstein/dstein/sampler/dmala"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/sampler/gwg"
	"github.com/dstein/dstein/sampler/iid"
)

// Why one file of about 530 lines: the sampling experiments (ising-n, ising-sigma, rbm-n,
// rbm-d, ising-n-field) share one trial body and its metrics; a file each would repeat it.

// sampleMethod is one method of the sampling experiments: a pipeline
// built for the experiment's iteration count.
type sampleMethod struct {
	name, label string
	// preset names the preset the pipeline comes from ("" for a method
	// alone), for the summary's preset column.
	preset string
	build  func(iters int) (sampler.Pipeline, error)
}

// paperInit is the initial draw of the paper's protocol.
var paperInit = sampler.Init{Mean: -2, Std: 1}

// presetMethod is a GF-SVGD preset with the given surrogate; its GF-SVGD
// stage runs the experiment's iterations, capped at cap when cap > 0.
func presetMethod(name, label, preset, surrogate string, cap int) sampleMethod {
	return sampleMethod{name: name, label: label, preset: preset, build: func(iters int) (sampler.Pipeline, error) {
		p, err := infer.Preset(preset)
		if err != nil {
			return p, err
		}
		p.Stages = append([]sampler.Stage(nil), p.Stages...)
		for k, st := range p.Stages {
			if set, ok := st.Settings.(*gfsvgd.Settings); ok {
				c := *set
				c.Surrogate = surrogate
				p.Stages[k].Settings = &c
				p.Stages[k].Iters = iters
				if cap > 0 {
					p.Stages[k].Iters = min(iters, cap)
				}
			}
		}
		return p, nil
	}}
}

// chainMethod is a method alone from the paper's initial draw, for the
// experiment's iterations capped at cap when cap > 0.
func chainMethod(name, label, method string, set sampler.Settings, cap int) sampleMethod {
	return sampleMethod{name: name, label: label, build: func(iters int) (sampler.Pipeline, error) {
		if cap > 0 {
			iters = min(iters, cap)
		}
		p, err := sampler.Single(method, set, iters)
		p.Init = paperInit
		return p, err
	}}
}

// samplingMethods are the methods of the Ising and RBM experiments. The
// paper protocol starts every method but dstein's own presets from
// N(−2, 1) (the chain samplers from Γ of that draw); the transport, hybrid
// and default presets start from their own initial draws.
//
// Every method's name says what it runs, never "the default", so that a
// published result cannot change meaning when the default does: the
// preset it comes from is in the summary's preset column, and its full
// settings are in the journal (runner.describe). "gfsvgd-transport" is
// GF-SVGD with the transport preset, "gfsvgd-hybrid" the hybrid preset (100
// iterations of that transport, then 30 stratified Gibbs sweeps),
// "strat-sweeps" the same 30 sweeps from Γ of the initial draw with no
// transport (the ablation that says what the transport adds), and
// "pt-4chains" the tempering preset, rounds one and two's default
// (parallel tempering, 4 chains, draws after warm-up, TemperingChains). withGradient adds the hybrid, its
// ablation and the gradient-guided chain samplers Gibbs-with-Gradients and
// DMALA.
//
// gwgSweeps, when > 0, caps Gibbs-with-Gradients at that many sweeps (the
// method is then named gwg-N): on the RBM one GWG sweep costs d proposals,
// each with a full gradient of the relaxation, about 100 times a block-Gibbs
// sweep, so 500 sweeps would dominate the whole experiment.
func samplingMethods(paperSurrogate string, withGradient bool, gwgSweeps int) []sampleMethod {
	ms := []sampleMethod{
		presetMethod("gfsvgd-paper", "GF-SVGD (paper preset)", "paper", paperSurrogate, 0),
		presetMethod("gfsvgd-transport", "GF-SVGD (transport preset)", "transport", "relaxed", 0),
	}
	if withGradient {
		ms = append(ms,
			presetMethod("gfsvgd-hybrid", "hybrid preset: GF-SVGD + 30 stratified sweeps", "hybrid", "relaxed", infer.HybridIters),
			sampleMethod{name: "strat-sweeps", label: "30 stratified sweeps alone", build: func(int) (sampler.Pipeline, error) {
				return sampler.Pipeline{Stages: []sampler.Stage{{Method: gibbs.Name, Iters: infer.HybridSweeps, Settings: &gibbs.Settings{Stratified: true}}}}, nil
			}})
	}
	ms = append(ms, sampleMethod{name: "pt-4chains", label: "parallel tempering, 4 chains (the tempering preset, rounds one and two's default)", preset: "tempering",
		build: func(int) (sampler.Pipeline, error) { return infer.Preset("tempering") }})
	ms = append(ms, chainMethod("gibbs", "Gibbs", gibbs.Name, nil, 0))
	if withGradient {
		withGrad := chainMethod("gwg", "Gibbs-with-Gradients", gwg.Name, nil, 0)
		if gwgSweeps > 0 {
			withGrad = chainMethod(fmt.Sprintf("gwg-%d", gwgSweeps), fmt.Sprintf("Gibbs-with-Gradients (%d sweeps)", gwgSweeps), gwg.Name, nil, gwgSweeps)
		}
		ms = append(ms, withGrad, chainMethod("dmala", "DMALA", dmala.Name, nil, 0))
	}
	return append(ms,
		chainMethod("dhmc", "DHMC", dhmc.Name, nil, 0),
		chainMethod("exact", "exact i.i.d. (MC)", iid.Name, nil, 0))
}

// methodRecord is what the journal records of a method's settings: the
// preset it comes from, its pipeline with every default filled in, and
// the chains and draws of a preset that runs as chains.
func methodRecord(preset string, pl sampler.Pipeline) any {
	rec := struct {
		Preset   string               `json:"preset,omitempty"`
		Pipeline sampler.Pipeline     `json:"pipeline"`
		Chains   *infer.ChainDefaults `json:"chains,omitempty"`
	}{Preset: preset, Pipeline: pl.Resolved()}
	if cd, ok := infer.PresetChains(preset); ok {
		rec.Chains = &cd
	}
	return rec
}

// limitN keeps the sample sizes n ≤ nmax (all when nmax ≤ 0) of the
// sizes ns that the run's mode uses, and refuses an nmax that keeps none:
// a run of no size wrote an empty table and plot and exited 0.
func limitN(ns []int, nmax float64) ([]int, error) {
	if nmax <= 0 {
		return ns, nil
	}
	var out []int
	for _, n := range ns {
		if float64(n) <= nmax {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		sizes := make([]string, len(ns))
		for k, n := range ns {
			sizes[k] = strconv.Itoa(n)
		}
		return nil, fmt.Errorf("--nmax %g keeps none of the sample sizes of this run (%s); give at least %d", nmax, strings.Join(sizes, ", "), ns[0])
	}
	return out, nil
}

// point is one setting of a sampling experiment.
type point struct {
	x     float64
	m     model.Model
	n     int
	truth exact.Truth
	ref   *metrics.Reference // nil when MMD is not measured
	// iidVar is Σ_i Var_p(z_i) / d from the exact marginals: n times the
	// expected MSE of the means of n independent exact draws.
	iidVar float64
}

// newPoint is the setting x of model m with n samples and its exact answers.
func newPoint(x float64, m model.Model, n int, truth exact.Truth) point {
	res := truth.Result()
	var v float64
	for i, p := range res.Marginals {
		var e2 float64
		for k, val := range m.States(i) {
			e2 += p[k] * val * val
		}
		v += max(e2-res.Means[i]*res.Means[i], 0)
	}
	return point{x: x, m: m, n: n, truth: truth, iidVar: v / float64(m.Dim())}
}

// runSampling runs every method at every point for every trial and returns
// the summary rows.
func runSampling(r *runner, pts []point, methods []sampleMethod, iters int) ([]Row, error) {
	for _, mt := range methods {
		r.presets[mt.name] = mt.preset
		pl, err := mt.build(iters)
		if err != nil {
			return nil, err
		}
		if err := r.describe(mt.name, methodRecord(mt.preset, pl)); err != nil {
			return nil, err
		}
	}
	for tr := range r.trials {
		if !r.inShard(tr) {
			continue
		}
		key := r.trialKey(tr)
		for _, p := range pts {
			for _, mt := range methods {
				_, err := r.trial(mt.name, p.x, tr, func() (map[string]float64, error) {
					return sampleOnce(r, p, mt, iters, key)
				})
				if err != nil {
					return nil, err
				}
			}
		}
		r.trialDone(tr)
	}
	return r.summarize(), nil
}

func sampleOnce(r *runner, p point, mt sampleMethod, iters int, key rng.Key) (map[string]float64, error) {
	pl, err := mt.build(iters)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	spec := infer.SpecFor(mt.preset, pl, p.n, key)
	spec.Truth = p.truth
	// The published journals were computed from the draws' frequencies;
	// a change of estimator will be a recorded setting of a rerun.
	spec.Estimates = infer.Frequencies
	spec.Device = r.device()
	out, err := infer.Run(r.ctx, p.m, spec)
	if err != nil {
		return nil, err
	}
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	mse := metrics.MSE(out.Means, p.truth.Result().Means)
	secs := time.Since(start).Seconds()
	res := map[string]float64{
		"mse":         mse,
		"seconds":     secs,
		"evaluations": float64(out.Evaluations),
	}
	if spec.Device != sampler.CPU {
		// How many of the method's stages ran on the device (none where
		// its path there does not take the model).
		res["device_stages"] = float64(len(out.OnDevice))
	}
	if mse > effNFloor*p.iidVar {
		res["eff_n"] = p.iidVar / mse
		if secs > 0 {
			res["ess_per_s"] = p.iidVar / mse / secs
		}
	}
	if p.ref != nil {
		res["mmd2"] = p.ref.MMD2(out.Samples)
		if out.Samples.N > 1 {
			res["mmd2_unbiased"] = p.ref.MMD2Unbiased(out.Samples)
		}
	}
	return res, nil
}

// effNFloor bounds the effective sample size that is recorded: an MSE
// below effNFloor times the i.i.d. variance (an effective n above 10¹²)
// means that the means are exact up to rounding (stratified sweeps of
// balanced ±1 variables give exactly zero means), and its ratio is
// rounding noise (10³⁰ was printed once), so eff_n and ess_per_s are left
// out of that trial and the table says so.
const effNFloor = 1e-12

// referenceSize is the size of the exact reference sample for MMD².
func referenceSize(mode Mode) int {
	switch mode {
	case Tiny:
		return 500
	case Quick:
		return 5000
	}
	return 20000
}

func init() {
	register(&Experiment{
		Name:        "ising-n",
		Title:       "Ising grid with coupling σ_p = 0.1 (10×10 in full runs): MSE of E[z] against the sample size n",
		Trials:      200,
		QuickTrials: 3,
		Setting:     "n",
		Settings:    IsingNSettings{},
		body:        runIsingN,
	})
	register(&Experiment{
		Name:        "ising-sigma",
		Title:       "Ising grid (10×10 in full runs), n = 20: MSE of E[z] against the coupling σ_p",
		Trials:      200,
		QuickTrials: 3,
		Setting:     "sigma_p",
		Settings:    IsingSigmaSettings{},
		body:        runIsingSigma,
	})
	register(&Experiment{
		Name:        "rbm-n",
		Title:       "Bernoulli RBM (d = 100, M = 25 in full runs): MMD² and MSE against the sample size n",
		Trials:      50,
		QuickTrials: 2,
		Setting:     "n",
		Settings:    RBMNSettings{},
		body:        runRBMN,
	})
	register(&Experiment{
		Name:        "rbm-d",
		Title:       "Bernoulli RBM (M = 25, n = 100 in full runs): MMD² and MSE against the dimension d",
		Trials:      50,
		QuickTrials: 2,
		Setting:     "d",
		Settings:    RBMDSettings{},
		body:        runRBMD,
	})
}

// IsingNSettings are the options of ising-n.
type IsingNSettings struct {
	// Field is the strength A of the fields, drawn once from U(−A, A)
	// with the seed (0: none, the paper's grid).
	Field float64 `opt:"field" flag:"field,nonnegative" help:"fields drawn once from U(−A, A) with the seed (default 0: no fields, the paper's grid)"`
	// NMax keeps the sample sizes n ≤ NMax (0: all).
	NMax   int          `opt:"nmax,select" flag:"nmax,positive" help:"only sample sizes n ≤ NMAX (default: all)"`
	Device DeviceOption `opt:"device" flag:"device" help:"cuda runs each method on an NVIDIA GPU where it has a path there that takes the model (gfsvgd on RBMs, gibbs, pt by the site kernel on Ising and Potts models or the block kernel on RBMs), the others on the CPU"`
}

// IsingSigmaSettings are the options of ising-sigma.
type IsingSigmaSettings struct {
	Field  float64      `opt:"field" flag:"field,nonnegative" help:"fields drawn once from U(−A, A) with the seed (default 0: no fields, the paper's grid)"`
	Device DeviceOption `opt:"device" flag:"device" help:"cuda runs each method on an NVIDIA GPU where it has a path there that takes the model (gfsvgd on RBMs, gibbs, pt by the site kernel on Ising and Potts models or the block kernel on RBMs), the others on the CPU"`
}

// RBMNSettings are the options of rbm-n.
type RBMNSettings struct {
	NMax   int          `opt:"nmax,select" flag:"nmax,positive" help:"only sample sizes n ≤ NMAX (default: all)"`
	Device DeviceOption `opt:"device" flag:"device" help:"cuda runs each method on an NVIDIA GPU where it has a path there that takes the model (gfsvgd on RBMs, gibbs, pt by the site kernel on Ising and Potts models or the block kernel on RBMs), the others on the CPU"`
}

// RBMDSettings are the options of rbm-d.
type RBMDSettings struct {
	Device DeviceOption `opt:"device" flag:"device" help:"cuda runs each method on an NVIDIA GPU where it has a path there that takes the model (gfsvgd on RBMs, gibbs, pt by the site kernel on Ising and Potts models or the block kernel on RBMs), the others on the CPU"`
}

func isingSize(mode Mode) (side, iters int) {
	if mode == Tiny {
		return 4, 20
	}
	return 10, 500
}

func runIsingN(r *runner) (*Result, error) {
	side, iters := isingSize(r.cfg.Mode)
	set := settingsOf[IsingNSettings](r)
	m, err := ising.RandomGrid(side, 0.1, set.Field, r.cfg.Seed)
	if err != nil {
		return nil, err
	}
	truth, err := exact.ForContext(r.ctx, m)
	if err != nil {
		return nil, err
	}
	ns := []int{10, 20, 50, 100, 200, 500}
	switch r.cfg.Mode {
	case Quick:
		ns = []int{10, 50, 200}
	case Tiny:
		ns = []int{10, 20}
	}
	if ns, err = limitN(ns, float64(set.NMax)); err != nil {
		return nil, err
	}
	var pts []point
	for _, n := range ns {
		pts = append(pts, newPoint(float64(n), m, n, truth))
	}
	gwgCap := 0
	if r.cfg.Mode == Quick {
		gwgCap = quickGWGSweeps
	}
	methods := samplingMethods("base", true, gwgCap)
	rows, err := runSampling(r, pts, methods, iters)
	if err != nil {
		return nil, err
	}
	names, labels := methodLabels(methods)
	res := &Result{Rows: rows, Show: []string{"mse", "eff_n", "ess_per_s"}}
	res.Notes = append(res.Notes, slopes(rows, "mse", methods),
		fmt.Sprintf("%d×%d open grid, coupling 0.1, %s; %d iterations or sweeps; %s; DHMC: %s; init N(−2, 1) except dstein's presets (gfsvgd-transport, gfsvgd-hybrid and pt-4chains start from their own).",
			side, side, fieldNote(set.Field), iters, gradientNote(gwgSweepsOf(gwgCap, iters), iters), dhmcNote()),
		effNote, evalNote)
	if note := effNFloorNote(rows); note != "" {
		res.Notes = append(res.Notes, note)
	}
	fig := report.Figure{SharedLegend: true, Title: figureTitle(r, rows,
		fmt.Sprintf("%d×%d open Ising grid, coupling σ_p = 0.1, %s", side, side, fieldNote(set.Field)),
		rangeNote("n", intsF(ns)), fmt.Sprintf("%d iterations or sweeps per run", iters)),
		Cols: 3, Panels: append(metricPanels(rows, names, labels, "mse", "MSE of the means E[z]", "sample size n", "n"), costPanels(rows, names, labels, "sample size n")...)}
	return res, r.save(fig)
}

func runIsingSigma(r *runner) (*Result, error) {
	side, iters := isingSize(r.cfg.Mode)
	field := settingsOf[IsingSigmaSettings](r).Field
	sigmas := []float64{-0.15, -0.1, -0.05, 0, 0.05, 0.1, 0.15}
	if r.cfg.Mode == Tiny {
		sigmas = []float64{-0.1, 0.1}
	}
	var pts []point
	for _, s := range sigmas {
		m, err := ising.RandomGrid(side, s, field, r.cfg.Seed)
		if err != nil {
			return nil, err
		}
		truth, err := exact.ForContext(r.ctx, m)
		if err != nil {
			return nil, err
		}
		pts = append(pts, newPoint(s, m, 20, truth))
	}
	// GWG and DMALA are left out here: GWG's sweeps would cost about an
	// hour of a full run, for a figure about the coupling.
	methods := samplingMethods("base", false, 0)
	rows, err := runSampling(r, pts, methods, iters)
	if err != nil {
		return nil, err
	}
	names, labels := methodLabels(methods)
	res := &Result{Rows: rows, Show: []string{"mse"}}
	res.Notes = append(res.Notes, fmt.Sprintf("%d×%d open grid, n = 20, %s; %d iterations or sweeps; DHMC: %s; init N(−2, 1) except dstein's presets (gfsvgd-transport, gfsvgd-hybrid and pt-4chains start from their own).", side, side, fieldNote(field), iters, dhmcNote()))
	fig := report.Figure{SharedLegend: true, Cols: 1, Width: 7 * 72, Height: 4.5 * 72, Title: figureTitle(r, rows,
		fmt.Sprintf("%d×%d open Ising grid, %s", side, side, fieldNote(field)), "n = 20",
		rangeNote("coupling σ_p", sigmas), fmt.Sprintf("%d iterations or sweeps per run", iters)),
		Panels: []report.Panel{
			{Title: "MSE of the means E[z] at n = 20 (mean ± SE over trials)", XLabel: "coupling σ_p", YLabel: "MSE (log scale)", LogY: true, Dodge: true, XTicks: sigmas, Series: series(rows, "mse", names, labels)},
		}}
	return res, r.save(fig)
}

// rbmModel is the RBM of the paper's experiments: W entries with variance
// 0.05, b and c from N(0, 1), drawn from the experiment's seed.
func rbmModel(d, m int, seed uint64) (*rbm.RBM, error) {
	return rbm.Random(d, m, math.Sqrt(0.05), 1, seed)
}

func rbmPoint(r *runner, x float64, d, hidden, n int) (point, error) {
	m, err := rbmModel(d, hidden, r.cfg.Seed)
	if err != nil {
		return point{}, err
	}
	r.logf("%s: exact answers for the RBM with d = %d, M = %d …", r.name, d, hidden)
	truth, err := exact.ForContext(r.ctx, m)
	if err != nil {
		return point{}, err
	}
	refS := make([]int, referenceSize(r.cfg.Mode)*d)
	if err := truth.SampleContext(r.ctx, refS, rng.NewKey(r.cfg.Seed).ForIndex(rng.Sample, 1<<20).Rand()); err != nil { // the reference sample's stream
		return point{}, err
	}
	ref := metrics.NewReference(samplesOf(refS, d))
	p := newPoint(x, m, n, truth)
	p.ref = ref
	return p, nil
}

// quickGWGSweeps caps Gibbs-with-Gradients in --quick runs, which must
// finish in under a minute.
const quickGWGSweeps = 50

// gwgSweepsOf is the number of GWG sweeps a run makes under the cap.
func gwgSweepsOf(cap, iters int) int {
	if cap > 0 {
		return min(cap, iters)
	}
	return iters
}

// rbmGWGSweeps is the number of Gibbs-with-Gradients sweeps in the RBM
// experiments (100 proposals per chain and sweep at d = 100).
const rbmGWGSweeps = 100

func rbmSize(mode Mode) (hidden, iters int) {
	switch mode {
	case Quick:
		return 12, 500
	case Tiny:
		return 4, 20
	}
	return 25, 500
}

func runRBMN(r *runner) (*Result, error) {
	hidden, iters := rbmSize(r.cfg.Mode)
	d := 100
	ns := []int{20, 50, 100, 200, 500}
	switch r.cfg.Mode {
	case Quick:
		ns = []int{20, 100}
	case Tiny:
		d, ns = 12, []int{10, 20}
	}
	ns, err := limitN(ns, float64(settingsOf[RBMNSettings](r).NMax))
	if err != nil {
		return nil, err
	}
	var pts []point
	for _, n := range ns {
		if len(pts) == 0 {
			p, err := rbmPoint(r, float64(n), d, hidden, n)
			if err != nil {
				return nil, err
			}
			pts = append(pts, p)
			continue
		}
		p := pts[0]
		p.x, p.n = float64(n), n
		pts = append(pts, p)
	}
	return rbmResult(r, pts, iters, fmt.Sprintf("d = %d, M = %d", d, hidden), "sample size n", true)
}

func runRBMD(r *runner) (*Result, error) {
	hidden, iters := rbmSize(r.cfg.Mode)
	ds := []int{25, 50, 100, 200}
	n := 100
	switch r.cfg.Mode {
	case Quick:
		ds = []int{25, 100}
	case Tiny:
		ds, n = []int{8, 12}, 10
	}
	var pts []point
	for _, d := range ds {
		p, err := rbmPoint(r, float64(d), d, hidden, n)
		if err != nil {
			return nil, err
		}
		pts = append(pts, p)
	}
	return rbmResult(r, pts, iters, fmt.Sprintf("n = %d, M = %d", n, hidden), "dimension d", false)
}

func rbmResult(r *runner, pts []point, iters int, what, xlabel string, fitSlope bool) (*Result, error) {
	gwgCap := rbmGWGSweeps
	if r.cfg.Mode == Quick {
		gwgCap = quickGWGSweeps
	}
	methods := samplingMethods("relaxed", true, gwgCap)
	rows, err := runSampling(r, pts, methods, iters)
	if err != nil {
		return nil, err
	}
	names, labels := methodLabels(methods)
	res := &Result{Rows: rows, Show: []string{"mmd2", "mse", "ess_per_s"}}
	res.Notes = append(res.Notes, fmt.Sprintf("RBM %s, W ~ N(0, 0.05), b, c ~ N(0, 1) from the seed; MMD² (V-statistic, kernel exp(−Hamming/d)) against %d exact draws (the CSV also has the unbiased form, mmd2_unbiased); %d iterations or sweeps; Gibbs is block Gibbs; %s; DHMC: %s.", what, referenceSize(r.cfg.Mode), iters, gradientNote(gwgSweepsOf(gwgCap, iters), iters), dhmcNote()))
	if fitSlope {
		res.Notes = append(res.Notes, slopes(rows, "mmd2", methods))
	}
	res.Notes = append(res.Notes, effNote, evalNote)
	if note := effNFloorNote(rows); note != "" {
		res.Notes = append(res.Notes, note)
	}
	xs := make([]float64, len(pts))
	for k, p := range pts {
		xs[k] = p.x
	}
	short := lastWord(xlabel)
	fig := report.Figure{SharedLegend: true, Title: figureTitle(r, rows,
		"Bernoulli RBM "+what+", W ~ N(0, 0.05), b, c ~ N(0, 1)", rangeNote(short, xs),
		fmt.Sprintf("%d iterations or sweeps per run; MMD² against %d exact draws", iters, referenceSize(r.cfg.Mode))),
		Cols: 3, Panels: append(append(metricPanels(rows, names, labels, "mmd2", "MMD² to p", xlabel, short),
			metricPanels(rows, names, labels, "mse", "MSE of the means E[z]", xlabel, short)...), costPanels(rows, names, labels, xlabel)...)}
	return res, r.save(fig)
}

func samplesOf(z []int, d int) *sampler.Samples {
	return &sampler.Samples{N: len(z) / d, D: d, Z: z}
}
