package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dstein/dstein/diag"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/report"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/dlmc"
	"github.com/dstein/dstein/sampler/dmala"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/sampler/gwg"
	"github.com/dstein/dstein/sampler/pas"
	"github.com/dstein/dstein/sampler/sw"
	"github.com/dstein/dstein/transform"
)

// Why one file of about 560 lines: DISCS's targets, its published numbers and its metric
// are one benchmark; the published table must sit beside the code that compares with it.

func init() {
	register(&Experiment{
		Name:        "discs",
		Title:       "DISCS's targets and metric: per-chain ESS of the distance to a reference state, per step, per evaluation and per second, beside DISCS's published numbers",
		Trials:      1,
		QuickTrials: 1,
		Setting:     "target",
		Settings:    DISCSSettings{},
		MethodNames: discsMethodNames,
		body:        runDISCS,
	})
}

// DISCSSettings are the DISCS experiment's options.
type DISCSSettings struct {
	Device DeviceOption `opt:"device" flag:"device" help:"cuda runs each method on an NVIDIA GPU where it has a path there that takes the model (gfsvgd on RBMs, gibbs, pt by the site kernel on Ising and Potts models or the block kernel on RBMs), the others on the CPU"`
	// Length multiplies every run's iterations (0: 1), warm-up included:
	// tfp's per-chain estimate is biased upward on chains not much longer
	// than their mixing time, and R̂ says where they are too short.
	Length int `opt:"length" flag:"length,positive" help:"multiply every run's iterations, warm-up included, by this factor (default 1): longer chains for the per-chain ESS's bias and R̂"`
	// Target runs only the target whose setting is Target (0: all).
	Target int `opt:"target,select" flag:"target,positive" help:"run only this target: 1 Ising λ = 0.5, 2 Ising λ = 1, 3 categorical, 4 Potts (default: all)"`
}

// Check refuses a target DISCS does not have (ParseSettings calls it, so
// that --target 9 is a bad command line).
func (s DISCSSettings) Check() error {
	if s.Target > len(discsTargets(Full)) {
		return fmt.Errorf("--target %d: DISCS has no such target; want 1 (Ising λ = 0.5), 2 (Ising λ = 1), 3 (categorical) or 4 (Potts)", s.Target)
	}
	return nil
}

// discsAllMethods lists the methods of every DISCS target, each once
// (as the first target kind that runs it defines it).
func discsAllMethods() []discsMethod {
	var out []discsMethod
	for _, kind := range []string{"binary", "categorical", "potts"} {
		for _, m := range discsMethods(kind) {
			if !slices.ContainsFunc(out, func(o discsMethod) bool { return o.name == m.name }) {
				out = append(out, m)
			}
		}
	}
	return out
}

// discsMethodNames lists the methods of every DISCS target.
func discsMethodNames() []string {
	var out []string
	for _, m := range discsAllMethods() {
		out = append(out, m.name)
	}
	return out
}

// discsChains is DISCS's batch size: the chains of every run, and
// discsKeptSteps the steps of its runs that its ESS is computed over (the
// second half of 100,000).
const (
	discsChains    = 100
	discsKeptSteps = 50000
)

func meanOf(v []float64) float64 {
	m, _ := meanSE(v)
	return m
}

// discsTarget is one of DISCS's models as DISCS defines it.
type discsTarget struct {
	dim   int     // its variables
	x     float64 // the table's setting
	key   string  // the key of its published rows (discsPublished); "" none
	title string
	kind  string // "binary", "categorical" or "potts": its list of methods
	build func(r *rand.Rand) (model.Model, error)
}

// discsTargets returns DISCS's targets; tiny runs (tests) take small
// versions of them (10×10 lattices, 200 categorical variables).
func discsTargets(mode Mode) []discsTarget {
	side, cats, pside := 50, 2000, 30
	if mode == Tiny {
		side, cats, pside = 10, 200, 8
	}
	return []discsTarget{
		{side * side, 1, "ising-lambda0.5", fmt.Sprintf("Ising %d×%d, λ = 0.5, μ = 0.5, σ = 1.5", side, side), "binary",
			func(r *rand.Rand) (model.Model, error) { return discsIsing(r, side, 0.5, 0.5, 1.5) }},
		{side * side, 2, "ising-lambda1", fmt.Sprintf("Ising %d×%d, λ = 1, μ = 1, σ = 3", side, side), "binary",
			func(r *rand.Rand) (model.Model, error) { return discsIsing(r, side, 1, 1, 3) }},
		{cats, 3, "categorical-q4", fmt.Sprintf("categorical %d × 4 states, σ = 1.5", cats), "categorical",
			func(r *rand.Rand) (model.Model, error) { return discsCategorical(r, cats, 4, 1.5) }},
		{pside * pside, 4, "", fmt.Sprintf("Potts %d×%d, q = 4, λ = 1, μ = 0.5, σ = 1.5 (today's DISCS)", pside, pside), "potts",
			func(r *rand.Rand) (model.Model, error) { return discsPotts(r, pside, 4, 1, 0.5, 1.5) }},
	}
}

// discsCircle is DISCS's sign of the fields' offset μ at site (i, j) of a
// side×side lattice: +1 inside the disc (i/side − ½)² + (j/side − ½)² <
// 1/(2π) (half the unit square's area), −1 outside.
func discsCircle(i, j, side int) float64 {
	a, b := float64(i)/float64(side)-0.5, float64(j)/float64(side)-0.5
	if a*a+b*b < 0.5/math.Pi {
		return 1
	}
	return -1
}

// discsIsing is DISCS's Ising model (discs/models/ising.py at the commit of
// its published results): an open side×side lattice of x ∈ {0, 1}, spins
// s = 2x − 1, log p*(s) = Σ_edges 2λ s_i s_j + Σ_i b_i s_i, where that
// commit's energy counted every edge twice (2λ per edge) and
// b_i = −(σ(2u_i − 1) + μ c_i), u_i uniform on [0, 1), c_i = discsCircle.
// The fields are this run's draw, not DISCS's (its JAX key cannot be
// replayed here), from the same distribution.
func discsIsing(r *rand.Rand, side int, lambda, mu, sigma float64) (model.Model, error) {
	fields := make([]float64, side*side)
	for i := range side {
		for j := range side {
			fields[i*side+j] = -(sigma*(2*r.Float64()-1) + mu*discsCircle(i, j, side))
		}
	}
	return ising.Grid(side, side, false, 2*lambda, fields)
}

// discsCategorical is DISCS's categorical model: d independent variables
// of q states with logits θ ~ N(0, σ²), p*(z) ∝ exp(Σ_i θ_i[z_i]).
func discsCategorical(r *rand.Rand, d, q int, sigma float64) (model.Model, error) {
	vars := make([]categorical.Variable, d)
	theta := make([]float64, q)
	for i := range vars {
		mx := math.Inf(-1)
		for s := range theta {
			theta[s] = sigma * r.NormFloat64()
			mx = math.Max(mx, theta[s])
		}
		probs, states := make([]float64, q), make([]float64, q)
		sum := 0.0
		for s, t := range theta {
			probs[s] = math.Exp(t - mx)
			sum += probs[s]
			states[s] = float64(s)
		}
		for s := range probs {
			probs[s] /= sum
		}
		vars[i] = categorical.Variable{States: states, Probs: probs}
	}
	return categorical.New(vars)
}

// discsPotts is DISCS's Potts model as its repository defines it today
// (discs/models/potts.py; it published no Potts numbers at the commit of
// its Ising results): an open side×side lattice of q states with weights
// w = −λ on every edge and b_i(s) = σ(2u − 1) + μ c_i per site and state,
// whose log-likelihood is −Σ_i Σ_s x_is (½ Σ_nbr w x_ns + b_is), that is
// λ Σ_edges [z_i = z_j] − Σ_i b_i(z_i): ferromagnetic couplings λ and
// fields h_i(s) = −(σ(2u − 1) + μ c_i) (the offset μ c_i is the same for
// every state of a site and changes nothing). At λ = 1 and q = 4 it is
// just below the critical coupling log 3 ≈ 1.10 of the field-free lattice.
func discsPotts(r *rand.Rand, side, q int, lambda, mu, sigma float64) (model.Model, error) {
	fields := make([]float64, side*side*q)
	for i := range side {
		for j := range side {
			for s := range q {
				fields[(i*side+j)*q+s] = -(sigma*(2*r.Float64()-1) + mu*discsCircle(i, j, side))
			}
		}
	}
	return potts.Grid(side, side, false, q, lambda, fields)
}

// discsMethod is one sampler run on a target.
type discsMethod struct {
	name     string // the journal's name
	method   string // the registered method
	settings string // its settings as JSON; %d is the warm-up's length
	discs    string // DISCS's sampler and balancing function ("gwg/sqrt"); "" none
	// perIter is how many of DISCS's steps one iteration of the method is
	// counted as (d/2 for a sweep against DISCS's blocks of 2 variables).
	perIter func(d int) float64
	// sweeps: an iteration visits every variable (Gibbs, GWG's sweeps,
	// Swendsen–Wang), so a run takes fewer iterations (discsIters).
	sweeps bool
	// pottsSweeps, when > 0, is the full run's length on the Potts
	// targets instead of discsIters' (GWG's sweeps there cost q − 1
	// proposals per site).
	pottsSweeps int
}

func one(int) float64 { return 1 }

// settingsFor returns m's settings as JSON for a run of iters iterations:
// the template with the warm-up's length (the first half) filled in.
func (m discsMethod) settingsFor(iters int) string {
	if strings.Contains(m.settings, "%d") {
		return fmt.Sprintf(m.settings, iters/2)
	}
	return m.settings
}

func discsMethods(kind string) []discsMethod {
	sweep2 := func(d int) float64 { return float64(d) / 2 }
	sweep := func(d int) float64 { return float64(d) }
	block := discsMethod{"gibbs", gibbs.Name, `{}`, "blockgibbs", sweep2, true, 0}
	ms := []discsMethod{block}
	switch kind {
	case "binary", "potts":
		ms = append(ms, discsMethod{"sw", sw.Name, `{}`, "", one, true, 0})
	}
	if kind == "binary" {
		ms = append(ms,
			discsMethod{"gwg-multi-sqrt", gwg.MultiName, `{"adapt":%d,"flips":1}`, "gwg/sqrt", one, false, 0},
			discsMethod{"gwg-multi-ratio", gwg.MultiName, `{"adapt":%d,"flips":1,"balance":"ratio"}`, "gwg/ratio", one, false, 0})
	} else {
		ms = append(ms,
			discsMethod{"gwg", gwg.Name, `{}`, "gwg/sqrt", sweep, true, 400},
			discsMethod{"gwg-multi-sqrt", gwg.MultiName, `{"adapt":%d,"flips":1}`, "", one, false, 0})
	}
	ms = append(ms,
		discsMethod{"pas-sqrt", pas.Name, `{"adapt":%d,"path_length":1}`, "path_auxiliary/sqrt", one, false, 0},
		discsMethod{"pas-ratio", pas.Name, `{"adapt":%d,"path_length":1,"balance":"ratio"}`, "path_auxiliary/ratio", one, false, 0},
		discsMethod{"dmala", dmala.Name, `{"adapt":%d}`, "dmala/sqrt", one, false, 0},
		discsMethod{"dlmc-sqrt", dlmc.Name, `{"adapt":%d}`, "dlmc/sqrt/interpolate", one, false, 0},
		discsMethod{"dlmc-ratio", dlmc.Name, `{"adapt":%d,"balance":"ratio"}`, "dlmc/ratio/interpolate", one, false, 0})
	return ms
}

// discsIters returns the iterations of a run (half of them warm-up, as
// DISCS's ess_ratio 0.5) for a method on a target: DISCS runs 100,000
// steps, which at dstein's 40–75 ms per step of 100 chains on the 50×50
// lattices would take hours per method; the lengths below keep the full
// experiment near an hour on 2 cores (R̂ of the same statistic says where
// they are too short).
func discsIters(mode Mode, t discsTarget, m discsMethod, length int) int {
	return max(length, 1) * discsBaseIters(mode, t, m)
}

// discsBaseIters is discsIters at length 1.
func discsBaseIters(mode Mode, t discsTarget, m discsMethod) int {
	sweeps := m.sweeps
	var it [2]int // sweeps, steps
	switch {
	case mode == Tiny:
		it = [2]int{8, 8}
	case mode == Quick && t.kind == "binary":
		it = [2]int{40, 30}
	case mode == Quick && t.kind == "categorical":
		it = [2]int{10, 20}
	case mode == Quick:
		it = [2]int{20, 20}
	case t.kind == "categorical":
		it = [2]int{200, 2000}
	case t.kind == "potts" && m.pottsSweeps > 0:
		it = [2]int{m.pottsSweeps, 0}
	case t.kind == "potts":
		it = [2]int{1000, 2000}
	default:
		it = [2]int{1000, 4000}
	}
	if sweeps {
		return it[0]
	}
	return it[1]
}

// discsTraceBytes estimates a run's peak memory for kept iterations of
// DISCS's chains: the process's base, the samplers' own work (under 300
// MB on the published targets) and 12 times the traces (one float64 per
// chain and kept iteration), the growth measured with Gibbs on the
// categorical target: 32 MB peak at 100 kept sweeps, 213 MB at 20,000
// (traces of 16 MB; the ESS estimators' work and the collector's slack).
func discsTraceBytes(kept int) float64 {
	return memlimit.Base + 300e6 + 12*8*float64(discsChains)*float64(kept)
}

// discsRun is what one run measured.
type discsRun struct {
	ess []float64 // per chain (tfp's estimator)
	// short is the per-chain ESS over the first iterations that make
	// DISCS's 50,000 kept steps (all kept ones when fewer): tfp's estimate
	// of a chain much shorter than its mixing time is biased upward, so
	// a sweep method compared at DISCS's length and at dstein's differs.
	short    []float64
	shortLen int
	bulk     float64 // multi-chain bulk ESS
	rhat     float64
	kept     int     // iterations kept
	seconds  float64 // their wall time
	evals    float64 // model evaluations per chain over them
	accept   float64 // the method's acceptance rate (NaN when none)
	onDevice float64 // 1 when it ran on the experiment's device, 0 not, −1 on the CPU's run
	moreStat []sampler.Stat
}

// runDISCSMethod runs n chains of m from uniform random states for iters
// iterations and records, over the second half, the distance of every
// chain to ref: Σ_i |z_i − ref_i| over state indices (DISCS's statistic:
// the Hamming distance for two states, the L1 distance of the codes
// 0, …, q − 1 for more).
func runDISCSMethod(ctx context.Context, mod model.Model, m discsMethod, iters int, key rng.Key, ref []int, dev sampler.Device) (*discsRun, error) {
	meth, err := sampler.Lookup(m.method)
	if err != nil {
		return nil, err
	}
	set := meth.NewSettings()
	if err := json.Unmarshal([]byte(m.settingsFor(iters)), set); err != nil {
		return nil, fmt.Errorf("settings of %s: %w", m.name, err)
	}
	t, err := transform.ForModel(nil, mod)
	if err != nil {
		return nil, err
	}
	// On a device, the method runs there when its path takes the target.
	pl, moved, err := sampler.Pipeline{Stages: []sampler.Stage{{Method: m.method, Iters: iters, Settings: set}}}.
		OnDevice(dev, &sampler.Problem{Model: mod, Transform: t, N: discsChains, Key: key})
	if err != nil {
		return nil, err
	}
	set = pl.Stages[0].Settings
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("settings of %s: %w", m.name, err)
	}
	set = set.Resolved()
	d := mod.Dim()
	z0 := make([]int, discsChains*d)
	r := key.For(rng.Init).Rand()
	for c := range discsChains {
		for i := range d {
			z0[c*d+i] = r.IntN(len(mod.States(i)))
		}
	}
	p := &sampler.Problem{Model: mod, Transform: t, N: discsChains, Z: z0, Key: key}
	s, err := meth.Start(p, set)
	if err != nil {
		return nil, err
	}
	if c, ok := s.(io.Closer); ok {
		defer c.Close()
	}
	warm := iters / 2
	for range warm {
		if err := s.Step(ctx); err != nil {
			return nil, err
		}
	}
	kept := iters - warm
	chains := make([][]float64, discsChains)
	for c := range chains {
		chains[c] = make([]float64, kept)
	}
	ev0 := s.Stats().Evaluations
	var spent time.Duration
	for k := range kept {
		start := time.Now()
		if err := s.Step(ctx); err != nil {
			return nil, err
		}
		spent += time.Since(start)
		z := s.Current()
		if f, ok := s.(sampler.Failer); ok && f.Err() != nil {
			return nil, f.Err()
		}
		for c := range discsChains {
			dist := 0
			for i, v := range z[c*d : (c+1)*d] {
				// |v − ref_i| without a branch: the signs of random
				// states' differences would be mispredicted half the
				// time, and this loop (between timed steps) would keep
				// the pool's workers waiting long enough to fall asleep.
				x := v - ref[i]
				s := x >> 63
				dist += x ^ s - s
			}
			chains[c][k] = float64(dist)
		}
	}
	st := s.Stats()
	out := &discsRun{kept: kept, seconds: spent.Seconds(), evals: float64(st.Evaluations-ev0) / discsChains, accept: math.NaN(), onDevice: -1}
	if dev != sampler.CPU {
		out.onDevice = float64(len(moved))
	}
	if v, ok := st.Value("acceptance_rate"); ok {
		out.accept = v
	}
	for _, v := range st.Values {
		if v.Name != "acceptance_rate" {
			out.moreStat = append(out.moreStat, v)
		}
	}
	out.ess = make([]float64, discsChains)
	out.short = make([]float64, discsChains)
	out.shortLen = min(kept, max(4, int(math.Ceil(discsKeptSteps/m.perIter(d)))))
	for c, ch := range chains {
		out.ess[c] = diag.ChainESS(ch)
		out.short[c] = diag.ChainESS(ch[:out.shortLen])
	}
	if out.bulk, err = diag.BulkESS(chains); err != nil {
		return nil, err
	}
	if out.rhat, err = diag.Rhat(chains); err != nil {
		return nil, err
	}
	return out, nil
}

func runDISCS(r *runner) (*Result, error) {
	set := settingsOf[DISCSSettings](r)
	all := discsTargets(r.cfg.Mode)
	// The targets run; each keeps its index among all (its streams).
	var targets []discsTarget
	for _, t := range all {
		if set.Target == 0 || t.x == float64(set.Target) {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("no DISCS target %d: want 1 (Ising λ = 0.5), 2 (Ising λ = 1), 3 (categorical) or 4 (Potts)", set.Target)
	}
	// The traces grow with --length: refuse a run whose longest one would
	// not fit, before any work.
	most := 0
	for _, t := range targets {
		for _, m := range discsMethods(t.kind) {
			if r.selected(m.name) {
				n := discsIters(r.cfg.Mode, t, m, set.Length)
				most = max(most, n-n/2)
			}
		}
	}
	if err := r.cfg.Budget.Check(fmt.Sprintf("DISCS's traces of %d kept iterations of %d chains (--length %d)", most, discsChains, max(set.Length, 1)), discsTraceBytes(most)); err != nil {
		return nil, err
	}
	dev := r.device()
	// Each method's record lists, for every target it runs on, its length
	// and its settings as run (the warm-up's length depends on the first).
	described := map[string]map[string]any{}
	var order []string
	for _, t := range all {
		for _, m := range discsMethods(t.kind) {
			r.presets[m.name] = m.method
			if described[m.name] == nil {
				described[m.name] = map[string]any{"method": m.method, "chains": discsChains}
				order = append(order, m.name)
			}
			n := discsIters(r.cfg.Mode, t, m, set.Length)
			described[m.name][t.title] = map[string]any{"iterations": n, "settings": json.RawMessage(m.settingsFor(n))}
		}
	}
	for _, name := range order {
		if err := r.describe(name, described[name]); err != nil {
			return nil, err
		}
	}
	for tr := range r.trials {
		if !r.inShard(tr) {
			continue
		}
		tk := r.trialKey(tr)
		for ti, t := range all {
			if !slices.ContainsFunc(targets, func(u discsTarget) bool { return u.x == t.x }) {
				continue
			}
			var methods []discsMethod
			for _, m := range discsMethods(t.kind) {
				if r.selected(m.name) {
					methods = append(methods, m)
				}
			}
			missing := false
			for _, m := range methods {
				if !r.want(m.name, t.x, tr) {
					missing = true
				}
			}
			if !missing {
				continue
			}
			mk := tk.ForIndex(rng.Model, ti)
			mod, err := t.build(mk.Rand())
			if err != nil {
				return nil, err
			}
			d := mod.Dim()
			ref := make([]int, d)
			rr := tk.ForIndex(rng.Test, ti).Rand()
			for i := range ref {
				ref[i] = rr.IntN(len(mod.States(i)))
			}
			for _, m := range methods {
				iters := discsIters(r.cfg.Mode, t, m, set.Length)
				_, err := r.trial(m.name, t.x, tr, func() (map[string]float64, error) {
					run, err := runDISCSMethod(r.ctx, mod, m, iters, tk.Split(1+ti), ref, dev)
					if err != nil {
						return nil, err
					}
					return discsMetrics(run, m, d), nil
				})
				if err != nil {
					return nil, err
				}
			}
		}
		r.trialDone(tr)
	}
	rows := r.summarize()
	res := &Result{Rows: rows, Show: []string{"ess_per_step", "ess_per_second_total", "rhat"}}
	res.Notes = append(res.Notes, discsTable(rows, targets, dev)...)
	fig, err := discsFigure(r, rows, targets)
	if err != nil {
		return nil, err
	}
	return res, r.save(fig)
}

// discsMetrics turns a run into the journal's metrics: DISCS's (per-chain
// ESS averaged over chains, per DISCS step, per evaluation, summed over
// chains per second) and the multi-chain bulk ESS per chain and R̂.
func discsMetrics(run *discsRun, m discsMethod, d int) map[string]float64 {
	mean, se := meanSE(run.ess)
	steps := float64(run.kept) * m.perIter(d)
	out := map[string]float64{
		"ess":                          mean,
		"ess_se":                       se,
		"ess_per_step":                 mean / steps,
		"ess_per_iteration":            mean / float64(run.kept),
		"bulk_ess_per_chain":           run.bulk / discsChains,
		"bulk_ess_per_step":            run.bulk / discsChains / steps,
		"rhat":                         run.rhat,
		"seconds":                      run.seconds,
		"ess_per_second_total":         mean * discsChains / run.seconds,
		"kept_iterations":              float64(run.kept),
		"ess_per_step_at_discs_length": meanOf(run.short) / (float64(run.shortLen) * m.perIter(d)),
		"discs_length_iterations":      float64(run.shortLen),
	}
	// R̂ and the bulk ESS are not finite when every chain is constant
	// (short runs of a stuck sampler): they are left out, and the table
	// shows a dash.
	for k, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			delete(out, k)
		}
	}
	if run.evals > 0 {
		out["ess_per_evaluation"] = mean / run.evals
	}
	if !math.IsNaN(run.accept) {
		out["acceptance_rate"] = run.accept
	}
	if run.onDevice >= 0 {
		out["device_stages"] = run.onDevice
	}
	for _, v := range run.moreStat {
		if !math.IsNaN(v.Value) && !math.IsInf(v.Value, 0) {
			out["stat:"+v.Name] = v.Value
		}
	}
	return out
}

// discsValue finds a row's mean.
func discsValue(rows []Row, method string, x float64, metric string) (float64, bool) {
	for _, r := range rows {
		if r.Method == method && r.X == x && r.Metric == metric {
			return r.Mean, true
		}
	}
	return math.NaN(), false
}

// discsTable formats, per target, dstein's numbers beside DISCS's
// published ones.
func discsTable(rows []Row, targets []discsTarget, dev sampler.Device) []string {
	var b strings.Builder
	where := "dstein on this machine"
	if dev != sampler.CPU {
		var on []string
		for _, m := range discsAllMethods() {
			for _, t := range targets {
				if v, ok := discsValue(rows, m.name, t.x, "device_stages"); ok && v > 0 {
					on = append(on, m.name)
					break
				}
			}
		}
		where = fmt.Sprintf("dstein's %s on this machine's GPU (%s) where they ran there (device_stages in the CSV), the others on its CPU", strings.Join(on, ", "), dev)
	}
	fmt.Fprintf(&b, "\nDISCS's metric beside its published numbers (%d chains; ESS = tfp's per-chain ESS of the distance to one random reference state, mean over chains; per step: per DISCS step; per second: summed over the chains, %s; DISCS's per-second number is 100 × its ESS_T, on its accelerator):\n", discsChains, where)
	for _, t := range targets {
		fmt.Fprintf(&b, "\n%g. %s\n", t.x, t.title)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "method\tESS/step\tDISCS\tratio\tat DISCS's length\tbulk ESS/step\tR̂\tESS/eval\tDISCS\tESS/s\tDISCS\tacc\t")
		for _, m := range discsMethods(t.kind) {
			ps, ok := discsValue(rows, m.name, t.x, "ess_per_step")
			if !ok {
				continue
			}
			bulk, _ := discsValue(rows, m.name, t.x, "bulk_ess_per_step")
			short, ok := discsValue(rows, m.name, t.x, "ess_per_step_at_discs_length")
			if kept, has := discsValue(rows, m.name, t.x, "kept_iterations"); !ok && has && kept*m.perIter(t.dim) <= discsKeptSteps {
				short = ps // every kept step is within DISCS's length
			}
			rh, _ := discsValue(rows, m.name, t.x, "rhat")
			pe, _ := discsValue(rows, m.name, t.x, "ess_per_evaluation")
			psec, _ := discsValue(rows, m.name, t.x, "ess_per_second_total")
			acc, _ := discsValue(rows, m.name, t.x, "acceptance_rate")
			pub, has := discsLookup(t.key, m.discs)
			dps, dee, dsec, ratio := "—", "—", "—", "—"
			if has {
				dps, dee, dsec = sig(pub.essPerStep), sig(pub.essPerEval), sig(100*pub.essPerSecond)
				ratio = fmt.Sprintf("%.2f", ps/pub.essPerStep)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", m.name, sig(ps), dps, ratio, sig(short), sig(bulk), discsAcc(rh), sig(pe), dee, sig(psec), dsec, discsAcc(acc))
		}
		tw.Flush()
		bestName, bestRate := "", 0.0
		for _, m := range discsMethods(t.kind) {
			if v, ok := discsValue(rows, m.name, t.x, "ess_per_second_total"); ok && v > bestRate {
				bestName, bestRate = m.name, v
			}
		}
		if bestName != "" {
			fmt.Fprintf(&b, "dstein's largest ESS/s: %s (%s)\n", sig(bestRate), bestName)
		}
		if best, ok := discsBest(t.key); ok {
			fmt.Fprintf(&b, "DISCS's best published ESS/s on this target: %s (%s, %s)\n", sig(100*best.essPerSecond), best.sampler, best.balance)
		}
	}
	fmt.Fprintf(&b, "\n\"at DISCS's length\": the same ESS per step computed over the first iterations that make DISCS's 50,000 kept steps (for a Gibbs sweep of d variables, 50,000/(d/2) sweeps; approximate: tfp's estimator over per-sweep draws, DISCS's over per-block ones). tfp's per-chain estimate of a chain not much longer than its mixing time is biased upward (on AR(1) chains with τ = 400, 1.9× at 2000 draws), so where dstein's runs are shorter than DISCS's and R̂ is above 1, the bulk ESS column is the fairer comparison.\n")
	fmt.Fprintf(&b, "DISCS's seconds time its step calls with time.time() and no block_until_ready, so under JAX's asynchronous dispatch they may measure dispatch rather than compute (its random walk, DMALA and DLMC runs take nearly the same time); its ESS per second may overstate its speed.\n")
	fmt.Fprintf(&b, "What a row compares: %s\n", discsCaveats)
	fmt.Fprintf(&b, "DISCS's numbers: %s, commit %s, %s/<run>/results.csv (experiment/discsdata.go lists each run's folder).\n", discsRepo, discsCommit, "discs/common/discs-{ising,categorical}-sampler_sweep_*")
	return strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
}

func discsAcc(a float64) string {
	if math.IsNaN(a) {
		return "—"
	}
	return fmt.Sprintf("%.2f", a)
}

const discsCaveats = "a DISCS block-Gibbs step updates 2 variables (q² evaluations), so dstein's Gibbs sweep counts as d/2 steps, and dstein's single-flip GWG sweep (d proposals) as d steps; " +
	"DISCS adapts GWG's flips, PAS's path length and DMALA's and DLMC's step sizes after every step for the whole run, dstein during the warm-up only (then fixed, so its chains are exact); " +
	"DISCS runs 100,000 steps and keeps the second half, dstein fewer (kept_iterations in the CSV), which makes no difference to ESS per step where the chains mix within the run and overstates it where they do not (R̂ says which); " +
	"the fields and logits are this run's draw from DISCS's distributions, not DISCS's own; evaluations are counted as each implementation counts them (DISCS: 4 per GWG or PAS step); " +
	"dstein's DMALA has no balancing function (its proposal is DISCS's sqrt form), so it is set beside DISCS's dmala(sqrt)."

// discsFigure draws ESS per step of every method beside DISCS's published
// number, one panel per target, on a log scale (points: a method without a
// DISCS counterpart has none).
func discsFigure(r *runner, rows []Row, targets []discsTarget) (report.Figure, error) {
	var panels []report.Panel
	for _, t := range targets {
		p := report.Panel{Title: fmt.Sprintf("%g. %s", t.x, t.title), XLabel: "method", YLabel: "ESS per DISCS step (log scale)", LogY: true}
		ours := report.Series{Name: "dstein (this run)", Points: true, ColorIndex: 0}
		pub := report.Series{Name: "DISCS, published", Points: true, ColorIndex: 1}
		bulk := report.Series{Name: "dstein, multi-chain bulk ESS per chain", Points: true, ColorIndex: 2}
		for _, m := range discsMethods(t.kind) {
			v, ok := discsValue(rows, m.name, t.x, "ess_per_step")
			if !ok || !(v > 0) {
				continue
			}
			p.XLabels = append(p.XLabels, m.name)
			x := float64(len(p.XLabels))
			ours.X, ours.Y = append(ours.X, x), append(ours.Y, v)
			if b, ok := discsValue(rows, m.name, t.x, "bulk_ess_per_step"); ok && b > 0 {
				bulk.X, bulk.Y = append(bulk.X, x), append(bulk.Y, b)
			}
			if d, has := discsLookup(t.key, m.discs); has {
				pub.X, pub.Y = append(pub.X, x), append(pub.Y, d.essPerStep)
			}
		}
		p.Series = append(p.Series, ours, bulk)
		if len(pub.X) > 0 {
			p.Series = append(p.Series, pub)
		}
		panels = append(panels, p)
	}
	return report.Figure{Panels: panels, Cols: min(2, len(panels)), SharedLegend: true, Title: figureTitle(r, rows,
		"DISCS's targets and metric: tfp's per-chain ESS of the distance to a reference state per step",
		fmt.Sprintf("%d chains", discsChains))}, nil
}
