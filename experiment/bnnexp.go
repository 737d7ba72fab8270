package experiment

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dstein/dstein/dataset"
	"github.com/dstein/dstein/ensemble"
	"github.com/dstein/dstein/report"
)

func init() {
	register(&Experiment{
		Name:        "bnn",
		Title:       "Binarized network ensembles on MNIST (CNNs in full runs): test accuracy against ensemble size for GF-SVGD, bagging, BENN, STE and BNN+",
		Trials:      1,
		QuickTrials: 1,
		Unsharded:   true,
		Setting:     "ensemble size",
		Settings:    BNNSettings{},
		body:        runBNN,
	})
}

// BNNSettings are the options of bnn.
type BNNSettings struct {
	Fashion bool `opt:"fashion" flag:"fashion" help:"Fashion-MNIST instead of MNIST"`
	// Epochs per network and the number of training examples (0: the
	// mode's).
	Epochs int `opt:"epochs" flag:"epochs,positive" help:"epochs per network (default: the mode's)"`
	Train  int `opt:"train" flag:"train-limit,positive" help:"train on the first N training examples only (default: the mode's; all in full runs)"`
}

// bnnPlan is the budget of one mode of the bnn experiment.
type bnnPlan struct {
	arch                  string
	epochs                int
	trainLimit, testLimit int
	sizes                 []int
}

func bnnPlanFor(mode Mode) bnnPlan {
	switch mode {
	case Quick:
		return bnnPlan{arch: "mlp", epochs: 1, trainLimit: 3000, testLimit: 2000, sizes: []int{1, 2, 3}}
	case Tiny:
		return bnnPlan{arch: "mlp", epochs: 1, trainLimit: 256, testLimit: 200, sizes: []int{1, 2}}
	}
	return bnnPlan{arch: "cnn", epochs: 2, sizes: []int{1, 2, 3, 5, 8}}
}

var bnnLabels = map[string]string{
	"gfsvgd":  "GF-SVGD (rank weights)",
	"bagging": "bagging (STE members)",
	"benn":    "BENN (SAMME boosting)",
	"ste":     "single BNN (STE)",
	"bnnplus": "single BNN+",
}

// runBNN trains, per trial: a GF-SVGD ensemble of every size (the particles
// interact, so each size is its own run), bagging and BENN once at the
// largest size (their first k members are the size-k ensemble), and one
// STE and one BNN+ network. Every network sees epochs × N examples.
func runBNN(r *runner) (*Result, error) {
	plan := bnnPlanFor(r.cfg.Mode)
	set := settingsOf[BNNSettings](r)
	if set.Epochs > 0 {
		plan.epochs = set.Epochs
	}
	if set.Train > 0 {
		plan.trainLimit = set.Train
	}
	data := "mnist"
	if set.Fashion {
		data = "fashion"
	}
	train, test, err := dataset.Load(data, "")
	if err != nil {
		return nil, err
	}
	maxSize := slices.Max(plan.sizes)
	for tr := range r.trials {
		seed := r.trialKey(tr).Seed
		cfgFor := func(method string, n int) ensemble.Config {
			return ensemble.Config{Data: data, Arch: plan.arch, Method: method, Ensemble: n, Epochs: plan.epochs, Seed: seed,
				TrainLimit: plan.trainLimit, TestLimit: plan.testLimit}
		}
		fit := func(method string, n int) (*ensemble.Result, error) {
			r.logf("bnn: trial %d: %s with %d network(s) …", tr+1, method, n)
			return ensemble.Train(r.ctx, cfgFor(method, n), train, test, ensemble.Options{})
		}
		for _, n := range plan.sizes {
			_, err := r.trial("gfsvgd", float64(n), tr, func() (map[string]float64, error) {
				res, err := fit("gfsvgd", n)
				if err != nil {
					return nil, err
				}
				m := map[string]float64{"accuracy": res.EnsembleAccuracy, "member_accuracy": mean(res.MemberAccuracy), "seconds": res.Seconds}
				if n > 1 {
					var rep, ess float64
					for _, h := range res.History {
						rep += h.Repulsion / float64(len(res.History))
						ess += h.ImportanceESS / float64(len(res.History))
					}
					m["repulsion"], m["importance_ess"] = rep, ess
				}
				return m, nil
			})
			if err != nil {
				return nil, err
			}
		}
		for _, method := range []string{"bagging", "benn"} {
			_, err := r.trial(method, float64(maxSize), tr, func() (map[string]float64, error) {
				res, err := fit(method, maxSize)
				if err != nil {
					return nil, err
				}
				m := map[string]float64{"seconds": res.Seconds}
				for k, a := range res.PrefixAccuracy {
					m["accuracy@"+strconv.Itoa(k+1)] = a
				}
				return m, nil
			})
			if err != nil {
				return nil, err
			}
		}
		for _, method := range []string{"ste", "bnnplus"} {
			_, err := r.trial(method, 1, tr, func() (map[string]float64, error) {
				res, err := fit(method, 1)
				if err != nil {
					return nil, err
				}
				return map[string]float64{"accuracy": res.EnsembleAccuracy, "seconds": res.Seconds}, nil
			})
			if err != nil {
				return nil, err
			}
		}
		r.trialDone(tr)
	}
	rows := bnnRows(r.summarize(), plan.sizes)
	methods := []string{"gfsvgd", "bagging", "benn", "ste", "bnnplus"}
	res := &Result{Rows: rows, Show: []string{"accuracy"}}
	res.Notes = append(res.Notes, fmt.Sprintf("%s, %s architecture (binary weights and activations), %d epoch(s) per network, batch 64, Adam %g with cosine decay%s; GF-SVGD: rank weights, h = med²/(2 log(n+1)), relaxation temperature %g annealed to %g; bagging and BENN members are STE networks, their size-k rows are the first k members of one run of %d; STE and BNN+ are single networks (size 1).",
		data, plan.arch, plan.epochs, ensemble.DefaultLearningRate, limitNote(plan), ensemble.DefaultTemperature, ensemble.DefaultTemperatureEnd, maxSize))
	// The error bars: an accuracy a measured on n_test images has the
	// binomial standard error √(a(1−a)/n_test) from the choice of test
	// set, which one trial cannot average away; with several trials it is
	// added in quadrature to the standard error over trials (training
	// randomness), all trials sharing the one test set.
	nTest := test.N
	if plan.testLimit > 0 && plan.testLimit < nTest {
		nTest = plan.testLimit
	}
	bar := func(row Row) float64 { return accuracyBar(row, nTest) }
	var series []report.Series
	for k, m := range methods {
		s := report.Series{Name: bnnLabels[m], ColorIndex: k}
		for _, row := range rows {
			if row.Method == m && row.Metric == "accuracy" {
				e := bar(row)
				s.X = append(s.X, row.X)
				s.Y = append(s.Y, 100*row.Mean)
				s.Lo = append(s.Lo, 100*(row.Mean-e))
				s.Hi = append(s.Hi, 100*(row.Mean+e))
			}
		}
		if len(s.X) == 1 {
			// A single network: a dashed level across the sizes, its bar
			// at size 1, where it was measured.
			s.X = []float64{float64(plan.sizes[0]), float64(maxSize)}
			s.Y = []float64{s.Y[0], s.Y[0]}
			s.Lo = []float64{s.Lo[0], math.NaN()}
			s.Hi = []float64{s.Hi[0], math.NaN()}
			s.Dashed = true
		}
		if len(s.X) > 0 {
			series = append(series, s)
		}
	}
	fig := report.Figure{SharedLegend: true, Cols: 1, Width: 7 * 72, Height: 4.5 * 72,
		Title: figureTitle(r, rows, fmt.Sprintf("%s test accuracy of binarized %s ensembles, %s per network", map[string]string{"mnist": "MNIST", "fashion": "Fashion-MNIST"}[data], strings.ToUpper(plan.arch), budgetNote(plan)),
			fmt.Sprintf("n_test = %d test images", nTest), "bars: ± binomial SE √(a(1−a)/n_test) (with the SE over trials, when several, in quadrature)"),
		Panels: []report.Panel{{Title: "test accuracy against ensemble size (dashed: single networks, measured at size 1)", XLabel: "ensemble size", YLabel: "test accuracy (%)", XTicks: intsF(plan.sizes), Dodge: true, Series: series}}}
	return res, r.save(fig)
}

// budgetNote says how many examples each network saw.
func budgetNote(p bnnPlan) string {
	s := fmt.Sprintf("%d epoch(s)", p.epochs)
	if p.trainLimit > 0 {
		s += fmt.Sprintf(" of %d examples", p.trainLimit)
	}
	return s
}

func limitNote(p bnnPlan) string {
	s := ""
	if p.trainLimit > 0 {
		s += fmt.Sprintf(", first %d training examples only", p.trainLimit)
	}
	if p.testLimit > 0 {
		s += fmt.Sprintf(", first %d test examples only", p.testLimit)
	}
	return s
}

// bnnRows turns the prefix metrics "accuracy@k" of bagging and BENN into
// accuracy rows at x = k for the experiment's sizes.
func bnnRows(rows []Row, sizes []int) []Row {
	var out []Row
	for _, r := range rows {
		if k, ok := strings.CutPrefix(r.Metric, "accuracy@"); ok {
			n, err := strconv.Atoi(k)
			if err != nil || !slices.Contains(sizes, n) {
				continue
			}
			r.X, r.Metric = float64(n), "accuracy"
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b Row) int {
		if c := strings.Compare(a.Metric, b.Metric); c != 0 {
			return c
		}
		if c := strings.Compare(a.Method, b.Method); c != 0 {
			return c
		}
		switch {
		case a.X < b.X:
			return -1
		case a.X > b.X:
			return 1
		}
		return 0
	})
	return out
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// accuracyBar is the error bar of an accuracy row measured on nTest test
// images: the binomial standard error √(a(1−a)/n_test) of the test set's
// draw, which even one trial has, with the standard error over trials
// (training randomness; none for one trial) in quadrature. The figure's
// bars and the verdict's comparisons use it.
func accuracyBar(row Row, nTest int) float64 {
	se := row.SE
	if row.Trials < 2 {
		se = 0
	}
	return math.Sqrt(row.Mean*(1-row.Mean)/float64(nTest) + se*se)
}
