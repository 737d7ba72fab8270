package experiment

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/experiment/journal"
	"github.com/dstein/dstein/gof"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/transform"
)

// gofMethod is one test of the goodness-of-fit experiments.
type gofMethod struct {
	name, label string
	run         func(ctx context.Context, m model.Model, s, ref *sampler.Samples, o gof.Options) (*gof.Result, error)
}

// gofMethods are GF-KSD with dstein's default surrogate (pinned, so that a
// change of defaults never silently changes a published number) and with a
// milder τ = 0.05, GF-KSD with the paper's surrogate (ρ as in the paper's sampling: p0 for Ising models, the relaxed
// surrogate at τ = 1, the paper's σ, for RBMs), DKSD, BKSD (not in the
// paper) and MMD.
func gofMethods(paperSurrogate string) []gofMethod {
	paper := gof.GFKSDSettings{Surrogate: paperSurrogate, Temperature: 1}
	label := "GF-KSD, ρ = p0 (paper)"
	if paperSurrogate == "relaxed" {
		label = "GF-KSD, relaxed ρ at τ = 1 (paper)"
	}
	sharp := gof.GFKSDSettings{Temperature: 0.02}
	mild := gof.GFKSDSettings{Temperature: 0.05}
	return []gofMethod{
		{"gfksd", "GF-KSD (default: relaxed ρ, τ = 0.02)", func(ctx context.Context, m model.Model, s, _ *sampler.Samples, o gof.Options) (*gof.Result, error) {
			return gof.GFKSD(ctx, m, s, sharp, o)
		}},
		{"gfksd-0.05", "GF-KSD, relaxed ρ, τ = 0.05", func(ctx context.Context, m model.Model, s, _ *sampler.Samples, o gof.Options) (*gof.Result, error) {
			return gof.GFKSD(ctx, m, s, mild, o)
		}},
		{"gfksd-paper", label, func(ctx context.Context, m model.Model, s, _ *sampler.Samples, o gof.Options) (*gof.Result, error) {
			return gof.GFKSD(ctx, m, s, paper, o)
		}},
		{"dksd", "DKSD", func(ctx context.Context, m model.Model, s, _ *sampler.Samples, o gof.Options) (*gof.Result, error) {
			return gof.DKSD(ctx, m, s, o)
		}},
		{"bksd", "BKSD (balanced, Barker rates)", func(ctx context.Context, m model.Model, s, _ *sampler.Samples, o gof.Options) (*gof.Result, error) {
			return gof.BKSD(ctx, m, s, o)
		}},
		{"mmd", "MMD", func(ctx context.Context, m model.Model, s, ref *sampler.Samples, o gof.Options) (*gof.Result, error) {
			return gof.MMD(ctx, s, ref, o)
		}},
	}
}

// drawer draws n samples of a model for one trial.
type drawer func(n int, key rng.Key) (*sampler.Samples, error)

// gofPoint is one setting of a goodness-of-fit experiment: the null model,
// a drawer of the samples under test (from the alternative) and a drawer of
// MMD's reference samples (from the null model).
type gofPoint struct {
	x        float64
	null     model.Model
	n        int
	draw     func(trial int, key rng.Key) (*sampler.Samples, error)
	drawNull drawer
}

func bootstrapDraws(mode Mode) int {
	switch mode {
	case Tiny:
		return 40
	case Quick:
		return 200
	}
	return gof.DefaultB
}

// runGOF runs every test at every point for every trial and returns the
// summary rows (metrics reject, p_value, statistic).
func runGOF(r *runner, pts []gofPoint, methods []gofMethod) ([]Row, error) {
	b := bootstrapDraws(r.cfg.Mode)
	for tr := range r.trials {
		if !r.inShard(tr) {
			continue
		}
		tk := r.trialKey(tr)
		for _, p := range pts {
			var s, ref *sampler.Samples
			need := false
			for _, mt := range methods {
				if !r.want(mt.name, p.x, tr) {
					need = true
				}
			}
			if need {
				var err error
				if s, err = p.draw(tr, tk); err != nil {
					return nil, err
				}
				if ref, err = p.drawNull(p.n, tk.Tweak(0x5bd1e995)); err != nil {
					return nil, err
				}
			}
			for _, mt := range methods {
				_, err := r.trial(mt.name, p.x, tr, func() (map[string]float64, error) {
					res, err := mt.run(r.ctx, p.null, s, ref, gof.Options{B: b, Key: tk})
					if err != nil {
						return nil, err
					}
					rej := 0.0
					if res.Reject {
						rej = 1
					}
					out := map[string]float64{"reject": rej, "p_value": res.PValue}
					if !math.IsInf(res.Statistic, 0) {
						out["statistic"] = res.Statistic
					}
					if res.ESS > 0 {
						out["weight_ess"] = res.ESS
					}
					return out, nil
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

// gofFigure plots the rejection rates with ±SE bars and the level α; what
// (the model, the samples and the sizes) starts the figure's title.
func gofFigure(r *runner, rows []Row, methods []gofMethod, what, xlabel string, logX bool) error {
	return gofFigureRange(r, rows, methods, what, xlabel, logX, -0.02, 1.02)
}

func gofFigureRange(r *runner, rows []Row, methods []gofMethod, what, xlabel string, logX bool, ymin, ymax float64) error {
	var names []string
	labels := map[string]string{}
	for _, mt := range methods {
		names = append(names, mt.name)
		labels[mt.name] = mt.label
	}
	ser := series(rows, "reject", names, labels)
	if len(ser) > 0 {
		lvl := report.Series{Name: "α = 0.05", Dashed: true, LineOnly: true, ColorIndex: len(names)}
		for _, x := range ser[0].X {
			lvl.X = append(lvl.X, x)
			lvl.Y = append(lvl.Y, gof.DefaultAlpha)
		}
		ser = append(ser, lvl)
	}
	fig := report.Figure{SharedLegend: true, Cols: 1, Width: 7 * 72, Height: 4.5 * 72,
		Title: figureTitle(r, rows, what, fmt.Sprintf("α = %g, %d bootstrap draws or permutations", gof.DefaultAlpha, bootstrapDraws(r.cfg.Mode))),
		Panels: []report.Panel{
			{Title: "rejection rate at level α (mean ± SE over trials)", XLabel: xlabel, YLabel: "rejection rate", LogX: logX, XTicksAtData: true, Dodge: true, Series: ser, YMin: ymin, YMax: ymax},
		}}
	return r.save(fig)
}

// gibbsDrawer draws the final states of n Gibbs chains after sweeps sweeps.
func gibbsDrawer(m model.Model, sweeps int) drawer {
	return func(n int, key rng.Key) (*sampler.Samples, error) {
		t, err := transform.ForModel(transform.Normal{}, m)
		if err != nil {
			return nil, err
		}
		g, err := gibbs.New(sampler.NewProblem(m, t, n, sampler.Init{}, key), gibbs.Settings{})
		if err != nil {
			return nil, err
		}
		ctx := context.Background()
		for range sweeps {
			if err := g.Step(ctx); err != nil {
				return nil, err
			}
		}
		return &sampler.Samples{N: n, D: m.Dim(), Z: append([]int(nil), g.Current()...)}, nil
	}
}

// exactDrawer draws exact samples from a prepared exact sampler.
func exactDrawer(truth exact.Truth, d int) drawer {
	return func(n int, key rng.Key) (*sampler.Samples, error) {
		s := sampler.NewSamples(n, d)
		truth.Sample(s.Z, key.For(rng.Sample).Rand())
		return s, nil
	}
}

func init() {
	register(&Experiment{
		Name:        "gof-level",
		Title:       "level of the tests: 4×4 Ising grid, exact samples from the model itself",
		Trials:      500,
		QuickTrials: 40,
		Setting:     "n",
		body:        runGOFLevel,
	})
	register(&Experiment{
		Name:        "gof-ising-temp",
		Title:       "periodic Ising grid at T = 20 (10×10 in full runs): rejection rate against the samples' temperature T'",
		Trials:      200,
		QuickTrials: 20,
		Setting:     "T_prime",
		body:        runGOFIsingTemp,
	})
	register(&Experiment{
		Name:        "gof-ising-n",
		Title:       "periodic Ising grid at T = 20 against samples at T' (10×10 and T' = 15 in full runs): rejection rate against n",
		Trials:      200,
		QuickTrials: 20,
		Setting:     "n",
		body:        runGOFIsingN,
	})
	register(&Experiment{
		Name:        "gof-rbm-sigma",
		Title:       "RBM (d = 50, M = 25, n = 100 in full runs): rejection rate against the weight noise σ'",
		Trials:      200,
		QuickTrials: 20,
		Setting:     "sigma_prime",
		body:        runGOFRBMSigma,
	})
	register(&Experiment{
		Name:        "gof-rbm-n",
		Title:       "RBM (d = 50, M = 25 in full runs): rejection rate against n at a fixed weight noise σ' (--sigma, default 0.05)",
		Trials:      200,
		QuickTrials: 20,
		Setting:     "n",
		Settings:    GOFRBMNSettings{Sigma: 0.05},
		body:        runGOFRBMN,
	})
}

// levelModel is the 4×4 open grid, coupling 0.3, fields 0.05, of the level
// check.
func levelModel() (*ising.Ising, error) {
	f := make([]float64, 16)
	for i := range f {
		f[i] = 0.05
	}
	return ising.Grid(4, 4, false, 0.3, f)
}

func runGOFLevel(r *runner) (*Result, error) {
	m, err := levelModel()
	if err != nil {
		return nil, err
	}
	truth, err := exact.ForContext(r.ctx, m)
	if err != nil {
		return nil, err
	}
	draw := exactDrawer(truth, m.Dim())
	ns := []int{50, 100, 200, 500}
	switch r.cfg.Mode {
	case Quick:
		ns = []int{100, 200}
	case Tiny:
		ns = []int{20}
	}
	methods := gofMethods("base")
	rademacher := gofMethod{"gfksd-rademacher", "GF-KSD τ = 0.05, Rademacher bootstrap", func(ctx context.Context, m model.Model, s, _ *sampler.Samples, o gof.Options) (*gof.Result, error) {
		o.Bootstrap = gof.Rademacher
		return gof.GFKSD(ctx, m, s, gof.GFKSDSettings{Temperature: 0.05}, o)
	}}
	methods = append(append(methods[:3:3], rademacher), methods[3:]...)
	var pts []gofPoint
	for _, n := range ns {
		pts = append(pts, gofPoint{x: float64(n), null: m, n: n, draw: func(_ int, key rng.Key) (*sampler.Samples, error) { return draw(n, key) }, drawNull: draw})
	}
	rows, err := runGOF(r, pts, methods)
	if err != nil {
		return nil, err
	}
	rows = append(rows, ksRows(r, methods, ns)...)
	res := &Result{Rows: rows, Show: []string{"reject", "ks_uniform"}}
	res.Notes = append(res.Notes,
		fmt.Sprintf("4×4 open grid, coupling 0.3, fields 0.05; exact samples from the model itself; α = 0.05; %d bootstrap draws; a calibrated test rejects at rate 0.05 ± %.3f (3 SE over %d trials).", bootstrapDraws(r.cfg.Mode), 3*math.Sqrt(0.05*0.95/float64(r.trials)), r.trials),
		fmt.Sprintf("ks_uniform is the Kolmogorov–Smirnov distance of the p-values from U(0, 1); its 1%% critical value over %d trials is %.3f.", r.trials, 1.63/math.Sqrt(float64(r.trials))))
	return res, gofFigureRange(r, rows, methods, "level of the tests: 4×4 open Ising grid, coupling 0.3, fields 0.05, exact samples from the model itself (the null); "+rangeNote("n", intsF(ns)), "sample size n", true, 0, 0.15)
}

// ksRows computes, from the journal, the Kolmogorov–Smirnov distance of
// each method's p-values from the uniform distribution at each n.
func ksRows(r *runner, methods []gofMethod, ns []int) []Row {
	var rows []Row
	for _, mt := range methods {
		for _, n := range ns {
			var ps []float64
			for tr := range r.trials {
				if v, ok := r.j.Done(journal.Key{Method: mt.name, X: float64(n), Trial: tr}); ok {
					ps = append(ps, v["p_value"])
				}
			}
			if len(ps) == 0 {
				continue
			}
			sort.Float64s(ps)
			var d float64
			k := float64(len(ps))
			for i, v := range ps {
				d = max(d, float64(i+1)/k-v, v-float64(i)/k)
			}
			rows = append(rows, Row{Method: mt.name, Setting: "n", X: float64(n), Metric: "ks_uniform", Mean: d, Trials: len(ps)})
		}
	}
	return rows
}

// isingTempSize returns the side of the periodic grid, n and the Gibbs
// sweeps behind each sample.
func isingTempSize(mode Mode) (side, n, sweeps int) {
	switch mode {
	case Quick:
		return 10, 200, 100
	case Tiny:
		return 3, 30, 20
	}
	return 10, 1000, 200
}

func periodicIsing(side int, temp float64) (*ising.Ising, error) {
	return ising.Grid(side, side, true, 1/temp, nil)
}

const isingNullT = 20.0

func isingGOFPoints(side, sweeps int, temps []float64, ns []int, byN bool) ([]gofPoint, error) {
	null, err := periodicIsing(side, isingNullT)
	if err != nil {
		return nil, err
	}
	drawNull := gibbsDrawer(null, sweeps)
	var pts []gofPoint
	for _, tp := range temps {
		alt, err := periodicIsing(side, tp)
		if err != nil {
			return nil, err
		}
		da := gibbsDrawer(alt, sweeps)
		for _, n := range ns {
			x := tp
			if byN {
				x = float64(n)
			}
			pts = append(pts, gofPoint{x: x, null: null, n: n, draw: func(_ int, key rng.Key) (*sampler.Samples, error) { return da(n, key) }, drawNull: drawNull})
		}
	}
	return pts, nil
}

func isingGOFNote(side, sweeps, b int) string {
	return fmt.Sprintf("%d×%d periodic grid, log p*(z) = (1/T) Σ_edges z_i z_j, model T = 20; samples at T' (and MMD's reference at T) are the final states of independent Gibbs chains after %d sweeps (the published runs predate dstein's exact sampler for periodic grids); α = 0.05; %d bootstrap draws or permutations.", side, side, sweeps, b)
}

func runGOFIsingTemp(r *runner) (*Result, error) {
	side, n, sweeps := isingTempSize(r.cfg.Mode)
	temps := []float64{10, 15, 17.5, 20, 22.5, 25, 30}
	switch r.cfg.Mode {
	case Quick:
		temps = []float64{10, 20}
	case Tiny:
		temps = []float64{5, 20}
	}
	pts, err := isingGOFPoints(side, sweeps, temps, []int{n}, false)
	if err != nil {
		return nil, err
	}
	return gofResult(r, pts, gofMethods("base"), isingGOFNote(side, sweeps, bootstrapDraws(r.cfg.Mode)),
		fmt.Sprintf("n = %d; T' = 20 is the null (the rejection rate there is the level).", n),
		fmt.Sprintf("%d×%d periodic Ising grid, model T = 20, samples at T' (final states of Gibbs chains after %d sweeps); n = %d", side, side, sweeps, n), "temperature T' of the samples", false)
}

// gofResult runs the tests at the points and returns the summary with its
// notes and figure.
func gofResult(r *runner, pts []gofPoint, methods []gofMethod, note, note2, what, xlabel string, logX bool) (*Result, error) {
	rows, err := runGOF(r, pts, methods)
	if err != nil {
		return nil, err
	}
	res := &Result{Rows: rows, Show: []string{"reject"}, Notes: []string{note, note2}}
	return res, gofFigure(r, rows, methods, what, xlabel, logX)
}

func runGOFIsingN(r *runner) (*Result, error) {
	side, _, sweeps := isingTempSize(r.cfg.Mode)
	ns := []int{100, 200, 500, 1000}
	switch r.cfg.Mode {
	case Quick:
		ns = []int{100, 300}
	case Tiny:
		ns = []int{20, 40}
	}
	tp := 15.0
	if r.cfg.Mode == Tiny {
		tp = 5
	}
	pts, err := isingGOFPoints(side, sweeps, []float64{tp}, ns, true)
	if err != nil {
		return nil, err
	}
	return gofResult(r, pts, gofMethods("base"), isingGOFNote(side, sweeps, bootstrapDraws(r.cfg.Mode)),
		fmt.Sprintf("samples at T' = %g.", tp), fmt.Sprintf("%d×%d periodic Ising grid, model T = 20, samples at T' = %g (final states of Gibbs chains after %d sweeps); %s", side, side, tp, sweeps, rangeNote("n", intsF(ns))), "sample size n", true)
}
