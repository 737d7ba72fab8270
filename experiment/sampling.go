package experiment

import (
	"fmt"
	"math"
	"path/filepath"
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
	"github.com/dstein/dstein/sampler/gfsvgd"
)

// sampleMethod is one method of the sampling experiments.
type sampleMethod struct {
	name, label, preset string
	method              string // infer method
	surrogate           string // for gfsvgd
}

// samplingMethods are the methods of the Ising and RBM experiments. The
// paper protocol starts every method but dstein's default GF-SVGD from
// N(−2, 1) (Gibbs from Γ of that draw); the default GF-SVGD starts from its
// preset's N(0, 1).
func samplingMethods(paperSurrogate string) []sampleMethod {
	return []sampleMethod{
		{"gfsvgd-paper", "GF-SVGD (paper preset)", "paper", "gfsvgd", paperSurrogate},
		{"gfsvgd", "GF-SVGD (default preset, relaxed)", "default", "gfsvgd", "relaxed"},
		{"gibbs", "Gibbs", "", "gibbs", ""},
		{"dhmc", "DHMC", "", "dhmc", ""},
		{"exact", "exact i.i.d. (MC)", "", "exact", ""},
	}
}

// point is one setting of a sampling experiment.
type point struct {
	x     float64
	m     model.Model
	n     int
	truth exact.Truth
	ref   *metrics.Reference // nil when MMD is not measured
}

// runSampling runs every method at every point for every trial and returns
// the summary rows.
func runSampling(r *runner, pts []point, methods []sampleMethod, iters int) ([]Row, error) {
	for _, mt := range methods {
		r.presets[mt.name] = mt.preset
	}
	for tr := range r.trials {
		seed := trialSeed(r.cfg.Seed, tr)
		for _, p := range pts {
			for _, mt := range methods {
				_, err := r.trial(mt.name, p.x, tr, func() (map[string]float64, error) {
					return sampleOnce(r, p, mt, iters, seed)
				})
				if err != nil {
					return nil, err
				}
			}
		}
		r.logf("%s: trial %d/%d done", r.name, tr+1, r.trials)
	}
	return r.summarize(), nil
}

func sampleOnce(r *runner, p point, mt sampleMethod, iters int, seed uint64) (map[string]float64, error) {
	o := infer.Options{Method: mt.method, N: p.n, Iters: iters, Seed: seed, Surrogate: mt.surrogate, Truth: p.truth,
		InitMean: -2, InitStd: 1}
	if mt.method == "gfsvgd" {
		set, err := gfsvgd.Preset(mt.preset)
		if err != nil {
			return nil, err
		}
		o.GFSVGD = set
		o.InitMean, o.InitStd = set.InitMean, set.InitStd
		if o.InitStd == 0 {
			o.InitStd = 1
		}
	}
	start := time.Now()
	out, err := infer.Sample(r.ctx, p.m, o)
	if err != nil {
		return nil, err
	}
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	res := map[string]float64{
		"mse":         metrics.MSE(out.Means, p.truth.Result().Means),
		"seconds":     time.Since(start).Seconds(),
		"evaluations": float64(out.Evaluations),
	}
	if p.ref != nil {
		res["mmd2"] = p.ref.MMD2(out.Samples)
		if out.Samples.N > 1 {
			res["mmd2_unbiased"] = p.ref.MMD2Unbiased(out.Samples)
		}
	}
	return res, nil
}

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

// slopes fits log10(metric) against log10(x) by least squares for each
// method and describes the slopes.
func slopes(rows []Row, metric string, methods []sampleMethod) string {
	s := fmt.Sprintf("fitted slope of log10 %s against log10 n (the paper claims −1 for GF-SVGD):", metric)
	for _, mt := range methods {
		var xs, ys []float64
		for _, r := range rows {
			if r.Method == mt.name && r.Metric == metric && r.Mean > 0 {
				xs = append(xs, math.Log10(r.X))
				ys = append(ys, math.Log10(r.Mean))
			}
		}
		if len(xs) < 2 {
			continue
		}
		var mx, my float64
		for k := range xs {
			mx += xs[k]
			my += ys[k]
		}
		mx /= float64(len(xs))
		my /= float64(len(xs))
		var sxy, sxx float64
		for k := range xs {
			sxy += (xs[k] - mx) * (ys[k] - my)
			sxx += (xs[k] - mx) * (xs[k] - mx)
		}
		s += fmt.Sprintf(" %s %.2f;", mt.name, sxy/sxx)
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
// rng.New(seed, rng.StreamModel).
// fieldNote describes the fields option.
func fieldNote(a float64) string {
	if a == 0 {
		return "no fields"
	}
	return fmt.Sprintf("fields drawn once from U(−%g, %g)", a, a)
}

func isingGrid10(side int, sigma, field float64, seed uint64) (*ising.Ising, error) {
	var fields []float64
	if field > 0 {
		g := rng.New(seed, rng.StreamModel)
		fields = make([]float64, side*side)
		for i := range fields {
			fields[i] = -field + 2*field*g.Float64()
		}
	}
	return ising.Grid(side, side, false, sigma, fields)
}

func init() {
	register(&Experiment{
		Name:        "ising-n",
		Title:       "10×10 Ising grid, σ_p = 0.1: MSE of E[z] against the sample size n",
		Trials:      200,
		QuickTrials: 3,
		Setting:     "n",
		Options:     map[string]float64{"field": 0},
		body:        runIsingN,
	})
	register(&Experiment{
		Name:        "ising-sigma",
		Title:       "10×10 Ising grid, n = 20: MSE of E[z] against the coupling σ_p",
		Trials:      200,
		QuickTrials: 3,
		Setting:     "sigma_p",
		Options:     map[string]float64{"field": 0},
		body:        runIsingSigma,
	})
	register(&Experiment{
		Name:        "rbm-n",
		Title:       "Bernoulli RBM, d = 100, M = 25: MMD² and MSE against the sample size n",
		Trials:      50,
		QuickTrials: 2,
		Setting:     "n",
		body:        runRBMN,
	})
	register(&Experiment{
		Name:        "rbm-d",
		Title:       "Bernoulli RBM, M = 25, n = 100: MMD² and MSE against the dimension d",
		Trials:      50,
		QuickTrials: 2,
		Setting:     "d",
		body:        runRBMD,
	})
}

func isingSize(mode Mode) (side, iters int) {
	if mode == Tiny {
		return 4, 20
	}
	return 10, 500
}

func runIsingN(r *runner) (*Result, error) {
	side, iters := isingSize(r.cfg.Mode)
	m, err := isingGrid10(side, 0.1, r.cfg.Options["field"], r.cfg.Seed)
	if err != nil {
		return nil, err
	}
	truth, err := exact.For(m)
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
	var pts []point
	for _, n := range ns {
		pts = append(pts, point{x: float64(n), m: m, n: n, truth: truth})
	}
	methods := samplingMethods("base")
	rows, err := runSampling(r, pts, methods, iters)
	if err != nil {
		return nil, err
	}
	names, labels := methodLabels(methods)
	res := &Result{Rows: rows, Show: []string{"mse"}}
	res.Notes = append(res.Notes, slopes(rows, "mse", methods),
		fmt.Sprintf("%d×%d open grid, coupling 0.1, %s; %d iterations or sweeps; DHMC: %s; init N(−2, 1) except gfsvgd (its preset's N(0, 1)).",
			side, side, fieldNote(r.cfg.Options["field"]), iters, dhmcNote()))
	fig := report.Figure{SharedLegend: true, Panels: []report.Panel{
		{Title: "MSE of E[z] (mean ± SE over trials)", XLabel: "sample size n", YLabel: "log10 MSE", LogX: true, Series: series(rows, "mse", names, labels, true)},
		{Title: "cost", XLabel: "sample size n", YLabel: "log10 seconds per run", LogX: true, Series: series(rows, "seconds", names, labels, true)},
	}}
	return res, fig.Save(filepath.Join(r.cfg.Out, r.name))
}

func runIsingSigma(r *runner) (*Result, error) {
	side, iters := isingSize(r.cfg.Mode)
	sigmas := []float64{-0.15, -0.1, -0.05, 0, 0.05, 0.1, 0.15}
	if r.cfg.Mode == Tiny {
		sigmas = []float64{-0.1, 0.1}
	}
	var pts []point
	for _, s := range sigmas {
		m, err := isingGrid10(side, s, r.cfg.Options["field"], r.cfg.Seed)
		if err != nil {
			return nil, err
		}
		truth, err := exact.For(m)
		if err != nil {
			return nil, err
		}
		pts = append(pts, point{x: s, m: m, n: 20, truth: truth})
	}
	methods := samplingMethods("base")
	rows, err := runSampling(r, pts, methods, iters)
	if err != nil {
		return nil, err
	}
	names, labels := methodLabels(methods)
	res := &Result{Rows: rows, Show: []string{"mse"}}
	res.Notes = append(res.Notes, fmt.Sprintf("%d×%d open grid, n = 20, %s; %d iterations or sweeps; DHMC: %s; init N(−2, 1) except gfsvgd (its preset's N(0, 1)).", side, side, fieldNote(r.cfg.Options["field"]), iters, dhmcNote()))
	fig := report.Figure{SharedLegend: true, Panels: []report.Panel{
		{Title: "MSE of E[z] at n = 20 (mean ± SE over trials)", XLabel: "coupling σ_p", YLabel: "log10 MSE", Series: series(rows, "mse", names, labels, true)},
	}, Cols: 1}
	return res, fig.Save(filepath.Join(r.cfg.Out, r.name))
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
	truth, err := exact.For(m)
	if err != nil {
		return point{}, err
	}
	refS := make([]int, referenceSize(r.cfg.Mode)*d)
	truth.Sample(refS, rng.New(r.cfg.Seed, rng.Trial(rng.StreamSample, 1<<20)))
	ref := metrics.NewReference(samplesOf(refS, d))
	return point{x: x, m: m, n: n, truth: truth, ref: ref}, nil
}

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
	logX := true
	methods := samplingMethods("relaxed")
	rows, err := runSampling(r, pts, methods, iters)
	if err != nil {
		return nil, err
	}
	names, labels := methodLabels(methods)
	res := &Result{Rows: rows, Show: []string{"mmd2", "mse"}}
	res.Notes = append(res.Notes, fmt.Sprintf("RBM %s, W ~ N(0, 0.05), b, c ~ N(0, 1) from the seed; MMD² (V-statistic, kernel exp(−Hamming/d)) against %d exact draws (the CSV also has the unbiased form, mmd2_unbiased); %d iterations or sweeps; Gibbs is block Gibbs; DHMC: %s.", what, referenceSize(r.cfg.Mode), iters, dhmcNote()))
	if fitSlope {
		res.Notes = append(res.Notes, slopes(rows, "mmd2", methods))
	}
	fig := report.Figure{SharedLegend: true, Panels: []report.Panel{
		{Title: "MMD² to p (mean ± SE over trials)", XLabel: xlabel, YLabel: "log10 MMD²", LogX: logX, Series: series(rows, "mmd2", names, labels, true)},
		{Title: "MSE of E[z] (mean ± SE over trials)", XLabel: xlabel, YLabel: "log10 MSE", LogX: logX, Series: series(rows, "mse", names, labels, true)},
	}}
	return res, fig.Save(filepath.Join(r.cfg.Out, r.name))
}

func dhmcNote() string {
	return fmt.Sprintf("step size %g (jitter ±%g%%), %d integration steps per iteration", dhmc.DefaultStepSize, 100*dhmc.DefaultStepJitter, dhmc.DefaultSteps)
}

func samplesOf(z []int, d int) *sampler.Samples {
	return &sampler.Samples{N: len(z) / d, D: d, Z: z}
}
