package experiment

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/internal/shellquote"
)

// Reproduction is one published result of EXPERIMENTS.md: an experiment
// with the settings that made the numbers committed under docs/results/ID.
type Reproduction struct {
	// ID names the result and its directory (docs/results/ID).
	ID string
	// Name is the experiment.
	Name string
	// Claim is what the result tests (a claim of the paper, or ours).
	Claim string
	// Trials overrides the experiment's default number of trials in a
	// full run (0: the default); quick runs use the experiment's quick
	// trials.
	Trials int
	// Settings are the experiment's options of the run (--field, --n,
	// …): a value of its settings type, nil for its defaults.
	Settings any
	// FullSettings, when set, replace Settings in the full run: they set
	// its budget (the BNN experiment's epochs and training examples);
	// quick and tiny runs keep their mode's.
	FullSettings any
	// Methods, for the suite, selects methods (nil: all).
	Methods []string
	// Variants, for variants-ising and variants-rbm, names the GF-SVGD
	// variants (nil: DefaultVariants).
	Variants []string
	// Needs names the input a run needs and only runs when given: "uai"
	// for a directory of UAI networks.
	Needs string
	// FullTime is the wall time of the committed full run on this
	// project's 2-core machine, for the --quick runs to say what a full
	// run costs.
	FullTime string
	// judge computes the verdict on Claim from the result's rows; nil
	// for the questions that EXPERIMENTS.md answers in prose.
	judge judge
}

// Reproductions lists every published result, in the order of
// EXPERIMENTS.md.
func Reproductions() []Reproduction {
	herdMethods := []string{"pt-herd", "pt-4chains", "gibbs-4chains", "gfsvgd", "hybrid"}
	// The suite's runs of round two, scored by the draws' frequencies:
	// only the main suite was rerun (round three) with the means as users
	// see them.
	freq := func(n int) SuiteSettings {
		return SuiteSettings{N: n, Estimates: SuiteEstimates{infer.Frequencies}}
	}
	// The variant study of EXPERIMENTS.md: every variant screened on 5
	// trials, the finalists (with the hybrid preset and the sweeps-alone
	// ablations) on 20.
	screenVariants := []string{"transport", "bw16", "bw16-100", "bw16-50", "bw32-100", "bw4-100", "bw16-lr0.2-100",
		"tau0.1", "beta0.2-anneal300", "beta0.2-anneal300-bw16", "beta0.1",
		"bw16-100+ssweeps5", "bw16-100+ssweeps10", "ssweeps20-only"}
	finalVariants := []string{"bw16-200", "transport-100", "transport-100+sweeps10", "transport-100+ssweeps10", "transport-100+ssweeps30",
		"sweeps10-only", "ssweeps10-only", "ssweeps30-only", "sweeps30-only"}
	return []Reproduction{
		{ID: "ising-n", Name: "ising-n", Trials: 20, FullTime: "20 CPU-minutes (27 min on 2 cores shared with other runs)",
			Claim: "GF-SVGD has lower MSE than Gibbs and exact MC on the 10×10 Ising grid, with MSE falling as O(1/n)", judge: judgeLower("mse", true, "gibbs", "exact")},
		{ID: "ising-sigma", Name: "ising-sigma", FullTime: "16 CPU-minutes (20 min on 2 cores shared with other runs)",
			Claim: "as the coupling σ_p → 0, GF-SVGD outperforms MC and Gibbs most", judge: judgeSigma},
		{ID: "rbm-n", Name: "rbm-n", Trials: 20, FullTime: "about 75 CPU-minutes (65 min on 2 cores shared with other runs)",
			Claim: "GF-SVGD has lower MMD than Gibbs and DHMC on the d = 100 RBM", judge: judgeLower("mmd2", false, "gibbs", "dhmc")},
		{ID: "rbm-d", Name: "rbm-d", Trials: 20, FullTime: "32 CPU-minutes (23 min on 2 cores shared with other runs)",
			Claim: "GF-SVGD is the least sensitive to the dimension d", judge: judgeDimension},
		{ID: "transform", Name: "transform", FullTime: "31 CPU-minutes",
			Claim: "a Gaussian base gives an easier p_c than mixture bases", judge: judgeBase},
		{ID: "categorical", Name: "categorical", FullTime: "8 CPU-minutes (11 min on 2 cores shared with other runs)",
			Claim: "GF-SVGD recovers the appendix's 1-D categorical distribution", judge: judgeCategorical},
		{ID: "ising-n-field", Name: "ising-n", Trials: 20, Settings: IsingNSettings{Field: 0.2}, FullTime: "22 CPU-minutes (14 min on 2 cores)",
			Claim: "(ours) the Ising result with fields, whose means are not all zero; a particle method that beats i.i.d. sampling at equal n", judge: judgeBeatsIID("mse", particleMethods)},
		{ID: "variants-ising-screen", Name: "variants-ising", Trials: 5, Variants: screenVariants, FullTime: "1.9 CPU-minutes (80 s on 2 cores)",
			Claim: "(ours) a screen of GF-SVGD variants on the Ising grid with fields: some variant beats i.i.d. sampling (5 trials)", judge: judgeBeatsIID("mse", gfOnly)},
		{ID: "variants-rbm-screen", Name: "variants-rbm", Trials: 5, Variants: screenVariants, FullTime: "2.7 CPU-minutes (2 min on 2 cores)",
			Claim: "(ours) a screen of GF-SVGD variants on the d = 100 RBM: some variant beats i.i.d. sampling (5 trials)", judge: judgeBeatsIID("mse", gfOnly)},
		{ID: "variants-ising-coord", Name: "variants-ising", Trials: 5, Variants: []string{"coord-200"}, FullTime: "2.8 CPU-minutes (3.2 min on 2 cores shared with another run)",
			Claim: "(ours) GF-SVGD with the coordinatewise kernel beats i.i.d. sampling on the Ising grid with fields (5 trials: n²d exponentials per iteration)", judge: judgeBeatsIID("mse", gfOnly)},
		{ID: "variants-rbm-coord", Name: "variants-rbm", Trials: 5, Variants: []string{"coord-200"}, FullTime: "3.0 CPU-minutes (3.2 min on 2 cores shared with another run)",
			Claim: "(ours) GF-SVGD with the coordinatewise kernel beats i.i.d. sampling on the d = 100 RBM (5 trials)", judge: judgeBeatsIID("mse", gfOnly)},
		{ID: "variants-ising", Name: "variants-ising", Variants: finalVariants, FullTime: "1.8 CPU-minutes (65 s on 2 cores)",
			Claim: "(ours) which GF-SVGD variant beats i.i.d. sampling on the Ising grid with fields: the finalists, the hybrid preset and the ablations (20 trials)", judge: judgeBeatsIID("mse", gfOnly)},
		{ID: "variants-rbm", Name: "variants-rbm", Variants: finalVariants, FullTime: "4.0 CPU-minutes (2.5 min on 2 cores)",
			Claim: "(ours) which GF-SVGD variant beats i.i.d. sampling on the d = 100 RBM: the finalists, the hybrid preset and the ablations (20 trials)", judge: judgeBeatsIID("mse", gfOnly)},
		{ID: "suite", Name: "suite", FullTime: "135 CPU-minutes (86 min on 2 cores, shared with other work for part of it)",
			Claim: "(ours) dstein's default is the sampler the suite's rule chooses on easy and hard targets at equal cost: never worse than 1.5× Gibbs, the two-mode masses right, the smallest worst ratio to the best method", judge: judgeDefault(suiteDefault)},
		{ID: "suite-n20", Name: "suite", Settings: freq(20), Methods: herdMethods, FullTime: "6 CPU-minutes (4.6 min on 2 cores)",
			Claim: "(ours) n = 20 points that represent p better than 20 i.i.d. draws", judge: judgePoints},
		{ID: "suite-n50", Name: "suite", Settings: freq(50), Methods: herdMethods, FullTime: "about 12 CPU-minutes (10 min on 2 cores)",
			Claim: "(ours) n = 50 points that represent p better than 50 i.i.d. draws", judge: judgePoints},
		{ID: "suite-uai", Name: "suite", Trials: 16, Needs: "uai", Settings: freq(0), FullTime: "104 CPU-minutes (68 min on 2 cores)",
			Methods: []string{"pt", "dmala", "dhmc", "gfsvgd", "hybrid", "strat-gibbs", "pt-strat", "gibbs-4chains", "pt-4chains", "pt-8chains", "pt-20chains"},
			Claim:   "(ours) on the UAI networks of a directory (reproduce --uai DIR) some candidate for the default meets both of its conditions (without GWG, minutes a run on the larger networks, and Swendsen–Wang, Ising models only)", judge: judgeDefault("")},
		{ID: "suite-uai-herd", Name: "suite", Trials: 16, Needs: "uai", Settings: freq(0), Methods: []string{"pt-herd", "pt-4chains"}, FullTime: "about 13 min on 2 cores (11 min of sampling by the runs' own timings, and the ground truths)",
			Claim: "(ours) representative points (the compact preset) on the UAI networks of a directory (reproduce --uai DIR) represent p better than as many i.i.d. draws", judge: judgePoints},
		{ID: "discs", Name: "discs", FullTime: "47 min on 2 cores, 118 MB peak (run in two parts)",
			Claim: "(ours) dstein's samplers on DISCS's targets with DISCS's metric, beside DISCS's published numbers", judge: judgeDISCS},
		{ID: "discs-long", Name: "discs", Settings: DISCSSettings{Target: 1, Length: 5}, FullTime: "34 min on 2 cores (shared with other work for part of it), 285 MB peak",
			Claim: "(ours) DISCS's Ising lattice at λ = 0.5 with runs 5× as long (10,000 kept steps): the per-chain ESS's upward bias and the bulk ESS of chains that mix", judge: judgeDISCS},
		{ID: "gof-level", Name: "gof-level", FullTime: "3.5 CPU-minutes (105 s as 4 Slurm tasks on 2 cores)",
			Claim: "GF-KSD, DKSD and MMD hold their level", judge: judgeLevel([]string{"gfksd", "dksd", "mmd"})},
		{ID: "gof-rbm-sigma", Name: "gof-rbm-sigma", Trials: 50, FullTime: "19 CPU-minutes (18 min on 2 cores)",
			Claim: "GF-KSD is more powerful than DKSD and MMD against RBM weight noise", judge: judgePower(0, true)},
		{ID: "gof-rbm-n", Name: "gof-rbm-n", Trials: 50, FullTime: "4.3 min on 2 cores",
			Claim: "GF-KSD is more powerful than DKSD and MMD, especially at small n", judge: judgePower(0, false)},
		{ID: "gof-ising-temp", Name: "gof-ising-temp", Trials: 20, FullTime: "3.2 min on 2 cores",
			Claim: "GF-KSD detects a change of the Ising model's temperature", judge: judgeDetects},
		{ID: "gof-ising-n", Name: "gof-ising-n", FullTime: "6.9 min on 2 cores",
			Claim: "GF-KSD's power against n on the Ising grid (T = 20 against T' = 15)", judge: judgePowerGrows},
		{ID: "bnn", Name: "bnn", FullSettings: BNNSettings{Epochs: 1, Train: 20000}, FullTime: "12 CPU-minutes (9 min on 2 cores)",
			Claim: "GF-SVGD ensembles of binarized networks beat bagging and boosting, and ensembles beat single networks", judge: judgeEnsembles},
	}
}

// GetReproduction returns the published result with the given ID.
func GetReproduction(id string) (Reproduction, error) {
	var ids []string
	for _, p := range Reproductions() {
		if p.ID == id {
			return p, nil
		}
		ids = append(ids, p.ID)
	}
	return Reproduction{}, fmt.Errorf("unknown result %q; want one of %s", id, strings.Join(ids, ", "))
}

// Config returns the configuration of the run into out in the given mode
// (quick and tiny runs take their mode's number of trials).
func (p Reproduction) Config(out string, mode Mode) Config {
	cfg := Config{Out: out, Seed: 1, Trials: p.Trials, Mode: mode, Settings: p.settings(mode), Methods: p.Methods, Variants: p.Variants}
	if mode != Full {
		cfg.Trials = 0
	}
	return cfg
}

// settings returns the settings of a run in the given mode.
func (p Reproduction) settings(mode Mode) any {
	if mode == Full && p.FullSettings != nil {
		return p.FullSettings
	}
	return p.Settings
}

// Command is the dstein command line of the run into out in the given
// mode, each word quoted for a POSIX shell where it needs it: the options
// that differ from the experiment's defaults, in the order of their keys.
func (p Reproduction) Command(out string, mode Mode) string {
	args := []string{"dstein", "experiment", p.Name}
	if mode != Full {
		args = append(args, "--"+mode.String())
	} else if p.Trials > 0 {
		args = append(args, "--trials", strconv.Itoa(p.Trials))
	}
	e, err := Get(p.Name)
	if err != nil {
		panic(err) // TestReproductions fails first
	}
	flags, err := e.Flags(p.settings(mode))
	if err != nil {
		panic(fmt.Sprintf("result %s: %v", p.ID, err)) // TestReproductions fails first
	}
	args = append(args, flags...)
	if len(p.Methods) > 0 {
		args = append(args, "--methods", strings.Join(p.Methods, ","))
	}
	if len(p.Variants) > 0 {
		args = append(args, "--variants", strings.Join(p.Variants, ","))
	}
	if p.Needs == "uai" {
		args = append(args, "--uai", "UAI_DIR")
	}
	return shellquote.Join(append(args, "--out-dir", out))
}

// Match returns the published result that a run of experiment name with
// cfg reproduces (the same options, methods and variants; any number of
// trials), if there is one, for its claim and verdict.
func Match(name string, cfg Config) (Reproduction, bool) {
	for _, p := range Reproductions() {
		if p.Name != name {
			continue
		}
		want := p.Config(cfg.Out, cfg.Mode)
		e, err := Get(name)
		if err != nil {
			return Reproduction{}, false
		}
		a, err1 := e.encode(want.Settings)
		b, err2 := e.encode(cfg.Settings)
		if err1 == nil && err2 == nil && maps.Equal(a, b) && slices.Equal(want.Methods, cfg.Methods) && slices.Equal(want.Variants, cfg.Variants) {
			return p, true
		}
	}
	return Reproduction{}, false
}
