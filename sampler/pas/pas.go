package pas

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/internal/vexp"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/optim"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/balance"
	"github.com/dstein/dstein/sampler/mh"
)

// Why one file of about 640 lines: the path auxiliary sampler's settings, their measured
// defaults, the path proposal and its reverse probability are one algorithm.

// Name is the name of the path auxiliary sampler in the sampler registry; pipelines name the method by it.
const Name = "pas"

func init() {
	sampler.Register(sampler.Method{
		Name:        Name,
		Description: "n independent chains of the path auxiliary sampler (Sun et al. 2022, as DISCS implements it): each proposal changes a path of distinct variables, drawn without replacement by their gradient-guided, locally balanced weights, of a length uniform with mean R, then a Metropolis–Hastings test",
		NewSettings: func() sampler.Settings { return new(Settings) },
		New: func(p *sampler.Problem, s sampler.Settings) (sampler.Sampler, error) {
			return New(p, *s.(*Settings))
		},
		Iters:  500,
		Unit:   "proposal",
		Memory: memory,
	})
}

// memory estimates the bytes of n chains on m: per chain three
// state-sized vectors of ints (the state, the proposed one and the
// path), the chain's row of Current, the proposal gradient and its
// evaluator's memberships, and at both states the log-weights and weights
// of every variable and state and a sum tree of at most 4d entries, plus
// the removed weights of a path (d).
func memory(m model.Model, n int, _ sampler.Settings) float64 {
	d, f := float64(m.Dim()), float64(sampler.States(m))
	return float64(n) * (8*(4*d+2*f) + 8*(2*(2*f+4*d)+d) + 512)
}

// DefaultPathLength is the mean path length R when Settings.PathLength is
// 0 with the Sqrt balancing function, and DefaultRatioPathLength with
// Ratio.
//
// They were chosen by a sweep of R on the two models of the sampling
// experiments with DMALA's protocol (DefaultStepSize in package dmala, as
// for DLMC's step size): 100 chains started from Γ of N(−2, 1), 8 seeds;
// "acc" is the acceptance rate over steps 101–500 and "MSE@k" the mean
// squared error of the 100 chains' means after k steps against the exact
// means (the i.i.d. level is 0.0100 and 0.0050):
//
//	Sqrt, R                1      2      3      4      6      8     10     12     15     20     30
//	10×10 Ising σ = 0.1
//	  acc               1.00   0.99   0.99   0.98   0.96   0.94   0.92   0.89   0.85   0.78   0.63
//	  MSE@25           0.400  0.202  0.112  0.068  0.032  0.019  0.017  0.016  0.021  0.050  0.189
//	  MSE@50           0.200  0.061  0.022  0.015  0.010  0.010  0.010  0.010  0.009  0.009  0.017
//	RBM d = 100, M = 25
//	  acc               0.97   0.93   0.89   0.84   0.73   0.62   0.53   0.45   0.37   0.27   0.18
//	  MSE@25           0.609  0.316  0.232  0.199  0.146  0.124  0.126  0.125  0.131  0.153  0.170
//	  MSE@50           0.314  0.162  0.118  0.088  0.062  0.046  0.050  0.058  0.065  0.087  0.108
//	  MSE@100          0.156  0.062  0.040  0.023  0.018  0.014  0.013  0.021  0.024  0.035  0.055
//
//	Ratio, R               1      2      3      4      6      8     10     12     15     20     30
//	10×10 Ising σ = 0.1
//	  acc               1.00   0.99   0.98   0.98   0.96   0.94   0.92   0.89   0.85   0.78   0.63
//	  MSE@25           0.400  0.202  0.114  0.070  0.030  0.021  0.018  0.019  0.021  0.059  0.202
//	  MSE@50           0.198  0.060  0.022  0.014  0.010  0.010  0.010  0.011  0.010  0.010  0.018
//	RBM d = 100, M = 25
//	  acc               0.96   0.95   0.93   0.90   0.84   0.77   0.70   0.62   0.52   0.39   0.26
//	  MSE@25           0.883  0.687  0.574  0.478  0.361  0.290  0.228  0.203  0.180  0.174  0.190
//	  MSE@50           0.506  0.315  0.234  0.191  0.125  0.097  0.081  0.076  0.075  0.089  0.119
//	  MSE@100          0.222  0.110  0.062  0.039  0.024  0.022  0.017  0.018  0.021  0.028  0.051
//
// On the Ising grid, whose weak couplings make the first-order estimates
// nearly exact, the chains burn in fastest at R = 8–15 with either
// function; on the RBM at R = 8–10 with Sqrt and R = 12–15 with Ratio,
// whose weights saturate where a move gains much probability, so that its
// paths are less focused on the moves that gain most and longer paths
// pay. Paths of one variable (R = 1, DISCS's starting point) change about
// one variable per step and burn in slowly from the experiments' start.
// Like DLMC's step sizes, these defaults suit models of about 100
// variables; the acceptance rate falls as paths grow on coupled models,
// and Settings.Adapt tunes R to the model.
const (
	DefaultPathLength      = 8
	DefaultRatioPathLength = 12
)

// DefaultTargetAcceptance is the acceptance rate that the adaptation of R
// aims for when Settings.TargetAcceptance is 0: 0.574, the optimal rate of
// locally balanced proposals (Sun et al. 2022), DISCS's target.
const DefaultTargetAcceptance = 0.574

// adaptGain is the gain of DISCS's adaptation of R: after each adaptive
// step r moves by the chains' mean acceptance probability minus the
// target, so by less than one variable per step.
const adaptGain = 1

// Settings configure the sampler. The zero value is valid.
type Settings struct {
	// PathLength is the mean length R ≥ 1 of the paths: each proposal
	// changes L distinct variables, L uniform on 1, …, 2R − 1 (at most the
	// number of variables of more than one state; see the package
	// comment); 0 means DefaultPathLength (DefaultRatioPathLength with
	// Ratio). Longer paths move more variables and are accepted less
	// often. With Adapt it is where the adaptation starts.
	PathLength int `json:"path_length" flag:"path-length,positive" help:"PAS's mean path length R: each proposal changes L distinct variables, L uniform on 1…2R−1 (default 8 with --balance sqrt, 12 with ratio)"`
	// Balance is the locally balanced function that weighs the moves:
	// Sqrt (the default) or Ratio.
	Balance balance.Func `json:"balance" flag:"balance" help:"locally balanced function g that weighs a move of estimated probability ratio t (DLMC's jump rates, PAS's and gwg-multi's move weights): sqrt (g(t) = √t, the default) or ratio (g(t) = t/(1+t)); DLMC's default --step-size and PAS's default --path-length depend on it"`
	// Adapt is the number of steps at the start of the run during which R
	// is adapted to an acceptance rate of TargetAcceptance by DISCS's
	// rule (see the package comment); from then on R stays at the nearest
	// integer to the mean of its adapted values over the second half of
	// those steps, so that the chains are time-homogeneous
	// Metropolis–Hastings chains that leave p* invariant. Keep them
	// within the warm-up (Tuning reports them). 0, the default: R stays
	// PathLength throughout.
	Adapt int `json:"adapt,omitempty" flag:"adapt" help:"adapt the proposal's size (DMALA's α, DLMC's h, PAS's mean path length R, gwg-multi's flips K; starting from --step-size, --path-length or --flips) to the --target-acceptance rate during this many first steps, then keep it fixed; keep them within the warm-up (0: no adaptation)"`
	// TargetAcceptance is the acceptance rate in (0, 1) that Adapt aims
	// for; 0 means DefaultTargetAcceptance (0.574). It applies only with
	// Adapt.
	TargetAcceptance float64 `json:"target_acceptance,omitempty" flag:"target-acceptance,positive" help:"the acceptance rate that --adapt aims for, in (0, 1) (default 0.574 when --adapt is given)"`
}

// Validate reports a negative path length, an unknown balancing
// function, a negative Adapt, a target acceptance rate outside (0, 1) (or
// 0) and a target without Adapt.
func (s *Settings) Validate() error {
	if s.PathLength < 0 {
		return fmt.Errorf("path length is %d; want a number of variables ≥ 1 (0 means %d with sqrt, %d with ratio)", s.PathLength, DefaultPathLength, DefaultRatioPathLength)
	}
	if s.Balance != balance.Sqrt && s.Balance != balance.Ratio {
		return fmt.Errorf("unknown balancing function %d", int(s.Balance))
	}
	if s.Adapt < 0 {
		return fmt.Errorf("adapt is %d; want a number of steps ≥ 0 (0: no adaptation)", s.Adapt)
	}
	if r := s.TargetAcceptance; !(r >= 0 && r < 1) {
		return fmt.Errorf("target acceptance rate is %v; want a number in (0, 1) (0 means %v)", r, DefaultTargetAcceptance)
	}
	if s.TargetAcceptance != 0 && s.Adapt == 0 {
		return fmt.Errorf("target acceptance rate %v without adapt steps: it applies only while the path length adapts (adapt > 0)", s.TargetAcceptance)
	}
	return nil
}

// Resolved returns the settings with the default path length filled in,
// and with Adapt the default target acceptance rate.
func (s *Settings) Resolved() sampler.Settings {
	r := *s
	if r.PathLength == 0 {
		r.PathLength = DefaultPathLength
		if r.Balance == balance.Ratio {
			r.PathLength = DefaultRatioPathLength
		}
	}
	if r.Adapt > 0 && r.TargetAcceptance == 0 {
		r.TargetAcceptance = DefaultTargetAcceptance
	}
	return &r
}

// Sampler is the state of n chains. It is not safe for concurrent use.
type Sampler struct {
	m      model.Model
	off    []int
	n, d   int
	movers int  // variables of more than one state: the longest path
	binary bool // every variable has two states
	bal    balance.Func
	r      int // the mean path length R in use
	chains []chain
	set    mh.Set
	cur    []int
	// run is the step loop and the adaptation of R (Settings.Adapt):
	// DISCS's recursion on the real-valued r whose nearest integer is R.
	run mh.Steps
}

type chain struct {
	mh.Chain                      // the state Z, stream, counters
	pg       *model.ProposalGrads // the proposal gradient at whole states
	g        []float64            // the proposal gradient at the proposed state
	z2       []int                // Z, and during a proposal the proposed state
	at, to   *local               // the local distributions at Z and at the proposed state
	path     []int                // the variables of the last proposal, in the order drawn
	removed  []float64            // their weights, while they are out of the tree
	lp       float64              // log p*(Z)
	accProb  float64              // the acceptance probability of the last proposal
	logFwd   float64              // the log-probability of the last proposal's path
}

// local is the distribution of single-variable moves at one state z: the
// log-weight λ[i, s] = log f(e^δ_i(s)), f the locally balanced function,
// of every variable i and state s ≠ z_i (−Inf at s = z_i and where the
// move is impossible), the weights e[i, s] = e^(λ[i, s] − top), shifted
// by the largest finite log-weight top, and a sum tree of the variables'
// weights w_i = Σ_s e[i, s].
type local struct {
	lam, e  []float64
	top     float64 // the largest finite λ, or −Inf when no move is possible
	w       sumTree
	movable int // variables of positive weight
}

func newLocal(f, d int) *local {
	return &local{lam: make([]float64, f), e: make([]float64, f), w: newSumTree(d)}
}

// New starts n = p.N chains of the path auxiliary sampler at the states
// p.Z; chain c draws from p.Key.ForIndex(rng.Sample, c).
func New(p *sampler.Problem, set Settings) (*Sampler, error) {
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("pas: %w", err)
	}
	set = *set.Resolved().(*Settings)
	rm, off, base, err := mh.Start(Name, p)
	if err != nil {
		return nil, err
	}
	m, n, d := p.Model, p.N, p.Model.Dim()
	movers := 0
	for i := range d {
		if off[i+1]-off[i] > 1 {
			movers++
		}
	}
	s := &Sampler{m: rm, off: off, n: n, d: d, movers: movers, bal: set.Balance,
		chains: make([]chain, n), set: make(mh.Set, n), cur: make([]int, n*d)}
	s.run = mh.Steps{Pkg: Name, Set: s.set, Ctx: context.Background()}
	s.binary = off[d] == 2*d && movers == d
	hi := float64(max(movers, 1))
	s.r = min(set.PathLength, max(movers, 1))
	s.run.Adapt = set.Adapt
	s.run.Ad = optim.Averaged{X: float64(s.r), Gain: adaptGain, Target: set.TargetAcceptance, Lo: 1, Hi: hi, Steps: set.Adapt}
	f := off[d]
	for c := range s.chains {
		ch := &s.chains[c]
		ch.Chain = base[c]
		s.set[c] = &ch.Chain
		ch.Mem = nil // the proposal gradient keeps what it needs
		ch.pg = model.NewProposalGrads(m)
		ch.g = make([]float64, f)
		ch.z2 = append([]int(nil), ch.Z...)
		ch.at, ch.to = newLocal(f, d), newLocal(f, d)
		ch.path = make([]int, 0, movers)
		ch.removed = make([]float64, movers)
		ch.pg.Grad(ch.g, ch.Z)
		ch.lp = m.LogProb(ch.Z)
		ch.Evals += 2
		if err := s.fill(context.Background(), ch.at, ch.g, ch.Z); err != nil {
			return nil, fmt.Errorf("pas: chain %d at its initial state: %w", c, err)
		}
	}
	return s, nil
}

// PathLength returns the mean path length R: with Settings.Adapt, the
// adapted value in use (fixed once Tuning reports false).
func (s *Sampler) PathLength() int { return s.r }

// Tuning reports whether the path length is still being adapted: whether
// the next Step's proposals may use another R than the last Step's (see
// Settings.Adapt).
func (s *Sampler) Tuning() bool { return s.run.Tuning() }

// Step makes one proposal in every chain. Each chain looks at ctx before
// its proposal and every pollVars variables while it fills the local
// distribution at a state or draws a path; when ctx is canceled the
// chains stop, each with its proposal made or abandoned, and Step returns
// ctx.Err(), from then on (see sampler.Sampler).
//
// During the adaptive steps (Settings.Adapt) r follows DISCS's rule
// (mh.Steps), r ← clip(r + ā − target, 1, D), where ā is the chains' mean
// acceptance probability min(1, ratio) of their last proposals and D the
// number of variables of more than one state; R is the nearest integer to
// r. After the last adaptive step r is fixed at its mean over the second
// half of the adaptive steps (Polyak averaging).
func (s *Sampler) Step(ctx context.Context) error {
	u, adapted, err := s.run.Step(ctx, s, func(c int) float64 { return s.chains[c].accProb })
	if adapted {
		s.r = max(1, int(math.Round(u)))
	}
	return err
}

// pollVars is the number of variables between two looks at the context
// inside one proposal.
const pollVars = 1 << 14

// Do advances chains [lo, hi) by one proposal (a parallel task).
func (s *Sampler) Do(lo, hi int) {
	for c := lo; c < hi; c++ {
		if s.run.Ctx.Err() != nil {
			return
		}
		ch := &s.chains[c]
		if ch.Err != nil {
			continue
		}
		s.propose(ch, s.length(ch))
	}
}

// length draws the length L of a chain's next path: uniform on
// 1, …, min(2R − 1, D), D the number of variables of more than one state
// (1 when R = 1, without a draw).
func (s *Sampler) length(ch *chain) int {
	top := min(2*s.r-1, s.movers)
	if top <= 1 {
		return 1
	}
	return 1 + ch.R.IntN(top)
}

// fill writes the local distribution of single-variable moves at the
// state z with proposal gradient g into l. It fails when an estimated
// log-ratio δ_i(s) = g[i, s] − g[i, z_i] is NaN or +Inf, or when ctx is
// canceled (it looks every pollVars variables). The exponentials are
// taken together (vexp.Exp: the same bits as math.Exp, four at a time).
func (s *Sampler) fill(ctx context.Context, l *local, g []float64, z []int) error {
	top := math.Inf(-1)
	for i := range s.d {
		if i&(pollVars-1) == pollVars-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		a, b := s.off[i], s.off[i+1]
		cur := a + z[i]
		gc := g[cur]
		for k := a; k < b; k++ {
			if k == cur {
				l.lam[k] = math.Inf(-1)
				continue
			}
			delta := g[k] - gc
			if math.IsNaN(delta) || math.IsInf(delta, 1) {
				return fmt.Errorf("estimated log-ratio of variable %d's move to state %d is %v", i, k-a, delta)
			}
			lw := s.bal.LogWeight(delta)
			l.lam[k] = lw
			top = max(top, lw)
		}
	}
	l.top = top
	l.movable = 0
	leaves := l.w.leaves()
	if math.IsInf(top, -1) {
		clear(l.e)
		clear(leaves)
		l.w.build()
		return nil
	}
	if s.binary {
		// One exponential per variable, of its other state's log-weight.
		args := leaves[:s.d]
		for i := range args {
			args[i] = l.lam[2*i+1-z[i]] - top
		}
		vexp.Exp(args, args)
		for i, w := range args {
			cur := 2*i + z[i]
			l.e[cur], l.e[2*i+1-z[i]] = 0, w
			if w > 0 {
				l.movable++
			}
		}
		l.w.build()
		return nil
	}
	// The current states' arguments are 0 rather than −Inf, which the
	// vector kernel leaves to math.Exp, and their weights are set to 0
	// after.
	for i := range s.d {
		a, b := s.off[i], s.off[i+1]
		for k := a; k < b; k++ {
			l.e[k] = l.lam[k] - top
		}
		l.e[a+z[i]] = 0
	}
	vexp.Exp(l.e, l.e)
	for i := range s.d {
		a, b := s.off[i], s.off[i+1]
		l.e[a+z[i]] = 0
		var w float64
		for _, e := range l.e[a:b] {
			w += e
		}
		leaves[i] = w
		if w > 0 {
			l.movable++
		}
	}
	l.w.build()
	return nil
}

// propose draws a path of L distinct variables and a new state for each
// (draw), and accepts the proposed state by the Metropolis–Hastings test
// with the probability of the reverse path from it. When fewer than L
// variables can move, there is no such path: the chain stays, and the
// proposal counts as rejected.
func (s *Sampler) propose(ch *chain, L int) {
	ch.accProb = 0
	if !s.draw(ch, L) {
		return
	}
	logFwd := ch.logFwd
	lp2 := s.m.LogProb(ch.z2)
	ch.Evals++
	if math.IsNaN(lp2) {
		ch.Err = fmt.Errorf("log p* of the proposed state is NaN")
		s.undo(ch)
		return
	}
	if math.IsInf(lp2, -1) || s.run.Ctx.Err() != nil {
		s.undo(ch)
		return // into an impossible state: rejected; or abandoned
	}
	// The reverse path from z'.
	ch.pg.Grad(ch.g, ch.z2)
	ch.Evals++
	if err := s.fill(s.run.Ctx, ch.to, ch.g, ch.z2); err != nil {
		if s.run.Ctx.Err() == nil {
			ch.Err = fmt.Errorf("at the proposed state: %w", err)
		}
		s.undo(ch)
		return
	}
	logRev := s.logPath(ch.to, ch.path, true, ch.Z, ch.removed)
	// A chain in an impossible state (possible only at the start) accepts
	// any possible proposal, even one whose reverse has probability zero.
	logA := lp2 - ch.lp + logRev - logFwd
	if math.IsInf(ch.lp, -1) {
		logA = math.Inf(1)
	}
	if math.IsNaN(logA) {
		ch.Err = fmt.Errorf("acceptance ratio is NaN")
		s.undo(ch)
		return
	}
	ch.accProb = math.Exp(min(logA, 0))
	if logA >= 0 || math.Log(ch.R.Float64()) < logA {
		for _, i := range ch.path {
			ch.Z[i] = ch.z2[i]
		}
		ch.at, ch.to = ch.to, ch.at
		ch.lp = lp2
		ch.Accepted++
		return
	}
	s.undo(ch)
}

// draw draws a path of L distinct variables from the chain's local
// distribution at Z, without replacement (each variable in proportion to
// the weight that remains, then its new state in proportion to e), into
// ch.path, with the new states in ch.z2 and the path's log-probability in
// ch.logFwd. It returns false, with z2 = Z, when fewer than L variables
// can move or when ctx is canceled during a long path.
func (s *Sampler) draw(ch *chain, L int) bool {
	ch.path = ch.path[:0]
	ch.logFwd = math.Inf(-1)
	at := ch.at
	if L > at.movable {
		return false
	}
	leaves := at.w.leaves()
	var logFwd float64
	for k := range L {
		if k&(pollVars-1) == pollVars-1 && s.run.Ctx.Err() != nil {
			s.putBack(ch, at)
			s.undo(ch)
			return false
		}
		total := at.w.total()
		i := at.w.find(ch.R.Float64() * total)
		wi := leaves[i]
		a, b := s.off[i], s.off[i+1]
		st := a + b - 1 - (a + ch.Z[i]) // the other state of a binary variable
		if b-a > 2 {
			st = a + pick(at.e[a:b], ch.R.Float64()*wi)
		}
		logFwd += at.lam[st] - at.top - math.Log(total)
		ch.path = append(ch.path, i)
		ch.z2[i] = st - a
		ch.removed[k] = wi
		at.w.set(i, 0)
	}
	s.putBack(ch, at)
	ch.logFwd = logFwd
	return true
}

// putBack returns the weights of the chain's path to the tree of l.
func (s *Sampler) putBack(ch *chain, l *local) {
	for k, i := range ch.path {
		l.w.set(i, ch.removed[k])
	}
}

// undo returns the proposed state to Z.
func (s *Sampler) undo(ch *chain) {
	for _, i := range ch.path {
		ch.z2[i] = ch.Z[i]
	}
}

// logPath returns the log-probability that the local distribution l draws
// the variables of path without replacement in their order (from the last
// to the first with rev), and gives each variable i the state to[i]: the
// sum over the path's steps of λ[i, to_i] − top − log W, W the total
// weight of the variables not yet drawn. It is −Inf when a step has
// weight zero. removed must hold len(path) entries; l is left as it was.
func (s *Sampler) logPath(l *local, path []int, rev bool, to []int, removed []float64) float64 {
	leaves := l.w.leaves()
	var lp float64
	n := len(path)
	k := 0
	for ; k < n; k++ {
		i := path[k]
		if rev {
			i = path[n-1-k]
		}
		st := s.off[i] + to[i]
		if l.e[st] == 0 {
			lp = math.Inf(-1)
			break
		}
		lp += l.lam[st] - l.top - math.Log(l.w.total())
		removed[k] = leaves[i]
		l.w.set(i, 0)
	}
	for j := range k {
		i := path[j]
		if rev {
			i = path[n-1-j]
		}
		l.w.set(i, removed[j])
	}
	return lp
}

// pick returns the index of the entry of e in which u ∈ [0, Σ e) falls,
// counting the entries in order; rounding past the end gives the last
// positive entry.
func pick(e []float64, u float64) int {
	last := -1
	var acc float64
	for j, x := range e {
		if x == 0 {
			continue
		}
		acc += x
		last = j
		if u < acc {
			return j
		}
	}
	return last
}

// Current returns the chains' current states.
func (s *Sampler) Current() []int { return s.set.Current(s.cur, s.d) }

// Sweeps returns the number of completed steps (one proposal per chain
// each).
func (s *Sampler) Sweeps() int { return s.run.Done }

// Stats reports acceptance_rate, the fraction of accepted proposals so far
// (one proposal per chain and Step, each changing the variables of one
// path; a proposal into a state of probability zero, or of a path longer
// than the variables that can move, counts as rejected), and with
// Settings.Adapt also path_length, the mean path length R in use (adapted,
// then fixed), and tuned_acceptance_rate, the fraction of proposals
// accepted since the adaptation ended (0 until then). Evaluations count,
// per proposal, one log p* of the proposed state and, unless that is
// −Inf, one proposal gradient there (none when there was no path to
// propose); at the start one gradient and one log p* per chain.
func (s *Sampler) Stats() sampler.Stats { return s.run.Stats("path_length", float64(s.r)) }
