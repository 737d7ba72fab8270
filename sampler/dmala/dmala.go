package dmala

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/optim"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/mh"
)

// Name is the name of DMALA in the sampler registry; pipelines name the method by it.
const Name = "dmala"

func init() {
	sampler.Register(sampler.Method{
		Name:        Name,
		Description: "n independent chains of the discrete Metropolis-adjusted Langevin sampler (Zhang et al. 2022): one proposal moves every variable, guided by a gradient of the model (its proposal gradient or its relaxation's)",
		NewSettings: func() sampler.Settings { return new(Settings) },
		New: func(p *sampler.Problem, s sampler.Settings) (sampler.Sampler, error) {
			return New(p, *s.(*Settings))
		},
		Iters: 500,
		Unit:  "proposal",
		Memory: func(m model.Model, n int, _ sampler.Settings) float64 {
			// Per chain: two states and seven membership-sized vectors
			// (the proposal gradient's one-hot memberships among them).
			return float64(n) * (8*3*float64(m.Dim()) + 8*7*float64(sampler.States(m)) + 256)
		},
	})
}

// DefaultStepSize is the step size α used when Settings.StepSize is 0.
//
// It was chosen by a sweep of α on the two models of the sampling
// experiments with their protocol: 100 chains started from Γ of N(−2, 1),
// 8 seeds; "acc" is the acceptance rate over steps 101–500 and "MSE@k" the
// mean squared error of the 100 chains' means after k steps (MSE@500 was at
// the i.i.d. level, ≈ 0.0097 and ≈ 0.0045, for every α in 0.4–1.0 and does
// not discriminate):
//
//	α                     0.3    0.4    0.5    0.6    0.7    0.8    1.0    1.2
//	10×10 Ising σ = 0.1
//	  acc                 0.98   0.94   0.89   0.83   0.78   0.72   0.57   0.34
//	  MSE@25              0.106  0.021  0.013  0.020  0.090  0.277  0.644  0.806
//	  MSE@50              0.022  0.010  0.011  0.011  0.012  0.061  0.433  0.696
//	RBM d = 100, M = 25
//	  acc                 0.95   0.83   0.70   0.58   0.47   0.39   0.28   0.21
//	  MSE@25              0.242  0.155  0.111  0.095  0.091  0.082  0.085  0.086
//	  MSE@50              0.145  0.068  0.042  0.034  0.037  0.036  0.039  0.042
//
// α = 0.6 puts the RBM in the 0.5–0.6 acceptance band recommended for
// Langevin-type proposals, where its burn-in is about as fast as it gets.
// On the Ising grid that band (α ≈ 1) burns in very slowly from the
// all-but-aligned start, so the default does not aim for it there; at
// α = 0.6 the grid accepts 83% and is burnt in after 50 steps. In the
// paper's {0, 1} coding the default is α_paper = 0.3. On models of many
// more variables it is too large (0.17 of the proposals accepted on 200
// categorical variables of 4 states, 0.04 on 2000): Settings.Adapt tunes
// α to the model (the package comment, "Step size and its adaptation").
const DefaultStepSize = 0.6

// DefaultTargetAcceptance is the acceptance rate that the step size's
// adaptation aims for when Settings.TargetAcceptance is 0: 0.574, the
// optimal rate of Langevin proposals in many dimensions (Roberts and
// Rosenthal 1998), which the DISCS benchmark's adaptive DMALA also aims
// for. On 200 categorical variables of 4 states it gives α ≈ 0.38, where
// the draws estimate the marginals about as well per step as at any step
// size (3.8× the RMSE of independent draws, one draw per step, against
// 3.9–4.0 at α = 0.4–0.45, acceptance 0.53–0.42, and 4.4 at α = 0.3 and
// 0.5, acceptance 0.82 and 0.31).
const DefaultTargetAcceptance = 0.574

// Limits of the adapted step size: α stays within [minAdaptStep,
// maxAdaptStep], so that 1/α, a move's log-odds penalty against staying,
// lies within [0.01, 100]. At 0.01 the gradient alone weighs a move
// against staying; at 100 hardly a variable of any model moves.
const (
	minAdaptStep = 0.01
	maxAdaptStep = 100.0
)

// adaptGain is the gain γ of the adaptation: after each adaptive step the
// penalty 1/α of a move changes by γ times the difference between the
// chains' mean acceptance probability and the target. On many variables
// the acceptance rate falls by about 0.3–0.5 per unit of 1/α near the
// target (200 categorical variables of 4 states: 0.82 at 1/α = 3.3, 0.53
// at 2.5, 0.31 at 2), so 1/α recovers from an error at about 20% a step,
// while the noise of a few chains' acceptance moves it by about a tenth of
// a unit. The gain stays constant rather than decaying, so that the large
// acceptance rates of the first steps, while the chains fall from their
// start towards the typical set, are forgotten within a few steps (with a
// gain decaying from 1.5 as t^−0.6 they pushed α to 1.5 within 6 steps,
// and 50 adaptive steps left it at 0.43–0.50, accepting 0.29–0.47, where
// γ = 0.5 gives the numbers below); the average over the second
// half of the adaptive steps removes the noise. With γ = 0.5 on that model
// and 4 chains, 50, 100 or 250 adaptive steps put α at 0.36–0.41 (keys
// 1–5) and the acceptance rate of the next steps at 0.51–0.64.
const adaptGain = 0.5

// Settings configure the sampler. The zero value is valid.
type Settings struct {
	// StepSize is α > 0 of the proposal; 0 means DefaultStepSize. Larger
	// steps propose more moves and are accepted less often. With Adapt
	// it is where the adaptation starts.
	StepSize float64 `json:"step_size" flag:"step-size,positive" help:"step size: DHMC's integration step ε, DMALA's proposal step α, DLMC's time h"`
	// Adapt is the number of steps at the start of the run during which
	// the step size is adapted to an acceptance rate of TargetAcceptance
	// (see the package comment); from then on α stays at the average of
	// its adapted values over the second half of those steps, so that the
	// chains are time-homogeneous Metropolis–Hastings chains that leave
	// p* invariant. Keep them within the warm-up: draws kept while α still
	// moves are not draws of one exact chain (Tuning reports those steps,
	// and infer's adaptive runs wait for them). 0, the default: α stays
	// StepSize throughout.
	Adapt int `json:"adapt,omitempty" flag:"adapt" help:"adapt the proposal's size (DMALA's α, DLMC's h, PAS's mean path length R, gwg-multi's flips K; starting from --step-size, --path-length or --flips) to the --target-acceptance rate during this many first steps, then keep it fixed; keep them within the warm-up (0: no adaptation)"`
	// TargetAcceptance is the acceptance rate in (0, 1) that Adapt aims
	// for; 0 means DefaultTargetAcceptance (0.574). It applies only with
	// Adapt.
	TargetAcceptance float64 `json:"target_acceptance,omitempty" flag:"target-acceptance,positive" help:"the acceptance rate that --adapt aims for, in (0, 1) (default 0.574 when --adapt is given)"`
}

// Validate reports a step size that is not a finite number > 0 (or 0), a
// negative Adapt, a target acceptance rate outside (0, 1) (or 0) and a
// target without Adapt.
func (s *Settings) Validate() error {
	if a := s.StepSize; a < 0 || math.IsNaN(a) || math.IsInf(a, 0) {
		return fmt.Errorf("step size α is %v; want a finite number > 0 (0 means %v)", a, DefaultStepSize)
	}
	if s.Adapt < 0 {
		return fmt.Errorf("adapt is %d; want a number of steps ≥ 0 (0: no adaptation)", s.Adapt)
	}
	if r := s.TargetAcceptance; !(r >= 0 && r < 1) {
		return fmt.Errorf("target acceptance rate is %v; want a number in (0, 1) (0 means %v)", r, DefaultTargetAcceptance)
	}
	if s.TargetAcceptance != 0 && s.Adapt == 0 {
		return fmt.Errorf("target acceptance rate %v without adapt steps: it applies only while the step size adapts (adapt > 0)", s.TargetAcceptance)
	}
	return nil
}

// Resolved returns the settings with the default step size filled in, and
// with Adapt the default target acceptance rate (without Adapt the target
// stays 0, so that the settings of a run without adaptation read as they
// did before adaptation existed).
func (s *Settings) Resolved() sampler.Settings {
	r := *s
	if r.StepSize == 0 {
		r.StepSize = DefaultStepSize
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
	alpha  float64
	invA   float64 // 1/α
	chains []chain
	set    mh.Set
	cur    []int
	// run is the step loop and the adaptation of α (Settings.Adapt): the
	// recursion on 1/α.
	run mh.Steps
}

type chain struct {
	mh.Chain                      // the state Z, stream, counters
	pg       *model.ProposalGrads // the proposal gradient at whole states
	z2       []int                // the proposed state
	g, g2    []float64            // the proposal gradient at Z and at the proposed state
	logq, q  []float64            // log q_i(s | Z) and q_i(s | Z) of every variable and state
	logq2    []float64            // the same at the proposed state
	q2       []float64            // the same at the proposed state
	lp       float64              // log p*(Z)
	invA     float64              // the 1/α with which logq and q were filled
	accProb  float64              // the acceptance probability of the last proposal
}

// New starts n = p.N chains at the states p.Z; chain c draws from
// p.Key.ForIndex(rng.Sample, c).
func New(p *sampler.Problem, set Settings) (*Sampler, error) {
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("dmala: %w", err)
	}
	set = *set.Resolved().(*Settings)
	rm, off, base, err := mh.Start(Name, p)
	if err != nil {
		return nil, err
	}
	m, n, d := p.Model, p.N, p.Model.Dim()
	s := &Sampler{m: rm, off: off, n: n, d: d, alpha: set.StepSize, invA: 1 / set.StepSize, chains: make([]chain, n), set: make(mh.Set, n), cur: make([]int, n*d)}
	s.run = mh.Steps{Pkg: Name, Set: s.set, Adapt: set.Adapt, Ctx: context.Background()}
	s.run.Ad = optim.Averaged{X: s.invA, Gain: -adaptGain, Target: set.TargetAcceptance, Lo: 1 / maxAdaptStep, Hi: 1 / minAdaptStep, Steps: set.Adapt}
	f := off[d]
	for c := range s.chains {
		ch := &s.chains[c]
		ch.Chain = base[c]
		s.set[c] = &ch.Chain
		ch.Mem = nil // the proposal gradient keeps what it needs
		ch.pg = model.NewProposalGrads(m)
		ch.z2 = make([]int, d)
		ch.g, ch.g2 = make([]float64, f), make([]float64, f)
		ch.logq, ch.logq2 = make([]float64, f), make([]float64, f)
		ch.q, ch.q2 = make([]float64, f), make([]float64, f)
		ch.pg.Grad(ch.g, ch.Z)
		ch.lp = m.LogProb(ch.Z)
		ch.Evals += 2
		ch.invA = s.invA
		if err := s.fill(ch.logq, ch.q, ch.g, ch.Z); err != nil {
			return nil, fmt.Errorf("dmala: chain %d at its initial state: %w", c, err)
		}
	}
	return s, nil
}

// StepSize returns α: with Settings.Adapt, the adapted value in use (fixed
// once Tuning reports false).
func (s *Sampler) StepSize() float64 { return s.alpha }

// Tuning reports whether the step size is still being adapted: whether
// the next Step's proposals may use another α than the last Step's (see
// Settings.Adapt).
func (s *Sampler) Tuning() bool { return s.run.Tuning() }

// Step makes one proposal in every chain. Each chain looks at ctx before
// its proposal, while it draws one (every pollVars variables) and before
// the reverse proposal; when ctx is canceled the chains stop, each with
// its proposal made or abandoned, and Step returns ctx.Err(), from then
// on (see sampler.Sampler).
//
// During the adaptive steps (Settings.Adapt) the step size follows a
// Robbins–Monro recursion with Polyak averaging (mh.Steps): the penalty
// 1/α of a move falls by adaptGain·(ā − target), where ā is the chains'
// mean acceptance probability min(1, ratio) of their last proposals (less
// noisy than the fraction accepted), so that it rises while proposals are
// accepted less often than the target and falls while they are accepted
// more often. 1/α = −log τ, where τ is the odds of a move against staying
// (before the gradient's factor), so it moves on the log scale of the
// number of moved variables, on which the acceptance rate changes at a
// rate that hardly depends on the number of variables. After the last
// adaptive step α is fixed at the average of 1/α over the second half of
// the adaptive steps.
func (s *Sampler) Step(ctx context.Context) error {
	u, adapted, err := s.run.Step(ctx, s, func(c int) float64 { return s.chains[c].accProb })
	if adapted {
		s.invA, s.alpha = u, 1/u
	}
	return err
}

// pollVars is the number of variables drawn between two looks at the
// context inside one proposal.
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
		if ch.invA != s.invA {
			// α was adapted since this chain's forward proposal was
			// filled: fill it again from the gradient kept with it.
			if err := s.fill(ch.logq, ch.q, ch.g, ch.Z); err != nil {
				ch.Err = err
				continue
			}
			ch.invA = s.invA
		}
		s.propose(ch)
	}
}

// fill writes log q_i(s | z) and q_i(s | z) of every variable and state
// into logq and q, for the state z with gradient g. A logit of −Inf (a
// move into a zero of p*, by the proposal gradient) gives the move
// probability 0; fill fails when a logit is NaN or +Inf.
func (s *Sampler) fill(logq, q, g []float64, z []int) error {
	for i := range s.d {
		a, b := s.off[i], s.off[i+1]
		cur := a + z[i]
		if b-a == 2 {
			// Two states: the move's logit l against 0 for staying, so
			// log q(move) = −log(1 + e^−l) and log q(stay) = −log(1 + e^l).
			o := a + b - 1 - cur
			l := (g[o]-g[cur])/2 - s.invA
			if math.IsNaN(l) || math.IsInf(l, 1) {
				return fmt.Errorf("proposal logit of variable %d is %v", i, l)
			}
			e := math.Exp(-math.Abs(l))
			sp := math.Log1p(e) // log(1 + e^−|l|)
			if l > 0 {
				logq[o], logq[cur] = -sp, -l-sp
				q[o] = 1 / (1 + e)
				q[cur] = 1 - q[o]
			} else {
				logq[o], logq[cur] = l-sp, -sp
				q[cur] = 1 / (1 + e)
				q[o] = 1 - q[cur]
			}
			continue
		}
		top := 0.0 // staying has logit 0
		for k := a; k < b; k++ {
			l := 0.0
			if k != cur {
				l = (g[k]-g[cur])/2 - s.invA
			}
			if math.IsNaN(l) || math.IsInf(l, 1) {
				return fmt.Errorf("proposal logit of variable %d, state %d, is %v", i, k-a, l)
			}
			logq[k] = l
			top = max(top, l)
		}
		var sum float64
		for k := a; k < b; k++ {
			q[k] = math.Exp(logq[k] - top)
			sum += q[k]
		}
		lse, inv := top+math.Log(sum), 1/sum
		for k := a; k < b; k++ {
			logq[k] -= lse
			q[k] *= inv
		}
	}
	return nil
}

// propose makes one Metropolis–Hastings move of every variable at once.
func (s *Sampler) propose(ch *chain) {
	// Draw z' from the cached forward proposal, one variable at a time by
	// inverting its cumulative probabilities.
	ch.accProb = 0
	var logFwd float64
	for i := range s.d {
		if i&(pollVars-1) == pollVars-1 && s.run.Ctx.Err() != nil {
			return // abandoned before anything changed
		}
		a, b := s.off[i], s.off[i+1]
		u := ch.R.Float64()
		k, acc := b-1, 0.0
		for j := a; j < b-1; j++ {
			acc += ch.q[j]
			if u < acc {
				k = j
				break
			}
		}
		for ch.q[k] == 0 && k > a {
			k-- // u fell within rounding of 1 past the last state of positive probability
		}
		ch.z2[i] = k - a
		logFwd += ch.logq[k]
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
	// The reverse proposal from z'.
	ch.pg.Grad(ch.g2, ch.z2)
	ch.Evals++
	if err := s.fill(ch.logq2, ch.q2, ch.g2, ch.z2); err != nil {
		ch.Err = fmt.Errorf("at the proposed state: %w", err)
		return
	}
	var logRev float64
	for i := range s.d {
		logRev += ch.logq2[s.off[i]+ch.Z[i]]
	}
	// A chain in an impossible state (possible only at the start) accepts
	// any possible proposal, even one whose reverse has probability zero
	// (logRev = −Inf: a move back into a zero of p*).
	logA := lp2 - ch.lp + logRev - logFwd
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
		ch.g, ch.g2 = ch.g2, ch.g
		ch.logq, ch.logq2 = ch.logq2, ch.logq
		ch.q, ch.q2 = ch.q2, ch.q
		ch.lp = lp2
		ch.Accepted++
	}
}

// Current returns the chains' current states.
func (s *Sampler) Current() []int { return s.set.Current(s.cur, s.d) }

// Sweeps returns the number of completed steps (one proposal per chain
// each).
func (s *Sampler) Sweeps() int { return s.run.Done }

// Stats reports acceptance_rate, the fraction of accepted proposals so
// far (one proposal per chain and Step, each moving any number of
// variables; a proposal into a state of probability zero counts as
// rejected). With Settings.Adapt it also reports step_size, the α in use
// (adapted, then fixed), and tuned_acceptance_rate, the fraction of
// proposals accepted since the adaptation ended (0 until then): the rate
// of the exact chains. Evaluations count, per proposal, one log p* of the
// proposed state and, unless that is −Inf, one proposal gradient there;
// two more per chain at the start.
func (s *Sampler) Stats() sampler.Stats { return s.run.Stats("step_size", s.alpha) }
