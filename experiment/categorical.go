package experiment

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/transform"
)

func init() {
	register(&Experiment{
		Name:        "categorical",
		Title:       "GF-SVGD on the appendix's 1-D categorical distribution: frequencies of Γ(x) over iterations",
		Trials:      20,
		QuickTrials: 5,
		Setting:     "iteration",
		body:        runCategorical,
	})
}

// gfVariant is a GF-SVGD configuration compared in the experiments: the
// paper's preset with the paper's surrogate for the model, and dstein's
// defaults.
type gfVariant struct {
	name, preset, surrogate, label string
}

func categoricalVariants() []gfVariant {
	return []gfVariant{
		{"gfsvgd-paper", "paper", "base", "GF-SVGD, paper preset, ρ = p0"},
		{"gfsvgd-transport", "transport", "relaxed", "GF-SVGD, transport preset, relaxed ρ"},
	}
}

// categoricalSize returns the particles of the categorical experiment in
// a mode and the iterations of its snapshots.
func categoricalSize(mode Mode) (int, []int) {
	switch mode {
	case Quick:
		return 500, []int{0, 25, 50, 100, 500}
	case Tiny:
		return 100, []int{0, 5, 10}
	}
	return 1000, []int{0, 25, 50, 100, 500}
}

var appendixStates = categorical.Variable{States: []float64{-1, -0.5, 0, 0.5, 1}, Probs: []float64{0.1, 0.2, 0.3, 0.1, 0.3}}

// describeVariants records each variant's preset and full settings in the
// journal, run for iters iterations (the last snapshot).
func describeVariants(r *runner, variants []gfVariant, iters int) error {
	for _, v := range variants {
		r.presets[v.name] = v.preset
		p, err := infer.Preset(v.preset)
		if err != nil {
			return err
		}
		set := *p.Stages[0].Settings.(*gfsvgd.Settings)
		set.Surrogate = v.surrogate
		p.Stages = []sampler.Stage{{Method: p.Stages[0].Method, Iters: iters, Settings: &set}}
		if err := r.describe(v.name, methodRecord(v.preset, p)); err != nil {
			return err
		}
	}
	return nil
}

// runGFSnapshots runs the GF-SVGD preset of v and calls snap at the given
// iterations (0 = the initial draw).
func runGFSnapshots(ctx context.Context, m model.Model, t *transform.Transform, v gfVariant, n int, key rng.Key, at []int, snap func(it int, s *gfsvgd.Sampler) error) error {
	p, err := infer.Preset(v.preset)
	if err != nil {
		return err
	}
	set := *p.Stages[0].Settings.(*gfsvgd.Settings)
	set.Surrogate = v.surrogate
	s, err := gfsvgd.New(sampler.NewProblem(m, t, n, p.Init, key), set)
	if err != nil {
		return err
	}
	for _, it := range at {
		for s.Iter() < it {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := s.Step(ctx); err != nil {
				return err
			}
		}
		if err := snap(it, s); err != nil {
			return err
		}
	}
	return nil
}

func runCategorical(r *runner) (*Result, error) {
	m, err := categorical.New([]categorical.Variable{appendixStates})
	if err != nil {
		return nil, err
	}
	t, err := transform.ForModel(nil, m)
	if err != nil {
		return nil, err
	}
	n, at := categoricalSize(r.cfg.Mode)
	variants := categoricalVariants()
	labels := map[string]string{}
	for _, v := range variants {
		labels[v.name] = v.label
	}
	if err := describeVariants(r, variants, at[len(at)-1]); err != nil {
		return nil, err
	}
	for tr := range r.trials {
		if !r.inShard(tr) {
			continue
		}
		tk := r.trialKey(tr)
		for _, v := range variants {
			// One run gives every snapshot; run it when any is missing.
			missing := false
			for _, it := range at {
				if !r.want(v.name, float64(it), tr) {
					missing = true
				}
			}
			if !missing {
				continue
			}
			if err := r.startUnit(v.name, float64(at[0]), tr); err != nil {
				return nil, err
			}
			err := runGFSnapshots(r.ctx, m, t, v, n, tk, at, func(it int, s *gfsvgd.Sampler) error {
				_, err := r.trial(v.name, float64(it), tr, func() (map[string]float64, error) {
					freq := sampler.Marginals(m, &sampler.Samples{N: n, D: 1, Z: s.Current()})[0]
					out := map[string]float64{}
					var tv, mx float64
					for k, p := range appendixStates.Probs {
						out["freq:"+report.FormatValue(appendixStates.States[k])] = freq[k]
						tv += math.Abs(freq[k]-p) / 2
						mx = math.Max(mx, math.Abs(freq[k]-p))
					}
					out["tv"] = tv
					out["max_error"] = mx
					return out, nil
				})
				return err
			})
			if err != nil {
				return nil, err
			}
		}
		r.trialDone(tr)
	}
	rows := r.summarize()
	res := &Result{Rows: rows, Show: []string{"tv", "max_error"}}
	res.Notes = append(res.Notes, fmt.Sprintf("n = %d particles; %s: %s; %s: %s.", n,
		variants[0].name, presetDescription("paper"), variants[1].name, presetDescription("transport")))

	// Figure: frequencies at each snapshot, TV over iterations, and the
	// particles of trial 0 (paper preset) at iteration 100 on p_c.
	var panels []report.Panel
	labelsX := make([]string, len(appendixStates.States))
	for k, v := range appendixStates.States {
		labelsX[k] = report.FormatValue(v)
	}
	for _, it := range at {
		p := report.Panel{Title: fmt.Sprintf("frequencies of Γ(x) at iteration %d (mean ± SE over trials)", it), XLabel: "state z", YLabel: "probability", Labels: labelsX, YMin: 0, YMax: 1.05}
		p.Bars = append(p.Bars, report.Bars{Name: "p*(z)", Values: appendixStates.Probs, ColorIndex: 6})
		for k, v := range variants {
			nan := math.NaN()
			vals := make([]float64, len(appendixStates.States))
			lo := []float64{nan, nan, nan, nan, nan}
			hi := []float64{nan, nan, nan, nan, nan}
			for _, row := range rows {
				if row.Method == v.name && row.X == float64(it) {
					for s, st := range appendixStates.States {
						if row.Metric == "freq:"+report.FormatValue(st) {
							vals[s], lo[s], hi[s] = row.Mean, row.Mean-row.SE, row.Mean+row.SE
						}
					}
				}
			}
			p.Bars = append(p.Bars, report.Bars{Name: v.label, Values: vals, Lo: lo, Hi: hi, ColorIndex: k})
		}
		panels = append(panels, p)
	}
	names := []string{variants[0].name, variants[1].name}
	panels = append(panels, report.Panel{Title: "total variation distance to p* (mean ± SE over trials)", XLabel: "iteration", YLabel: "total variation (log scale)", LogY: true, Dodge: true,
		Series: series(rows, "tv", names, labels)})
	densAt := 0
	for _, it := range at {
		if it <= 100 {
			densAt = it
		}
	}
	dens, err := categoricalDensityPanel(r.ctx, m, t, variants[0], n, r.trialKey(0), densAt)
	if err != nil {
		return nil, err
	}
	panels = append(panels, dens)
	its := make([]float64, len(at))
	for k, it := range at {
		its[k] = float64(it)
	}
	fig := report.Figure{Panels: panels, Cols: 3, SharedLegend: true, Title: figureTitle(r, rows,
		"GF-SVGD on the appendix's 1-D categorical p* = (0.1, 0.2, 0.3, 0.1, 0.3) on the states −1, −0.5, 0, 0.5, 1",
		fmt.Sprintf("n = %d particles", n), "snapshots at iterations "+listNote(its))}
	if err := r.save(fig); err != nil {
		return nil, err
	}
	return res, nil
}

// categoricalDensityPanel draws p_c(x) = K p0(x) p*(Γ(x)) with the particles
// of one run at iteration it as points along the bottom.
func categoricalDensityPanel(ctx context.Context, m *categorical.Categorical, t *transform.Transform, v gfVariant, n int, key rng.Key, it int) (report.Panel, error) {
	p := report.Panel{Title: fmt.Sprintf("p_c(x) and the particles of the first trial (%s) at iteration %d", v.label, it), XLabel: "x", YLabel: "density"}
	var xs, pc, p0 []float64
	K := float64(len(m.States(0)))
	z := make([]int, 1)
	for x := -3.5; x <= 3.5; x += 0.01 {
		xs = append(xs, x)
		pc = append(pc, K*math.Exp(t.LogTarget(m, []float64{x}, z)))
		p0 = append(p0, math.Exp(t.LogBase([]float64{x})))
	}
	// Style indices 3 and 4 keep clear of the variants' (0, 1) and p*'s (6).
	p.Series = append(p.Series, report.Series{Name: "p_c(x)", X: xs, Y: pc, ColorIndex: 3})
	p.Series = append(p.Series, report.Series{Name: "p0(x) = N(0, 1)", X: xs, Y: p0, ColorIndex: 4, Dashed: true})
	err := runGFSnapshots(ctx, m, t, v, n, key, []int{it}, func(_ int, s *gfsvgd.Sampler) error {
		x := s.Positions()
		ys := make([]float64, len(x))
		for k := range ys {
			ys[k] = -0.01 - 0.02*float64(k%5)/5
		}
		// The particles take the style of their variant (index 0 in
		// categoricalVariants), as its bars and line do.
		p.Series = append(p.Series, report.Series{Name: "particles x (one run, " + v.name + ")", X: append([]float64(nil), x...), Y: ys, Points: true, ColorIndex: 0})
		return nil
	})
	return p, err
}

// presetDescription returns a preset's one-line description.
func presetDescription(name string) string {
	p, err := infer.Preset(name)
	if err != nil {
		return name
	}
	return p.Description
}
