package experiment

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dstein/dstein/infer"
	"github.com/dstein/dstein/internal/safeio"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/modelfile"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/model/uai"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/dhmc"
	"github.com/dstein/dstein/sampler/dmala"
	"github.com/dstein/dstein/sampler/gfsvgd"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/sampler/gwg"
	"github.com/dstein/dstein/sampler/iid"
	"github.com/dstein/dstein/sampler/pt"
	"github.com/dstein/dstein/sampler/sw"
	"github.com/dstein/dstein/transform"
)

// Why one file of about 560 lines: the suite's targets and its methods are two registries
// read together (every method runs on every target at one budget).

// The suite's two shipped UAI networks, made by a generator in the style
// of two families of the UAI inference competitions (EXPERIMENTS.md,
// "The benchmark suite").
//
//go:embed suitedata/*.uai
var suiteData embed.FS

// SuiteBudget is the cost every method of the suite gets per sample, in
// sweeps: one sweep is d single-site conditionals (Gibbs), d proposals
// (Gibbs-with-Gradients), one all-variable proposal (DMALA), one cluster
// update (Swendsen–Wang), one block sweep of an RBM's visible and hidden
// units (Gibbs, and tempering's block kernel), one GF-SVGD iteration (a
// log p* and a surrogate score per particle), one leapfrog step of DHMC; a
// round of parallel tempering over K temperatures costs K. A method whose
// cost per iteration is chosen during the run (tempering with an
// auto-sized ladder) gets the same budget in model evaluations: d per
// sweep, d + M for an RBM's block sweep (sweepEvals). Wall time is
// reported beside.
const SuiteBudget = 400

// suiteN is the number of samples every method returns.
const suiteN = 200

// suiteMethod is one contender of the suite: a pipeline at the budget.
type suiteMethod struct {
	name, label string
	// candidate methods may become the default: they run on any model.
	candidate bool
	build     func(budget int) sampler.Pipeline
	// trials, when > 0, caps the method's trials (a method whose wall time
	// per run is far above the others').
	trials int
	// chains, when > 0, runs the method as that many long chains whose
	// thinned draws make the n samples, at the same total cost: the
	// pipeline's iterations are then set by keep.
	chains int
	// sweepsPerIter is the cost of one iteration in sweeps (K for
	// parallel tempering), for the chains' length.
	sweepsPerIter int
	// herd, for a long-chain method, keeps every herdThin-th state of the
	// second half of the chains and herds them to the n samples
	// (infer.Compression), instead of thinning them to n draws.
	herdThin int
	// evalBudget runs a long-chain method for the budget's model
	// evaluations (infer.Keep.Budget) instead of a number of iterations:
	// for samplers whose iterations cost what the run chooses.
	evalBudget bool
	// preset names the infer preset that the method runs at the suite's
	// budget ("" when it is none): its stages are the preset's with the
	// budget's iterations, its chains the preset's
	// (TestSuiteMethodsRunTheirPresets holds them to it, so that a change
	// of a preset cannot leave the suite measuring the old one).
	preset string
}

// keep returns the draws of a long-chain method: the n·budget sweeps
// shared by its chains, the first half warm-up, the second half thinned
// to n/chains draws per chain.
func (m suiteMethod) keep(budget, n int, mod model.Model) infer.Keep {
	draws := n / m.chains
	if m.evalBudget {
		return infer.Keep{Draws: draws, Budget: int64(n) * int64(budget) * sweepEvals(mod)}
	}
	iters := n * budget / (m.chains * max(1, m.sweepsPerIter))
	thin := max(1, iters/2/draws)
	if m.herdThin > 0 {
		thin = m.herdThin
		draws = max(1, iters/2/thin)
	}
	return infer.Keep{Warmup: iters - draws*thin, Draws: draws, Thin: thin}
}

// sweepEvals is the model evaluations of one sweep of m: d conditionals,
// and for an RBM (swept by block Gibbs) the draws of its M hidden units too.
func sweepEvals(m model.Model) int64 {
	e := int64(m.Dim())
	if r, ok := m.(interface{ Hidden() int }); ok {
		e += int64(r.Hidden())
	}
	return e
}

// compression returns the compression of a herding method to n samples.
func (m suiteMethod) compression(n int) infer.Compression {
	if m.herdThin == 0 {
		return infer.Compression{}
	}
	return infer.Compression{Rule: infer.RuleHerding, N: n}
}

func single(method string, set sampler.Settings, iters int) sampler.Pipeline {
	p, err := sampler.Single(method, set, iters)
	if err != nil {
		panic(err) // every suite method is registered
	}
	return p
}

// gwgSuiteTrials caps Gibbs-with-Gradients' trials: when the suite was run,
// each of its proposals computed the relaxation's gradient over all d
// variables, so at equal sweeps a run took 20–40 s on the 10×10 grids
// against 0.1–3 s for the others (2 cores). The incremental GWG is about
// 10× faster on the grids (2.5–3× on RBMs) and draws the same chains up to
// rounding (on the zero-field grids a few accept decisions differ); the cap
// stays so that the journal's trials keep their meaning.
const gwgSuiteTrials = 10

// ptStratSweeps is the number of stratified sweeps after parallel
// tempering in the pt-strat contender.
const ptStratSweeps = 40

// suiteMethods are the suite's contenders. The hybrid is the first
// round's default preset (100 GF-SVGD iterations, then stratified sweeps)
// with its sweeps extended to the budget.
func suiteMethods() []suiteMethod {
	ptIters := func(b int) int { return max(1, b/pt.DefaultLadder) }
	return []suiteMethod{
		{name: suiteReference, label: "exact i.i.d.", candidate: false, build: func(int) sampler.Pipeline { return single(iid.Name, nil, 1) }},
		{name: suiteBaseline, label: "Gibbs", candidate: true, build: func(b int) sampler.Pipeline { return single(gibbs.Name, nil, b) }},
		{name: "pt", label: "parallel tempering", candidate: true, build: func(b int) sampler.Pipeline {
			return single(pt.Name, &pt.Settings{Tune: max(1, ptIters(b)/4)}, ptIters(b))
		}},
		{name: "sw", label: "Swendsen–Wang", candidate: false, build: func(b int) sampler.Pipeline { return single(sw.Name, nil, b) }},
		{name: "gwg", label: "Gibbs-with-Gradients", candidate: true, build: func(b int) sampler.Pipeline { return single(gwg.Name, nil, b) }, trials: gwgSuiteTrials},
		{name: "dmala", label: "DMALA", candidate: true, build: func(b int) sampler.Pipeline { return single(dmala.Name, nil, b) }},
		{name: "dhmc", label: "DHMC", candidate: true, build: func(b int) sampler.Pipeline { return single(dhmc.Name, nil, max(1, b/8)) }},
		{name: "gfsvgd", label: "GF-SVGD (transport)", candidate: true, build: func(b int) sampler.Pipeline {
			p, _ := infer.Preset("transport")
			p.Stages = []sampler.Stage{{Method: gfsvgd.Name, Iters: b, Settings: p.Stages[0].Settings}}
			return p
		}, preset: "transport"},
		{name: "hybrid", label: "GF-SVGD + stratified Gibbs", candidate: true, build: func(b int) sampler.Pipeline {
			p, _ := infer.Preset("transport")
			return sampler.Pipeline{Stages: []sampler.Stage{
				{Method: gfsvgd.Name, Iters: infer.HybridIters, Settings: p.Stages[0].Settings},
				{Method: gibbs.Name, Iters: max(1, b-infer.HybridIters), Settings: &gibbs.Settings{Stratified: true}},
			}}
		}, preset: "hybrid"},
		{name: "strat-gibbs", label: "stratified Gibbs", candidate: true, build: func(b int) sampler.Pipeline {
			return single(gibbs.Name, &gibbs.Settings{Stratified: true}, b)
		}},
		{name: "pt-strat", label: "parallel tempering, then stratified Gibbs", candidate: true, build: func(b int) sampler.Pipeline {
			// 40 stratified sweeps of the tempered chains' final states;
			// the rest of the budget in rounds of 8 temperatures.
			rounds := max(1, (b-ptStratSweeps)/pt.DefaultLadder)
			return sampler.Pipeline{Stages: []sampler.Stage{
				{Method: pt.Name, Iters: rounds, Settings: &pt.Settings{Tune: max(1, rounds/4)}},
				{Method: gibbs.Name, Iters: min(b, ptStratSweeps), Settings: &gibbs.Settings{Stratified: true}},
			}}
		}},
		{name: "gibbs-4chains", label: "Gibbs, 4 long chains, thinned draws", candidate: true, build: func(b int) sampler.Pipeline {
			return single(gibbs.Name, nil, b)
		}, chains: 4, sweepsPerIter: 1},
		{name: "pt-4chains", label: "parallel tempering, 4 long chains, thinned draws (rounds one and two's default)", candidate: true, build: func(b int) sampler.Pipeline {
			return single(pt.Name, nil, b)
		}, chains: 4, sweepsPerIter: pt.DefaultLadder, preset: "tempering"},
		{name: "pt-8chains", label: "parallel tempering, 8 long chains, thinned draws", candidate: true, build: func(b int) sampler.Pipeline {
			return single(pt.Name, nil, b)
		}, chains: 8, sweepsPerIter: pt.DefaultLadder},
		{name: "pt-20chains", label: "parallel tempering, 20 long chains, thinned draws", candidate: true, build: func(b int) sampler.Pipeline {
			return single(pt.Name, nil, b)
		}, chains: 20, sweepsPerIter: pt.DefaultLadder},
		// Round three: the ladder sized by a pilot (plain chains when they
		// mix faster) and the best kernel per model (block Gibbs for RBMs,
		// Swendsen–Wang for ferromagnetic Ising models), at the budget's
		// evaluations.
		{name: "pt-auto", label: "parallel tempering, 4 long chains, ladder sized by a pilot, best kernel per model (the default since round three)", candidate: true, build: func(b int) sampler.Pipeline {
			return single(pt.Name, &pt.Settings{Auto: true, Kernel: pt.Best}, b)
		}, chains: 4, evalBudget: true, preset: infer.DefaultMethod},
		// Not a candidate for the default: its samples are not draws but
		// points picked to match the draws, so no diagnostic can check
		// them; users ask for them with the compact preset.
		{name: "pt-herd", label: "parallel tempering, 4 long chains, herded to n points (the compact preset)", build: func(b int) sampler.Pipeline {
			return single(pt.Name, nil, b)
		}, chains: 4, sweepsPerIter: pt.DefaultLadder, herdThin: infer.CompactChains.Thin, preset: "compact"},
	}
}

// The suite's reference and baseline: every method's ratios are taken to
// exact i.i.d. sampling's ("ratio_to_iid") and to Gibbs's
// ("ratio_to_gibbs"), and a default must never be much worse than Gibbs.
const (
	suiteReference = "exact"
	suiteBaseline  = "gibbs"
)

// SuiteMethodNames lists the suite's methods and candidates.
func SuiteMethodNames() []string {
	var out []string
	for _, m := range suiteMethods() {
		out = append(out, m.name)
	}
	return out
}

// selectSuiteMethods returns the suite's methods that the run selects
// (runner.selected), exact and gibbs always included: every ratio needs
// them.
func selectSuiteMethods(r *runner) []suiteMethod {
	var out []suiteMethod
	for _, m := range suiteMethods() {
		if r.selected(m.name) || m.name == suiteReference || m.name == suiteBaseline {
			out = append(out, m)
		}
	}
	return out
}

// rbm100Trials caps the trials of the d = 100 RBM, added to the suite after
// its full run: a trial of every method takes about 2 minutes there (GWG
// 75 s of it), so 60 trials would take two hours.
const rbm100Trials = 12

// suiteModel is one target of the suite.
type suiteModel struct {
	name, what string
	// hard marks the strongly coupled and multimodal targets.
	hard bool
	// modes marks ferromagnets whose magnetisation's sign splits the mass
	// into modes (couplings at or above the critical 0.44): the suite
	// scores their mode masses.
	modes bool
	m     model.Model
	// trials, when > 0, caps the target's trials (a target added after
	// the full run, whose runs are long).
	trials int
	// x is the target's number in the journal: 1, 2, … for the built-in
	// targets, uaiX of the name for a network of --uai.
	x float64
	// input marks a network of --uai: its exact answers are input-sized
	// work, held to the run's memory budget (Config.Budget).
	input bool
}

// uaiX numbers a --uai network by its name (1000 + a 20-bit FNV-1a hash),
// so that adding or removing networks never renumbers the others and a
// journal can be resumed with another set of networks.
func uaiX(name string) float64 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return float64(1000 + h.Sum32()%(1<<20))
}

// isingGridOf returns a side×side open grid with coupling j and the
// fields: constant h, or U(−spread, spread) (ising.UniformFields) when
// spread > 0.
func isingGridOf(side int, j, h, spread float64, seed uint64) (*ising.Ising, error) {
	if spread > 0 {
		return ising.RandomGrid(side, j, spread, seed)
	}
	f := make([]float64, side*side)
	for i := range f {
		f[i] = h
	}
	return ising.Grid(side, side, false, j, f)
}

// suiteModels returns the suite's targets at the mode's size, then the
// UAI networks of dir (when not empty).
func suiteModels(ctx context.Context, mode Mode, seed uint64, dir string, budget memlimit.Budget) (out []suiteModel, left []string, err error) {
	type spec struct {
		name, what string
		hard       bool
		build      func() (model.Model, error)
		trials     int
	}
	big, rbmD, rbmM, pottsSide := 10, 100, 25, 8
	if mode == Tiny {
		big, rbmD, rbmM, pottsSide = 5, 20, 5, 4
	}
	specs := []spec{
		{"grid4-weak", "4×4 Ising grid, J = 0.3, fields U(−0.3, 0.3)", false, func() (model.Model, error) { return isingGridOf(4, 0.3, 0, 0.3, seed) }, 0},
		{"grid10-fields", fmt.Sprintf("%d×%d Ising grid, J = 0.1, fields U(−0.3, 0.3)", big, big), false, func() (model.Model, error) { return isingGridOf(big, 0.1, 0, 0.3, seed) }, 0},
		{"rbm-weak", "Bernoulli RBM, d = 50, M = 10, W ~ N(0, 0.05)", false, func() (model.Model, error) { return rbm.Random(50, 10, math.Sqrt(0.05), 1, seed) }, 0},
		{"categorical", "8 independent categorical variables of 5 states, probabilities drawn uniformly from the simplex", false, func() (model.Model, error) {
			return categorical.RandomSimplex(8, 5, seed)
		}, 0},
		{"grid10-critical", fmt.Sprintf("%d×%d Ising grid at the critical coupling J = 0.44, no field", big, big), true, func() (model.Model, error) { return isingGridOf(big, 0.44, 0, 0, seed) }, 0},
		{"grid4-strong", "4×4 Ising grid, J = 0.8, fields 0.015 (two modes)", true, func() (model.Model, error) { return isingGridOf(4, 0.8, 0.015, 0, seed) }, 0},
		{"grid10-strong", fmt.Sprintf("%d×%d Ising grid, J = 0.8, fields 0.003 (two modes)", big, big), true, func() (model.Model, error) { return isingGridOf(big, 0.8, 0.003, 0, seed) }, 0},
		{"spin-glass", "8×8 ±J spin glass, J = ±1, no field", true, func() (model.Model, error) { return ising.SpinGlassGrid(8, 1, seed) }, 0},
		{"rbm-strong", "Bernoulli RBM, d = 20, M = 6, W ~ N(0, 1.5²) (several modes)", true, func() (model.Model, error) { return rbm.Random(20, 6, 1.5, 1, seed) }, 0},
		{"uai-grid7", "7×7 grid network in the style of UAI Grids (couplings U(−2, 2))", true, func() (model.Model, error) { return embeddedUAI("grid7.uai") }, 0},
		{"uai-potts12", "12 variables of 5 states, random pairwise potentials (in the style of UAI ObjectDetection)", true, func() (model.Model, error) { return embeddedUAI("potts12.uai") }, 0},
		// Added after the first 60-trial run (last, so that the others keep
		// their numbers in the journal): the paper's RBM.
		{"rbm-100", fmt.Sprintf("the paper's Bernoulli RBM, d = %d, M = %d, W ~ N(0, 0.05)", rbmD, rbmM), false, func() (model.Model, error) { return rbmModel(rbmD, rbmM, seed) }, rbm100Trials},
		// Added in round three (last, for the same reason): a
		// ferromagnetic Potts lattice at its transition, where single-site
		// moves slow down (exact pairs by variable elimination, 4 s).
		{"potts8-critical", fmt.Sprintf("%d×%d ferromagnetic 3-state Potts grid at the critical coupling J = log(1 + √3) ≈ 1.005, no field", pottsSide, pottsSide), true, func() (model.Model, error) {
			return potts.Grid(pottsSide, pottsSide, false, 3, math.Log(1+math.Sqrt(3)), nil)
		}, 0},
	}
	for _, s := range specs {
		if mode == Quick && s.trials > 0 {
			// A target with capped trials is an expensive one (the d = 100
			// RBM: half of a quick run's time); quick runs leave it out,
			// as they leave out Gibbs-with-Gradients.
			continue
		}
		m, err := s.build()
		if err != nil {
			return nil, nil, fmt.Errorf("suite model %s: %w", s.name, err)
		}
		out = append(out, suiteModel{name: s.name, what: s.what, hard: s.hard, modes: s.hard && isFerromagnet(m), m: m, x: float64(len(out) + 1), trials: s.trials})
	}
	if dir == "" {
		return out, nil, nil
	}
	nets, err := uaiDirModels(ctx, dir, budget)
	if err != nil {
		return nil, nil, err
	}
	if mode != Full {
		// The reduced runs' shorter chains from a random start do not find
		// a state of positive probability in a large network of
		// deterministic tables (Promedus_12: 531 free variables; Gibbs
		// failed the tiny run with its 40 sweeps, DMALA the quick one
		// with its 200 proposals): tiny and quick runs keep the networks
		// of at most tinyUAIVars free variables.
		kept := nets[:0]
		for _, sm := range nets {
			if sm.m.Dim() <= tinyUAIVars {
				kept = append(kept, sm)
			} else {
				left = append(left, fmt.Sprintf("%s (%d free variables)", sm.name, sm.m.Dim()))
			}
		}
		nets = kept
	}
	return append(out, nets...), left, nil
}

// tinyUAIVars is the most free variables of a --uai network that a tiny
// or quick suite runs.
const tinyUAIVars = 200

func embeddedUAI(name string) (model.Model, error) {
	data, err := suiteData.ReadFile("suitedata/" + name)
	if err != nil {
		return nil, err
	}
	return uai.Read(bytes.NewReader(data))
}

// uaiDirModels reads every NAME.uai of dir, with NAME.uai.evid as its
// evidence when present, in name order.
func uaiDirModels(ctx context.Context, dir string, budget memlimit.Budget) ([]suiteModel, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.uai"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("--uai %s: no .uai files there", dir)
	}
	sort.Strings(paths)
	var out []suiteModel
	for _, p := range paths {
		evid := ""
		if _, err := os.Stat(p + ".evid"); err == nil {
			evid = p + ".evid"
		}
		l, err := modelfile.OpenLimit(ctx, p, evid, budget)
		if err != nil {
			return nil, err
		}
		what := "UAI network " + filepath.Base(p)
		if len(l.Evidence) > 0 {
			what += fmt.Sprintf(" with %d observed variables", len(l.Evidence))
		}
		name := "uai:" + strings.TrimSuffix(filepath.Base(p), ".uai")
		out = append(out, suiteModel{name: name, what: what, hard: true, m: l.Model, x: uaiX(name), input: true})
	}
	return out, nil
}

// applies reports whether every stage of p can run on m (Swendsen–Wang
// needs a ferromagnetic model; exact sampling a small or structured one),
// by building each stage's sampler for one chain.
func applies(p sampler.Pipeline, m model.Model) bool {
	t, err := transform.ForModel(nil, m)
	if err != nil {
		return false
	}
	prob := sampler.NewProblem(m, t, 1, sampler.Init{}, rng.NewKey(0))
	for _, st := range p.Resolved().Stages {
		meth, err := sampler.Lookup(st.Method)
		if err != nil {
			return false
		}
		q := *prob
		if !meth.Continuous {
			q.X = nil
		}
		if meth.OneShot {
			continue // the exact method: the suite gives it the truth
		}
		if _, err := meth.New(&q, st.Settings); err != nil {
			return false
		}
	}
	return true
}

// isFerromagnet reports whether m is an Ising model with every coupling ≥
// 0 (its modes are the signs of the magnetisation).
func isFerromagnet(m model.Model) bool {
	g, ok := m.(*ising.Ising)
	if !ok {
		return false
	}
	for _, e := range g.Edges() {
		if e.Coupling < 0 {
			return false
		}
	}
	return true
}

// The suite runs 60 trials (Gibbs-with-Gradients 10: about 45 minutes of
// the 2-core machine); --quick runs 2 at half the budget and half the
// samples and leaves Gibbs-with-Gradients and the d = 100 RBM out.
const suiteTrials = 60

func init() {
	register(&Experiment{
		Name:        "suite",
		Title:       "benchmark suite: every method at equal cost on easy and hard targets, scored beyond the means",
		Trials:      suiteTrials,
		QuickTrials: 2,
		Setting:     "model",
		UsesUAI:     true,
		MethodNames: SuiteMethodNames,
		Settings:    SuiteSettings{},
		// The journals of rounds one and two scored the draws'
		// frequencies and do not record the option.
		Legacy: map[string]float64{"estimates": 0},
		body:   runSuite,
	})
}

// SuiteSettings are the options of the suite.
type SuiteSettings struct {
	// N is the number of samples every method returns; 0 means suiteN
	// (200), so that journals written before the option existed still
	// resume.
	N int `opt:"n" flag:"n,positive" help:"the number of samples every method returns (default 200; each n needs its own --out-dir)"`
	// Estimates is how every method's means are scored.
	Estimates SuiteEstimates `opt:"estimates" flag:"estimates" help:"how every method's means are scored: rao-blackwell (as dstein sample reports them) or frequencies (the draws' counts, as the suite's journals of rounds one and two)"`
}

// SuiteEstimates is infer.Estimates as a suite option: the journal
// records 1 for Rao–Blackwellised means (as users see them, where the
// draws allow) and 0 for the draws' frequencies.
type SuiteEstimates struct{ infer.Estimates }

// UnmarshalText reads rao-blackwell or frequencies.
func (e *SuiteEstimates) UnmarshalText(b []byte) error {
	v, err := infer.ParseEstimates(string(b))
	e.Estimates = v
	return err
}

// Option is 1 for Rao–Blackwellised means, 0 for frequencies.
func (e SuiteEstimates) Option() float64 {
	if e.Estimates == infer.Frequencies {
		return 0
	}
	return 1
}

// SetOption reads Option's number back.
func (e *SuiteEstimates) SetOption(x float64) error {
	switch x {
	case 0:
		e.Estimates = infer.Frequencies
	case 1:
		e.Estimates = infer.RaoBlackwell
	default:
		return fmt.Errorf("%v: want 1 (rao-blackwell) or 0 (frequencies)", x)
	}
	return nil
}

func runSuite(r *runner) (*Result, error) {
	models, left, err := suiteModels(r.ctx, r.cfg.Mode, r.cfg.Seed, r.cfg.UAIDir, r.cfg.Budget)
	if err != nil {
		return nil, err
	}
	if len(left) > 0 {
		r.logf("%s: %s runs leave out the networks of more than %d free variables: %s", r.name, r.cfg.Mode, tinyUAIVars, strings.Join(left, ", "))
	}
	r.xNames = map[float64]string{}
	for _, sm := range models {
		r.xNames[sm.x] = sm.name
	}
	budget, n := SuiteBudget, suiteN
	switch r.cfg.Mode {
	case Quick:
		// Half the budget and half the samples: a quarter of the work of
		// a full trial, so that the quick run stays under a minute on 2
		// cores (a full trial takes about 2 minutes there).
		budget, n = SuiteBudget/2, suiteN/2
	case Tiny:
		budget, n = 40, 30
	}
	if v := settingsOf[SuiteSettings](r).N; v > 0 {
		n = v
		if n < 20 {
			return nil, fmt.Errorf("--n %d: the suite's longest-chain method runs 20 chains, so n must be at least 20", n)
		}
	}
	methods := selectSuiteMethods(r)
	for _, mt := range methods {
		rec := struct {
			Pipeline      sampler.Pipeline `json:"pipeline"`
			Budget        int              `json:"sweeps_per_sample"`
			Chains        int              `json:"chains,omitempty"`
			SweepsPerIter int              `json:"sweeps_per_iteration,omitempty"`
			HerdThin      int              `json:"herd_thin,omitempty"`
			Trials        int              `json:"trials_cap,omitempty"`
			EvalBudget    bool             `json:"evaluation_budget,omitempty"`
		}{mt.build(budget).Resolved(), budget, mt.chains, mt.sweepsPerIter, mt.herdThin, mt.trials, mt.evalBudget}
		if err := r.describe(mt.name, rec); err != nil {
			return nil, err
		}
	}
	var targets []*suiteTarget
	for _, sm := range models {
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		tg, err := newSuiteTarget(r, sm, n)
		if err != nil {
			return nil, fmt.Errorf("suite model %s: %w", sm.name, err)
		}
		r.logf("%s: ground truth of %s (%s) in %.1f s", r.name, sm.name, tg.truthNote, time.Since(start).Seconds())
		targets = append(targets, tg)
	}
	for tr := range r.trials {
		if !r.inShard(tr) {
			continue
		}
		key := r.trialKey(tr)
		for _, tg := range targets {
			for _, mt := range methods {
				p := mt.build(budget)
				if !tg.runs(mt.name, p) || (mt.trials > 0 && tr >= mt.trials) || (r.cfg.Mode == Quick && mt.trials > 0) || (tg.trials > 0 && tr >= tg.trials) {
					r.methods[mt.name] = true // known, so that its journal rows are not foreign
					continue
				}
				_, err := r.trial(mt.name, tg.x, tr, func() (map[string]float64, error) {
					return tg.score(r, mt, p, budget, key)
				})
				if err != nil {
					return nil, err
				}
			}
		}
		r.trialDone(tr)
	}
	rows := r.summarize()
	return suiteResult(r, rows, targets, methods, budget, n)
}

// uaiInputs returns the SHA-256 digest of every .uai and .evid file of
// dir by base name.
func uaiInputs(dir string) (map[string]string, error) {
	out := map[string]string{}
	for _, pat := range []string{"*.uai", "*.uai.evid"} {
		paths, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			data, err := safeio.ReadFile(p, "UAI network", 1<<30)
			if err != nil {
				return nil, err
			}
			sum := sha256.Sum256(data)
			out[filepath.Base(p)] = hex.EncodeToString(sum[:])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--uai %s: no .uai files there", dir)
	}
	return out, nil
}
