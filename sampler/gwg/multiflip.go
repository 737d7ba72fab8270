package gwg

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

// Why one file of about 670 lines: the multi-flip proposal (K flips without replacement),
// its exact reverse probability and the measured default K are one derivation.

// MultiName is the name of multi-flip Gibbs-with-Gradients in the sampler registry; pipelines name the method by it.
const MultiName = "gwg-multi"

func init() {
	sampler.Register(sampler.Method{
		Name:        MultiName,
		Description: "n independent chains of multi-flip Gibbs-with-Gradients (as the DISCS benchmark implements it): each proposal draws K variables with replacement in proportion to their gradient-estimated, locally balanced move weights and moves every variable drawn, then a Metropolis–Hastings test; K fixed or adapted to an acceptance rate",
		NewSettings: func() sampler.Settings { return new(MultiSettings) },
		New: func(p *sampler.Problem, s sampler.Settings) (sampler.Sampler, error) {
			return NewMulti(p, *s.(*MultiSettings))
		},
		Iters:  500,
		Unit:   "proposal",
		Memory: multiMemory,
	})
}

// multiMemory estimates the bytes of n chains on m: per chain three
// state-sized vectors of ints (the state, the proposed one and the chain's
// row of Current), five membership-sized vectors of floats (the proposal
// gradient's memberships, the gradients and move log-weights at both
// states) and six variable-sized ones (the variables' log-weights and
// cumulative weights at both states, the counts and the list of drawn
// variables).
func multiMemory(m model.Model, n int, _ sampler.Settings) float64 {
	d := float64(m.Dim())
	return float64(n) * (8*3*d + 8*5*float64(sampler.States(m)) + 8*6*d + 256)
}

// DefaultFlips is the number K of variables that a proposal draws when
// MultiSettings.Flips is 0, with either balancing function.
//
// It was chosen by a sweep of K on the two models of the sampling
// experiments with DMALA's protocol (DefaultStepSize in package dmala):
// 100 chains started from Γ of N(−2, 1), 16 seeds (8 for K = 1, 2 and
// 20); "acc" is the acceptance rate over steps 101–500 and "MSE@k" the
// mean squared error of the 100 chains' means after k steps, against the
// exact means (the level of 100 i.i.d. draws is ≈ 0.0100 and ≈ 0.0045):
//
//	Sqrt, K               1      2      4      6      8      10     12     20
//	10×10 Ising σ = 0.1
//	  acc                 0.997  0.990  0.968  0.941  0.912  0.884  0.856  0.744
//	  MSE@25              0.402  0.204  0.069  0.030  0.019  0.014  0.014  0.084
//	  MSE@50              0.200  0.058  0.014  0.010  0.010  0.010  0.009  0.013
//	RBM d = 100, M = 25
//	  acc                 0.973  0.901  0.713  0.526  0.376  0.260  0.179  0.035
//	  MSE@50              0.296  0.175  0.090  0.079  0.089  0.106  0.136  0.265
//	  MSE@100             0.142  0.061  0.024  0.022  0.026  0.036  0.050  0.178
//	  MSE@200             0.044  0.015  0.010  0.008  0.008  0.012  0.016  0.104
//
//	Ratio, K              1      2      4      6      8      10     12     20
//	10×10 Ising σ = 0.1
//	  acc                 0.997  0.990  0.968  0.941  0.913  0.884  0.855  0.744
//	  MSE@25              0.403  0.202  0.068  0.030  0.019  0.014  0.013  0.096
//	  MSE@50              0.199  0.057  0.014  0.010  0.010  0.010  0.010  0.015
//	RBM d = 100, M = 25
//	  acc                 0.955  0.936  0.836  0.710  0.585  0.481  0.385  0.131
//	  MSE@50              0.520  0.306  0.188  0.139  0.138  0.131  0.145  0.241
//	  MSE@100             0.236  0.110  0.045  0.026  0.028  0.027  0.034  0.117
//	  MSE@200             0.077  0.021  0.013  0.009  0.010  0.008  0.008  0.034
//
// K = 6 burns in the RBM, the slower of the two, about as fast as any K
// with either function (K = 5–8 are within the seeds' noise of it), and
// K = 10–12 the Ising grid, whose moves the gradient estimates exactly.
// The default is K = 4 nonetheless, a little slower on both (the RBM's
// MSE@100 is 0.024 against 0.022 with Sqrt, 0.045 against 0.026 with
// Ratio), because a K near the number of variables makes only large
// moves, most of which a coupled model rejects, and the chains then
// explore slowly: on the RBM with 8 visible units of
// samplertest.SmallModels, 2000 chains with Sqrt at K = 6 (accepting
// 0.23) were 14–19 standard errors off the exact marginals after 100
// steps, 4–7 after 500 and below 2 only after 2000 (seeds 7–9), where at
// K = 4 (accepting 0.38) they were within 2.3 after 500 (seeds 7–10), as
// on the other small models. The best K grows with the number of variables
// and shrinks as they are more strongly coupled; MultiSettings.Adapt tunes
// it to the model.
const DefaultFlips = 4

// DefaultMultiTargetAcceptance is the acceptance rate that the adaptation
// of K aims for when MultiSettings.TargetAcceptance is 0: 0.574, the
// target of DISCS's adaptive GWG (and of its DLMC and DMALA).
const DefaultMultiTargetAcceptance = 0.574

// flipsGain is the gain of the adaptation of K: after each adaptive step
// the real number r behind K moves by flipsGain times the difference
// between the chains' mean acceptance probability and the target, as in
// DISCS's adaptive GWG (whose gain is 1).
const flipsGain = 1

// MultiSettings configure the multi-flip sampler ("gwg-multi"). The zero
// value is valid.
type MultiSettings struct {
	// Flips is the number K ≥ 1 of variables that each proposal draws,
	// with replacement; every variable drawn at least once moves. 0 means
	// DefaultFlips. With Adapt it is where the adaptation starts.
	Flips int `json:"flips" flag:"flips,positive" help:"the number K of variables that each proposal draws, with replacement (every variable drawn moves); with --adapt, where the adaptation of K starts"`
	// Balance is the locally balanced function b that weighs each move by
	// b(e^δ), δ its estimated log-ratio: Sqrt (b(t) = √t, the default, as
	// in DISCS) or Ratio (b(t) = t/(1+t)).
	Balance balance.Func `json:"balance" flag:"balance" help:"locally balanced function g that weighs a move of estimated probability ratio t (DLMC's jump rates, PAS's and gwg-multi's move weights): sqrt (g(t) = √t, the default) or ratio (g(t) = t/(1+t)); DLMC's default --step-size and PAS's default --path-length depend on it"`
	// Adapt is the number of steps at the start of the run during which
	// K is adapted to an acceptance rate of TargetAcceptance by DISCS's
	// rule (see MultiSampler); from then on K stays at the rounded mean of
	// its real-valued recursion over the second half of those steps, so
	// that the chains are time-homogeneous Metropolis–Hastings chains that
	// leave p* invariant. Keep them within the warm-up (Tuning reports
	// them). 0, the default: K stays Flips throughout.
	Adapt int `json:"adapt,omitempty" flag:"adapt" help:"adapt the proposal's size (DMALA's α, DLMC's h, PAS's mean path length R, gwg-multi's flips K; starting from --step-size, --path-length or --flips) to the --target-acceptance rate during this many first steps, then keep it fixed; keep them within the warm-up (0: no adaptation)"`
	// TargetAcceptance is the acceptance rate in (0, 1) that Adapt aims
	// for; 0 means DefaultMultiTargetAcceptance (0.574). It applies only
	// with Adapt.
	TargetAcceptance float64 `json:"target_acceptance,omitempty" flag:"target-acceptance,positive" help:"the acceptance rate that --adapt aims for, in (0, 1) (default 0.574 when --adapt is given)"`
}

// Validate reports a negative number of flips, an unknown balancing
// function, a negative Adapt, a target acceptance rate outside (0, 1) (or
// 0) and a target without Adapt.
func (s *MultiSettings) Validate() error {
	if s.Flips < 0 {
		return fmt.Errorf("flips is %d; want a number of variables ≥ 1 (0 means %d)", s.Flips, DefaultFlips)
	}
	if s.Balance != balance.Sqrt && s.Balance != balance.Ratio {
		return fmt.Errorf("unknown balancing function %d", int(s.Balance))
	}
	if s.Adapt < 0 {
		return fmt.Errorf("adapt is %d; want a number of steps ≥ 0 (0: no adaptation)", s.Adapt)
	}
	if r := s.TargetAcceptance; !(r >= 0 && r < 1) {
		return fmt.Errorf("target acceptance rate is %v; want a number in (0, 1) (0 means %v)", r, DefaultMultiTargetAcceptance)
	}
	if s.TargetAcceptance != 0 && s.Adapt == 0 {
		return fmt.Errorf("target acceptance rate %v without adapt steps: it applies only while the number of flips adapts (adapt > 0)", s.TargetAcceptance)
	}
	return nil
}

// Resolved returns the settings with the default number of flips filled
// in, and with Adapt the default target acceptance rate.
func (s *MultiSettings) Resolved() sampler.Settings {
	r := *s
	if r.Flips == 0 {
		r.Flips = DefaultFlips
	}
	if r.Adapt > 0 && r.TargetAcceptance == 0 {
		r.TargetAcceptance = DefaultMultiTargetAcceptance
	}
	return &r
}

// MultiSampler is the state of n chains of multi-flip
// Gibbs-with-Gradients. It is not safe for concurrent use.
//
// # Proposal
//
// Let g be the model's proposal gradient at the current state x
// (model.ProposalGrads) and δ_i(s) = g[i, s] − g[i, x_i] the estimated
// change of log p* when variable i moves to state s (exact for the
// categorical model, factor graphs, Ising and Potts models, to first order
// for the RBM; see the package comment). Each move weighs
// w_i(s) = b(e^δ_i(s)), b the locally balanced function
// (MultiSettings.Balance), and each variable the sum of its moves'
// weights, w_i = Σ_{s ≠ x_i} w_i(s). A proposal draws K variables
// independently, with replacement, each with probability
// q_x(i) = w_i / Σ_j w_j, which gives a count c_i ≥ 0 of every variable
// (Σ c_i = K); it moves every variable drawn at least once to a state
// v_i ≠ x_i drawn with probability q_x(v_i | i) = w_i(v_i) / w_i (for two
// states, to the other state); and it accepts the new state y with
// probability min(1, A),
//
//	log A = log p*(y) − log p*(x)
//	        + Σ_i c_i log q_y(i) + Σ_{c_i > 0} log q_y(x_i | i)
//	        − Σ_i c_i log q_x(i) − Σ_{c_i > 0} log q_x(v_i | i),
//
// with q_y from the gradient at y. The test is that of a
// Metropolis–Hastings chain on the state with the auxiliary draws (c, v):
// the map (x, c, v) → (y, c, x restricted to the moved variables) is an
// involution, its reverse draws the same counts at y and the values that
// return every moved variable to its state in x, and the probabilities of
// the draws (c, v) at x and of their reverse at y have the same
// multinomial coefficient K!/Π c_i!, which cancels in A. So every pair of
// a proposal and its reverse is in detailed balance with respect to p*,
// and the chains leave p* invariant whatever K, b and the quality of the
// gradient. A proposal into a state of probability zero is rejected, and
// so is one whose reverse has probability zero; a chain that starts in a
// state of probability zero accepts any proposal of positive probability.
//
// For binary variables this is DISCS's multi-flip GWG (BinaryGWGSampler
// and AdaptiveGWGSampler in discs/samplers/gwg.py): every variable drawn
// flips once however often it was drawn, and the proposal's
// log-probabilities are Σ_i c_i log q(i) at both states. For variables of
// more than two states, where DISCS's GWG moves one variable per proposal,
// the draw of a variable uses the sum of its moves' weights and the state
// is drawn within it, which reduces to DISCS's categorical GWG for K = 1
// (its softmax over all moves is the same distribution, drawn in two
// stages) and to the binary rule where every variable has two states.
//
// # Number of flips and its adaptation
//
// With MultiSettings.Adapt, after each of the run's first Adapt steps a
// real number r, which starts at Flips, moves by DISCS's rule
//
//	r ← clip(r + ā − target, 1, max(d, Flips)),
//
// ā the chains' mean acceptance probability min(1, A) of that step, and
// the next proposals draw K = round(r) variables. After the last adaptive
// step K is fixed at the rounded mean of r over the second half of the
// adaptive steps (the Polyak average, as dlmc and dmala fix their step
// sizes), which is less noisy than the last r, and the chains are
// Metropolis–Hastings chains with one kernel again. DISCS starts r at 1
// and adapts it after every step of the run, so that its chains never
// have a fixed kernel.
//
// With the adaptation during 250 warm-up steps, K settles at 19–20 (Sqrt)
// or 27–29 (Ratio) on 300 independent categorical variables of 4 states,
// and at 3–4 on the 3-state Potts torus of samplertest.MultiStateTargets;
// 4 chains of 250 draws then estimate their state probabilities with
// 4.4–5.4× and 1.9–2.9× the RMSE of 1000 exact independent draws, against
// 8.0–8.6× and 1.4–2.8× at the default K = 4, without adaptation
// (TestMultiAdaptedOnMultiStateTargets, keys 1–5). A step moves about K
// variables, where a DLMC step may move every variable.
//
// # Cost
//
// A step is one proposal per chain; Stats reports acceptance_rate, and
// with MultiSettings.Adapt also flips (K in use) and
// tuned_acceptance_rate (the fraction accepted since the adaptation
// ended). A step costs one log p* and one proposal gradient at the
// proposed state (as a dlmc or dmala step), the move weights at that state
// (one exponential per binary variable with Sqrt, with Ratio another
// exponential and a logarithm; a few per state of a variable of more
// states), K binary
// searches of the cumulative weights (about 60 ns per draw, with the
// rest of the draw's bookkeeping) and a draw of the state of every
// variable moved. The weights of the current state are kept between steps,
// so a rejection costs nothing more. Measured on a loaded machine of 2
// cores (BenchmarkMultiStep, 100 chains, K = 4), a step took 0.3–0.6 ms
// on the 10×10 Ising grid and 1.2–2.6 ms on the d = 100 RBM, where DMALA's
// took 1.2–2.0 and 3.3–4.6 ms and DLMC's 2.8–3.4 and 4.3–4.5 ms; K = 30
// added about 0.2 ms on either model, and Ratio about 0.5 ms. Chains run
// in parallel, each with its own random stream, so results do not depend
// on the number of cores.
type MultiSampler struct {
	m      model.Model
	off    []int
	n, d   int
	bal    balance.Func
	chains []mchain
	set    mh.Set
	cur    []int
	flips  int // K of the next proposals
	// run is the step loop and the adaptation of K
	// (MultiSettings.Adapt): the recursion on r.
	run mh.Steps
}

// weights are the proposal's weights at one state.
type weights struct {
	g    []float64 // the proposal gradient, laid out like the memberships
	lw   []float64 // log b(e^δ) of every move, −Inf at the current states
	logw []float64 // log w_i of every variable, −Inf where it has no move
	cum  []float64 // cum[i] = Σ_{j ≤ i} exp(logw_j − top), top = max logw
	logW float64   // log Σ_i w_i, −Inf when no variable can move
	last int       // the last variable of positive weight (−1: none)
}

type mchain struct {
	mh.Chain                      // the state Z, stream, counters
	pg       *model.ProposalGrads // the proposal gradient at whole states
	z2       []int                // the proposed state
	x, y     weights              // at Z and at the proposed state
	cnt      []int                // the counts c_i of the last proposal
	drawn    []int                // its variables with c_i > 0, in the order of their first draw
	lp       float64              // log p*(Z)
	accProb  float64              // the acceptance probability of the last proposal
	logFwd   float64              // log q(c, v | x) of the last proposal, without K!/Π c_i!
	logRev   float64              // log q(c, x | y) of its reverse, without K!/Π c_i!
}

// NewMulti starts n = p.N chains of multi-flip Gibbs-with-Gradients at the
// states p.Z; chain c draws from p.Key.ForIndex(rng.Sample, c).
func NewMulti(p *sampler.Problem, set MultiSettings) (*MultiSampler, error) {
	const name = MultiName
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	set = *set.Resolved().(*MultiSettings)
	rm, off, base, err := mh.Start(name, p)
	if err != nil {
		return nil, err
	}
	m, n, d := p.Model, p.N, p.Model.Dim()
	s := &MultiSampler{m: rm, off: off, n: n, d: d, bal: set.Balance, chains: make([]mchain, n), set: make(mh.Set, n),
		cur: make([]int, n*d), flips: set.Flips}
	s.run = mh.Steps{Pkg: MultiName, Set: s.set, Adapt: set.Adapt, Ctx: context.Background()}
	s.run.Ad = optim.Averaged{X: float64(set.Flips), Gain: flipsGain, Target: set.TargetAcceptance, Lo: 1, Hi: float64(max(d, set.Flips)), Steps: set.Adapt}
	f := off[d]
	for c := range s.chains {
		ch := &s.chains[c]
		ch.Chain = base[c]
		s.set[c] = &ch.Chain
		ch.Mem = nil // the proposal gradient keeps what it needs
		ch.pg = model.NewProposalGrads(m)
		ch.z2 = make([]int, d)
		for _, w := range []*weights{&ch.x, &ch.y} {
			w.g, w.lw = make([]float64, f), make([]float64, f)
			w.logw, w.cum = make([]float64, d), make([]float64, d)
		}
		ch.cnt = make([]int, d)
		ch.drawn = make([]int, 0, d)
		ch.pg.Grad(ch.x.g, ch.Z)
		ch.lp = m.LogProb(ch.Z)
		ch.Evals += 2
		if err := s.fill(context.Background(), &ch.x, ch.Z); err != nil {
			return nil, fmt.Errorf("%s: chain %d at its initial state: %w", name, c, err)
		}
	}
	return s, nil
}

// Flips returns K: with MultiSettings.Adapt, the rounded value of the
// adaptation in use (fixed once Tuning reports false).
func (s *MultiSampler) Flips() int { return s.flips }

// Tuning reports whether K is still being adapted: whether the next Step's
// proposals may draw another number of variables than the last Step's
// (see MultiSettings.Adapt).
func (s *MultiSampler) Tuning() bool { return s.run.Tuning() }

// Step makes one proposal in every chain. Each chain looks at ctx before
// its proposal and every pollVars variables while it fills the weights or
// draws variables; when ctx is canceled the chains stop, each with its
// proposal made or abandoned, and Step returns ctx.Err(), from then on
// (see sampler.Sampler).
//
// During the adaptive steps (MultiSettings.Adapt) r follows DISCS's rule
// (see MultiSampler; mh.Steps) and K = round(r); after the last adaptive
// step r is the mean of its values over the second half of the adaptive
// steps.
func (s *MultiSampler) Step(ctx context.Context) error {
	u, adapted, err := s.run.Step(ctx, s, func(c int) float64 { return s.chains[c].accProb })
	if adapted {
		s.flips = max(1, int(math.Round(u)))
	}
	return err
}

// pollVars is the number of variables (weights filled or variables drawn)
// between two looks at the context inside one proposal.
const pollVars = 1 << 14

// Do advances chains [lo, hi) by one proposal (a parallel task).
func (s *MultiSampler) Do(lo, hi int) {
	for c := lo; c < hi; c++ {
		if s.run.Ctx.Err() != nil {
			return
		}
		ch := &s.chains[c]
		if ch.Err != nil {
			continue
		}
		s.propose(ch, s.flips)
	}
}

// fill writes the log-weights of every move and variable at state z, whose
// proposal gradient is w.g, and the variables' cumulative weights. It fails
// when an estimated log-ratio is NaN or +Inf, or when ctx is canceled (it
// looks every pollVars variables).
func (s *MultiSampler) fill(ctx context.Context, w *weights, z []int) error {
	g, lw, logw := w.g, w.lw, w.logw
	top := math.Inf(-1)
	for i := range s.d {
		if i&(pollVars-1) == pollVars-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		a, b := s.off[i], s.off[i+1]
		cur := a + z[i]
		var l float64
		switch b - a {
		case 1:
			lw[a], l = negInf, negInf
		case 2:
			o := a + b - 1 - cur
			delta := g[o] - g[cur]
			if math.IsNaN(delta) || math.IsInf(delta, 1) {
				return fmt.Errorf("estimated log-ratio of variable %d's move is %v", i, delta)
			}
			l = s.bal.LogWeight(delta)
			lw[o], lw[cur] = l, negInf
		default:
			l = negInf
			for k := a; k < b; k++ {
				if k == cur {
					lw[k] = negInf
					continue
				}
				delta := g[k] - g[cur]
				if math.IsNaN(delta) || math.IsInf(delta, 1) {
					return fmt.Errorf("estimated log-ratio of variable %d's move to state %d is %v", i, k-a, delta)
				}
				lw[k] = s.bal.LogWeight(delta)
				l = max(l, lw[k])
			}
			if !math.IsInf(l, -1) {
				var sum float64
				for k := a; k < b; k++ {
					sum += math.Exp(lw[k] - l) // 0 at the current state
				}
				l += math.Log(sum)
			}
		}
		logw[i] = l
		top = max(top, l)
	}
	w.last = -1
	if math.IsInf(top, -1) {
		clear(w.cum)
		w.logW = negInf
		return nil
	}
	cum := w.cum
	for i, l := range logw {
		cum[i] = l - top
	}
	vexp.Exp(cum, cum)
	var acc float64
	for i, x := range cum {
		if x > 0 {
			w.last = i
		}
		acc += x
		cum[i] = acc
	}
	w.logW = top + math.Log(acc)
	return nil
}

// drawVariable returns a variable drawn with probability w_i / Σ_j w_j
// from the cumulative weights: the first whose cumulative weight exceeds
// u·total, so that a variable of weight zero is never drawn (u falling
// within rounding of 1 gives the last variable of positive weight).
//
// The search halves the range without a branch on the comparison, which
// would mispredict half the time: the bits of two numbers ≥ 0 are ordered
// as the numbers are, so c ≤ t exactly when the difference of t's and c's
// bits, as unsigned integers, does not wrap around past 2⁶³.
func drawVariable(w *weights, u float64) int {
	cum := w.cum
	t := u * cum[len(cum)-1]
	tb := math.Float64bits(t)
	base, n := 0, len(cum)
	for n > 1 {
		half := n >> 1
		c := math.Float64bits(cum[base+half-1])
		mask := int((tb-c)>>63) - 1 // −1 (all ones) when c ≤ t, else 0
		base += half & mask
		n -= half
	}
	// The first cumulative weight above t is cum[base], or none.
	if cum[base] > t {
		return base
	}
	return w.last
}

// drawState returns a state of variable i other than its current one cur,
// drawn with probability w_i(s) / w_i, as an index into the memberships.
func (s *MultiSampler) drawState(w *weights, i, cur int, u float64) int {
	a, b := s.off[i], s.off[i+1]
	if b-a == 2 {
		return a + b - 1 - cur
	}
	lw, l := w.lw, w.logw[i]
	k, acc := -1, 0.0
	for j := a; j < b; j++ {
		if math.IsInf(lw[j], -1) {
			continue // the current state, or a move of weight zero
		}
		k = j
		acc += math.Exp(lw[j] - l)
		if u < acc {
			break
		}
	}
	return k
}

// propose makes one Metropolis–Hastings proposal of K flips in chain ch.
func (s *MultiSampler) propose(ch *mchain, flips int) {
	ch.accProb = 0
	if !s.draw(ch, flips) {
		return
	}
	lp2 := s.m.LogProb(ch.z2)
	ch.Evals++
	if math.IsNaN(lp2) {
		ch.Err = fmt.Errorf("log p* of the proposed state is NaN")
		return
	}
	if math.IsInf(lp2, -1) {
		return // into an impossible state: rejected
	}
	if s.run.Ctx.Err() != nil {
		return // abandoned before anything changed
	}
	// The reverse proposal from the proposed state.
	y := &ch.y
	ch.pg.Grad(y.g, ch.z2)
	ch.Evals++
	if err := s.fill(s.run.Ctx, y, ch.z2); err != nil {
		if s.run.Ctx.Err() == nil {
			ch.Err = fmt.Errorf("at the proposed state: %w", err)
		}
		return
	}
	var logRev float64
	for _, i := range ch.drawn {
		back := y.lw[s.off[i]+ch.Z[i]]
		if math.IsInf(back, -1) {
			logRev = negInf // the reverse move has probability zero
			break
		}
		logRev += float64(ch.cnt[i])*(y.logw[i]-y.logW) + (back - y.logw[i])
	}
	ch.logRev = logRev
	// A chain in an impossible state (possible only at the start) accepts
	// any possible proposal, even one whose reverse has probability zero.
	logA := lp2 - ch.lp + logRev - ch.logFwd
	if math.IsInf(ch.lp, -1) {
		logA = math.Inf(1)
	}
	if math.IsNaN(logA) {
		ch.Err = fmt.Errorf("acceptance ratio is NaN")
		return
	}
	ch.accProb = math.Exp(min(logA, 0))
	if logA >= 0 || math.Log(ch.R.Float64()) < logA {
		ch.Z, ch.z2 = ch.z2, ch.Z
		ch.x, ch.y = ch.y, ch.x
		ch.lp = lp2
		ch.Accepted++
	}
}

// draw draws the auxiliary variables of a proposal from the chain's
// state: the counts of the flips variables drawn with replacement (ch.cnt,
// ch.drawn) and a new state of each variable drawn, which it writes with
// the others' current states into ch.z2, and log q(c, v | x) into
// ch.logFwd. It returns false, and the proposal is abandoned, when no
// variable can move or the step's context was canceled.
func (s *MultiSampler) draw(ch *mchain, flips int) bool {
	for _, i := range ch.drawn {
		ch.cnt[i] = 0
	}
	ch.drawn = ch.drawn[:0]
	ch.logFwd, ch.logRev = math.NaN(), math.NaN()
	x := &ch.x
	if x.last < 0 {
		return false // no variable can move
	}
	// The variables, with replacement.
	for k := range flips {
		if k&(pollVars-1) == pollVars-1 && s.run.Ctx.Err() != nil {
			return false // abandoned before anything changed
		}
		i := drawVariable(x, ch.R.Float64())
		if ch.cnt[i] == 0 {
			ch.drawn = append(ch.drawn, i)
		}
		ch.cnt[i]++
	}
	// The new state of every variable drawn, and log q(c, v | x).
	copy(ch.z2, ch.Z)
	var logFwd float64
	for j, i := range ch.drawn {
		if j&(pollVars-1) == pollVars-1 && s.run.Ctx.Err() != nil {
			return false // abandoned before anything changed
		}
		a := s.off[i]
		k := s.drawState(x, i, a+ch.Z[i], ch.R.Float64())
		ch.z2[i] = k - a
		logFwd += float64(ch.cnt[i])*(x.logw[i]-x.logW) + (x.lw[k] - x.logw[i])
	}
	ch.logFwd = logFwd
	return true
}

// Current returns the chains' current states.
func (s *MultiSampler) Current() []int { return s.set.Current(s.cur, s.d) }

// Sweeps returns the number of completed steps (one proposal per chain
// each).
func (s *MultiSampler) Sweeps() int { return s.run.Done }

// Stats reports acceptance_rate, the fraction of accepted proposals so far
// (one proposal per chain and Step, each moving up to K variables; a
// proposal into a state of probability zero counts as rejected), and with
// MultiSettings.Adapt also flips, the K in use (adapted, then fixed), and
// tuned_acceptance_rate, the fraction of proposals accepted since the
// adaptation ended (0 until then). Evaluations count, per proposal, one
// log p* of the proposed state and, unless that is −Inf, one proposal
// gradient there; at the start one of each per chain.
func (s *MultiSampler) Stats() sampler.Stats { return s.run.Stats("flips", float64(s.flips)) }
