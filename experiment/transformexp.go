package experiment

import (
	"fmt"
	"math"

	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/transform"
)

func init() {
	register(&Experiment{
		Name:        "transform",
		Title:       "choice of transform: the Gaussian base against Gaussian-mixture bases on a 5-state distribution",
		Trials:      20,
		QuickTrials: 4,
		Setting:     "mixture_spread",
		body:        runTransform,
	})
}

var transformStates = categorical.Variable{States: []float64{-2, -1, 0, 1, 2}, Probs: []float64{0.1, 0.2, 0.25, 0.15, 0.3}}

// transformBases returns the bases of the paper's figure: N(0, 1) (spread
// 0) and Σ_k p_k N(μ_k, 1) with μ = s·(−2, −1, 0, 1, 2)/2 for s = 2, 10, 20,
// i.e. μ = (−2,−1,0,1,2), (−10,−5,0,5,10), (−20,−10,0,10,20).
func transformBases() ([]float64, []transform.Base, error) {
	spreads := []float64{0, 2, 10, 20}
	bases := []transform.Base{transform.Normal{}}
	for _, s := range spreads[1:] {
		mu := make([]float64, 5)
		for k := range mu {
			mu[k] = s * float64(k-2) / 2
		}
		mix, err := transform.NewMixture(transformStates.Probs, mu, []float64{1, 1, 1, 1, 1})
		if err != nil {
			return nil, nil, err
		}
		bases = append(bases, mix)
	}
	return spreads, bases, nil
}

func runTransform(r *runner) (*Result, error) {
	m, err := categorical.New([]categorical.Variable{transformStates})
	if err != nil {
		return nil, err
	}
	spreads, bases, err := transformBases()
	if err != nil {
		return nil, err
	}
	n, iters := 1000, 500
	switch r.cfg.Mode {
	case Quick:
		n = 200
	case Tiny:
		n, iters = 50, 20
	}
	variants := categoricalVariants()
	labels := map[string]string{"exact": fmt.Sprintf("exact i.i.d. sampling (n = %d)", n)}
	for _, v := range variants {
		labels[v.name] = v.label
	}
	if err := describeVariants(r, variants, iters); err != nil {
		return nil, err
	}
	tv := func(freq []float64) map[string]float64 {
		var d float64
		for k, p := range transformStates.Probs {
			d += math.Abs(freq[k]-p) / 2
		}
		return map[string]float64{"tv": d}
	}
	for tr := range r.trials {
		if !r.inShard(tr) {
			continue
		}
		tk := r.trialKey(tr)
		for b, base := range bases {
			t, err := transform.ForModel(base, m)
			if err != nil {
				return nil, err
			}
			for _, v := range variants {
				_, err := r.trial(v.name, spreads[b], tr, func() (map[string]float64, error) {
					var out map[string]float64
					err := runGFSnapshots(r.ctx, m, t, v, n, tk, []int{iters}, func(_ int, s *gfsvgd.Sampler) error {
						out = tv(sampler.Marginals(m, &sampler.Samples{N: n, D: 1, Z: s.Current()})[0])
						return nil
					})
					return out, err
				})
				if err != nil {
					return nil, err
				}
			}
			// i.i.d. sampling does not depend on the base: one reference
			// per trial, recorded at every spread for the plot.
			_, err = r.trial("exact", spreads[b], tr, func() (map[string]float64, error) {
				g := tk.For(rng.Sample).Rand()
				freq := make([]float64, 5)
				for range n {
					u := g.Float64()
					k := 0
					for acc := transformStates.Probs[0]; u >= acc && k < 4; acc += transformStates.Probs[k] {
						k++
					}
					freq[k] += 1 / float64(n)
				}
				return tv(freq), nil
			})
			if err != nil {
				return nil, err
			}
		}
		r.trialDone(tr)
	}
	r.presets["exact"] = ""
	rows := r.summarize()
	res := &Result{Rows: rows}
	res.Notes = append(res.Notes, fmt.Sprintf("n = %d particles, %d iterations; each base is cut into 5 bins of equal base probability at its own quantiles; ρ = p0 (that base) for the paper preset.", n, iters))
	var panels []report.Panel
	K := float64(len(transformStates.States))
	z := make([]int, 1)
	for b, base := range bases {
		t, _ := transform.ForModel(base, m)
		lo, hi := -4.0, 4.0
		if spreads[b] > 2 {
			lo, hi = -spreads[b]-4, spreads[b]+4
		}
		var xs, pc, p0 []float64
		for x := lo; x <= hi; x += (hi - lo) / 800 {
			xs = append(xs, x)
			pc = append(pc, K*math.Exp(t.LogTarget(m, []float64{x}, z)))
			p0 = append(p0, math.Exp(base.LogProb(x)))
		}
		title := "(a) base N(0, 1)"
		if b > 0 {
			title = fmt.Sprintf("(%c) base Σ p_k N(μ_k, 1), μ = %g·(−2,−1,0,1,2)/2", 'a'+b, spreads[b])
		}
		// Style indices 3 and 4 keep clear of the methods' (0, 1, 2).
		panels = append(panels, report.Panel{Title: title, XLabel: "x", YLabel: "density", Series: []report.Series{
			{Name: "p_c(x), the target in x", X: xs, Y: pc, ColorIndex: 3},
			{Name: "p0(x), the base", X: xs, Y: p0, ColorIndex: 4, Dashed: true},
		}})
	}
	panels = append(panels, report.Panel{Title: fmt.Sprintf("(%c) total variation of the frequencies from p* after %d iterations (mean ± SE over trials)", 'a'+len(bases), iters),
		XLabel: "mixture spread (0 = Gaussian base)", YLabel: "total variation (log scale)", LogY: true, Dodge: true, XTicks: spreads,
		Series: series(rows, "tv", []string{variants[0].name, variants[1].name, "exact"}, labels)})
	fig := report.Figure{Panels: panels, Cols: 3, SharedLegend: true, Title: figureTitle(r, rows,
		"choice of transform on the 5-state p* = (0.1, 0.2, 0.25, 0.15, 0.3) on −2, …, 2",
		fmt.Sprintf("n = %d particles, %d iterations of GF-SVGD", n, iters))}
	if err := r.save(fig); err != nil {
		return nil, err
	}
	return res, nil
}
