package dlmc

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/optim"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/mh"
)

// Why one file of about 600 lines: the sampler's settings, their measured defaults and the
// proposal with its Metropolis–Hastings test form one algorithm.

// Name is the name of discrete Langevin Monte Carlo with its Metropolis–Hastings test in the sampler registry; pipelines name the method by it.
const Name = "dlmc"

// UncorrectedName is the name of DLMC without the test in the sampler registry; pipelines name the method by it.
const UncorrectedName = "dlmc-uncorrected"

func init() {
	sampler.Register(sampler.Method{
		Name:        Name,
		Description: "n independent chains of discrete Langevin Monte Carlo (Sun et al. 2023): every variable jumps at once by its own gradient-guided, locally balanced jump process run for time h, then a Metropolis–Hastings test",
		NewSettings: func() sampler.Settings { return new(Settings) },
		New: func(p *sampler.Problem, s sampler.Settings) (sampler.Sampler, error) {
			return New(p, *s.(*Settings))
		},
		Iters:  500,
		Unit:   "proposal",
		Memory: memory,
	})
	sampler.Register(sampler.Method{
		Name:        UncorrectedName,
		Description: "n chains of discrete Langevin Monte Carlo without the Metropolis–Hastings test: every proposal is taken, so on coupled models the chains are biased, more so as the step size h grows",
		NewSettings: func() sampler.Settings { return new(UncorrectedSettings) },
		New: func(p *sampler.Problem, s sampler.Settings) (sampler.Sampler, error) {
			return NewUncorrected(p, *s.(*UncorrectedSettings))
		},
		Iters:       500,
		Unit:        "step",
		Memory:      memory,
		Approximate: true,
	})
}

// memory estimates the bytes of n chains on m: per chain three
// state-sized vectors (the state, the proposed one and the chain's row of
// Current), eight membership-sized ones (the proposal gradient's
// memberships, the gradients and proposals at both states), and for
// variables of q > 2 states (q the most) the kernel's work space of nine
// q×q matrices and eight rows.
func memory(m model.Model, n int, _ sampler.Settings) float64 {
	q := 0
	for i := range m.Dim() {
		q = max(q, len(m.States(i)))
	}
	kern := 0.0
	if q > 2 {
		kern = 8 * (9*float64(q*q) + 8*float64(q))
	}
	return float64(n) * (8*3*float64(m.Dim()) + 8*8*float64(sampler.States(m)) + kern + 256)
}

// DefaultStepSize is the time h that each variable's jump process runs
// when Settings.StepSize is 0 with the Sqrt balancing function, and
// DefaultRatioStepSize with Ratio (whose rates near δ = 0 are half of
// Sqrt's: σ(δ) against e^(δ/2)).
//
// They were chosen by a sweep of h on the two models of the sampling
// experiments with DMALA's protocol (DefaultStepSize in package dmala):
// 100 chains started from Γ of N(−2, 1), 8 seeds; "acc" is the
// acceptance rate over steps 101–500 and "MSE@k" the mean squared error
// of the 100 chains' means after k steps (against 20,000 exact draws;
// the i.i.d. level is ≈ 0.0100 and ≈ 0.0045):
//
//	Sqrt, h               0.05   0.1    0.15   0.2    0.3    0.5    1
//	10×10 Ising σ = 0.1
//	  acc                 0.98   0.96   0.93   0.89   0.82   0.69   0.12
//	  MSE@25              0.050  0.013  0.010  0.011  0.012  0.307  0.875
//	RBM d = 100, M = 25
//	  acc                 0.97   0.94   0.91   0.88   0.82   0.71   0.49
//	  MSE@25              0.246  0.205  0.217  0.248  0.332  0.627  0.900
//	  MSE@50              0.132  0.075  0.068  0.078  0.115  0.323  0.645
//
//	Ratio, h              0.15   0.2    0.3    0.4    0.7    1      2
//	10×10 Ising σ = 0.1
//	  acc                 0.97   0.95   0.92   0.89   0.79   0.68   0.14
//	  MSE@25              0.023  0.012  0.010  0.010  0.021  0.254  0.868
//	RBM d = 100, M = 25
//	  acc                 0.93   0.91   0.89   0.86   0.80   0.74   0.55
//	  MSE@50              0.247  0.225  0.212  0.200  0.242  0.305  0.531
//
// (columns from 0.3 on with Sqrt and from 0.7 on with Ratio: 4 seeds). On
// both models the chains burn in fastest at h = 0.15 with Sqrt, and at
// h = 0.3–0.4 with Ratio, whose rates saturate at 1 where a move gains
// much probability, so that from a poor start the chains climb more
// slowly than with Sqrt at any h. Longer times propose more moves than
// the Metropolis–Hastings test accepts from the start's unlikely states.
// Like DMALA's, these defaults are too long for models of many more
// variables; Settings.Adapt tunes h to the model.
const (
	DefaultStepSize      = 0.15
	DefaultRatioStepSize = 0.3
)

// DefaultTargetAcceptance is the acceptance rate that the adaptation of h
// aims for when Settings.TargetAcceptance is 0: 0.574, the optimal rate of
// locally balanced proposals (Sun et al. 2022), the target of DISCS's
// adaptive DLMC.
const DefaultTargetAcceptance = 0.574

// Limits of the adapted step size.
const (
	minAdaptStep = 1e-9
	maxAdaptStep = 1e9
)

// adaptGain is the gain γ of the adaptation on log h: after each adaptive
// step log h moves by γ times the difference between the chains' mean
// acceptance probability and the target. For small h the expected number
// of jumps is about h times the sum of the rates, so log h is the log of
// the number of moved variables, on which the acceptance rate changes at a
// rate that hardly depends on the number of variables; DMALA's adaptation
// moves its log-odds penalty 1/α, the same scale, with the same gain (see
// dmala's adaptGain for why 0.5).
const adaptGain = 0.5

// Settings configure the sampler. The zero value is valid.
type Settings struct {
	// StepSize is the time h > 0 for which each variable's jump process
	// runs; 0 means DefaultStepSize (DefaultRatioStepSize with Ratio).
	// Longer times move more variables and are accepted less often. With
	// Adapt it is where the adaptation starts.
	StepSize float64 `json:"step_size" flag:"step-size,positive" help:"step size: DHMC's integration step ε, DMALA's proposal step α, DLMC's time h"`
	// Balance is the locally balanced function of the jump rates:
	// Sqrt (the default) or Ratio.
	Balance Balance `json:"balance" flag:"balance" help:"locally balanced function g that weighs a move of estimated probability ratio t (DLMC's jump rates, PAS's and gwg-multi's move weights): sqrt (g(t) = √t, the default) or ratio (g(t) = t/(1+t)); DLMC's default --step-size and PAS's default --path-length depend on it"`
	// Adapt is the number of steps at the start of the run during which
	// h is adapted to an acceptance rate of TargetAcceptance (see the
	// package comment); from then on h stays at the geometric mean of its
	// adapted values over the second half of those steps, so that the
	// chains are time-homogeneous Metropolis–Hastings chains that leave
	// p* invariant. Keep them within the warm-up (Tuning reports them).
	// 0, the default: h stays StepSize throughout.
	Adapt int `json:"adapt,omitempty" flag:"adapt" help:"adapt the proposal's size (DMALA's α, DLMC's h, PAS's mean path length R, gwg-multi's flips K; starting from --step-size, --path-length or --flips) to the --target-acceptance rate during this many first steps, then keep it fixed; keep them within the warm-up (0: no adaptation)"`
	// TargetAcceptance is the acceptance rate in (0, 1) that Adapt aims
	// for; 0 means DefaultTargetAcceptance (0.574). It applies only with
	// Adapt.
	TargetAcceptance float64 `json:"target_acceptance,omitempty" flag:"target-acceptance,positive" help:"the acceptance rate that --adapt aims for, in (0, 1) (default 0.574 when --adapt is given)"`
}

// Validate reports a step size that is not a finite number > 0 (or 0), an
// unknown balancing function, a negative Adapt, a target acceptance rate
// outside (0, 1) (or 0) and a target without Adapt.
func (s *Settings) Validate() error {
	if err := validateCommon(s.StepSize, s.Balance); err != nil {
		return err
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

func validateCommon(h float64, b Balance) error {
	if h < 0 || math.IsNaN(h) || math.IsInf(h, 0) {
		return fmt.Errorf("step size h is %v; want a finite number > 0 (0 means %v with sqrt, %v with ratio)", h, DefaultStepSize, DefaultRatioStepSize)
	}
	if b != Sqrt && b != Ratio {
		return fmt.Errorf("unknown balancing function %d", int(b))
	}
	return nil
}

// Resolved returns the settings with the default step size filled in, and
// with Adapt the default target acceptance rate.
func (s *Settings) Resolved() sampler.Settings {
	r := *s
	r.StepSize = defaultStep(r.StepSize, r.Balance)
	if r.Adapt > 0 && r.TargetAcceptance == 0 {
		r.TargetAcceptance = DefaultTargetAcceptance
	}
	return &r
}

// defaultStep returns h, or when it is 0 the default step size of b.
func defaultStep(h float64, b Balance) float64 {
	switch {
	case h != 0:
		return h
	case b == Ratio:
		return DefaultRatioStepSize
	}
	return DefaultStepSize
}

// UncorrectedSettings configure the sampler without the
// Metropolis–Hastings test (NewUncorrected). The zero value is valid.
type UncorrectedSettings struct {
	// StepSize is the time h > 0 of the jump processes; 0 means
	// DefaultStepSize (DefaultRatioStepSize with Ratio). The bias of the
	// chains grows with it.
	StepSize float64 `json:"step_size" flag:"step-size,positive" help:"step size: DHMC's integration step ε, DMALA's proposal step α, DLMC's time h"`
	// Balance is the locally balanced function of the jump rates.
	Balance Balance `json:"balance" flag:"balance" help:"locally balanced function g that weighs a move of estimated probability ratio t (DLMC's jump rates, PAS's and gwg-multi's move weights): sqrt (g(t) = √t, the default) or ratio (g(t) = t/(1+t)); DLMC's default --step-size and PAS's default --path-length depend on it"`
}

// Validate reports a step size that is not a finite number > 0 (or 0) and
// an unknown balancing function.
func (s *UncorrectedSettings) Validate() error { return validateCommon(s.StepSize, s.Balance) }

// Resolved returns the settings with the default step size filled in.
func (s *UncorrectedSettings) Resolved() sampler.Settings {
	r := *s
	r.StepSize = defaultStep(r.StepSize, r.Balance)
	return &r
}

// Sampler is the state of n chains. It is not safe for concurrent use.
type Sampler struct {
	name    string // Name or UncorrectedName, for errors
	m       model.Model
	off     []int
	n, d    int
	bal     Balance
	correct bool
	h, logH float64
	chains  []chain
	set     mh.Set
	cur     []int
	// run is the step loop and the adaptation of h (Settings.Adapt): the
	// recursion on log h.
	run mh.Steps
}

type chain struct {
	mh.Chain                      // the state Z, stream, counters
	pg       *model.ProposalGrads // the proposal gradient at whole states
	k        *kernel              // work space of the many-state transition probabilities
	z2       []int                // the proposed state
	g, g2    []float64            // the proposal gradient at Z and at the proposed state
	logq, q  []float64            // log q_i(s | Z) and q_i(s | Z) of every variable and state
	logq2    []float64            // the same at the proposed state
	q2       []float64            // the same at the proposed state
	lp       float64              // log p*(Z)
	logH     float64              // the log h with which logq and q were filled
	accProb  float64              // the acceptance probability of the last proposal
	moved    int64                // variables changed by the accepted proposals
}

// New starts n = p.N chains of DLMC with the Metropolis–Hastings test at
// the states p.Z; chain c draws from p.Key.ForIndex(rng.Sample, c).
func New(p *sampler.Problem, set Settings) (*Sampler, error) {
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("dlmc: %w", err)
	}
	set = *set.Resolved().(*Settings)
	s, err := start(Name, p, set.StepSize, set.Balance, true)
	if err != nil {
		return nil, err
	}
	s.run.Adapt = set.Adapt
	s.run.Ad = optim.Averaged{X: s.logH, Gain: adaptGain, Target: set.TargetAcceptance, Lo: math.Log(minAdaptStep), Hi: math.Log(maxAdaptStep), Steps: set.Adapt}
	return s, nil
}

// NewUncorrected starts n = p.N chains of DLMC that take every proposal
// (no Metropolis–Hastings test): on coupled models they do not leave p*
// invariant (see the package comment).
func NewUncorrected(p *sampler.Problem, set UncorrectedSettings) (*Sampler, error) {
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("dlmc-uncorrected: %w", err)
	}
	set = *set.Resolved().(*UncorrectedSettings)
	return start(UncorrectedName, p, set.StepSize, set.Balance, false)
}

func start(name string, p *sampler.Problem, h float64, bal Balance, correct bool) (*Sampler, error) {
	rm, off, base, err := mh.Start(name, p)
	if err != nil {
		return nil, err
	}
	m, n, d := p.Model, p.N, p.Model.Dim()
	s := &Sampler{name: name, m: rm, off: off, n: n, d: d, bal: bal, correct: correct, h: h, logH: math.Log(h),
		chains: make([]chain, n), set: make(mh.Set, n), cur: make([]int, n*d)}
	s.run = mh.Steps{Pkg: name, Set: s.set, Ctx: context.Background()}
	q := 0
	for i := range d {
		q = max(q, off[i+1]-off[i])
	}
	f := off[d]
	for c := range s.chains {
		ch := &s.chains[c]
		ch.Chain = base[c]
		s.set[c] = &ch.Chain
		ch.Mem = nil // the proposal gradient keeps what it needs
		ch.pg = model.NewProposalGrads(m)
		if q > 2 {
			ch.k = newKernel(q)
		}
		ch.z2 = make([]int, d)
		ch.g, ch.g2 = make([]float64, f), make([]float64, f)
		ch.logq, ch.logq2 = make([]float64, f), make([]float64, f)
		ch.q, ch.q2 = make([]float64, f), make([]float64, f)
		ch.pg.Grad(ch.g, ch.Z)
		ch.Evals++
		if correct {
			ch.lp = m.LogProb(ch.Z)
			ch.Evals++
		}
		ch.logH = s.logH
		if err := s.fill(context.Background(), ch, ch.logq, ch.q, ch.g, ch.Z); err != nil {
			return nil, fmt.Errorf("%s: chain %d at its initial state: %w", name, c, err)
		}
	}
	return s, nil
}

// StepSize returns h: with Settings.Adapt, the adapted value in use (fixed
// once Tuning reports false).
func (s *Sampler) StepSize() float64 { return s.h }

// Tuning reports whether the step size is still being adapted: whether
// the next Step's proposals may use another h than the last Step's (see
// Settings.Adapt).
func (s *Sampler) Tuning() bool { return s.run.Tuning() }

// Step makes one proposal in every chain. Each chain looks at ctx before
// its proposal and every pollVars variables while it draws one or fills
// the proposal at a state; when ctx is canceled the chains stop, each with
// its proposal made or abandoned, and Step returns ctx.Err(), from then on
// (see sampler.Sampler).
//
// During the adaptive steps (Settings.Adapt) h follows a Robbins–Monro
// recursion with Polyak averaging (mh.Steps): log h rises by
// adaptGain·(ā − target), where ā is the chains' mean acceptance
// probability min(1, ratio) of their last proposals (less noisy than the
// fraction accepted), so that h shrinks while proposals are accepted less
// often than the target and grows while they are accepted more often.
// After the last adaptive step h is fixed at the average of log h over the
// second half of the adaptive steps.
func (s *Sampler) Step(ctx context.Context) error {
	u, adapted, err := s.run.Step(ctx, s, func(c int) float64 { return s.chains[c].accProb })
	if adapted {
		s.logH, s.h = u, math.Exp(u)
	}
	return err
}

// pollVars is the number of variables between two looks at the context
// inside one proposal; filling the proposal of a variable of more than
// pollStates states, which costs O(q²) to O(q³) per term of a series
// or O(q³) per Jacobi sweep, looks at it first.
const (
	pollVars   = 1 << 14
	pollStates = 16
)

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
		if ch.logH != s.logH {
			// h was adapted since this chain's forward proposal was
			// filled: fill it again from the gradient kept with it (into
			// the spare vectors, so that a canceled fill leaves it whole).
			if err := s.fill(s.run.Ctx, ch, ch.logq2, ch.q2, ch.g, ch.Z); err != nil {
				if s.run.Ctx.Err() == nil {
					ch.Err = err
				}
				continue
			}
			ch.logq, ch.logq2 = ch.logq2, ch.logq
			ch.q, ch.q2 = ch.q2, ch.q
			ch.logH = s.logH
		}
		s.propose(ch)
	}
}

// fill writes log q_i(s | z) and q_i(s | z), the transition probabilities
// of variable i's jump process from z_i over time h, of every variable
// and state into logq and q, for the state z with proposal gradient g
// (twoState for two possible states, the chain's kernel for more). It
// fails when an entry of g is NaN or +Inf, or when ctx is canceled (it
// looks every pollVars variables, and before each variable of more than
// pollStates states).
func (s *Sampler) fill(ctx context.Context, ch *chain, logq, q, g []float64, z []int) error {
	for i := range s.d {
		a, b := s.off[i], s.off[i+1]
		if i&(pollVars-1) == pollVars-1 || b-a > pollStates {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		cur := a + z[i]
		if b-a == 2 {
			o := a + b - 1 - cur
			delta := g[o] - g[cur]
			if math.IsNaN(delta) || math.IsInf(delta, 1) {
				return fmt.Errorf("estimated log-ratio of variable %d's move is %v", i, delta)
			}
			q[o], q[cur], logq[o], logq[cur] = twoState(s.bal, delta, s.h)
			continue
		}
		if b-a == 1 {
			logq[a], q[a] = 0, 1
			continue
		}
		if err := ch.k.row(logq[a:b], q[a:b], g[a:b], z[i], s.h, s.bal); err != nil {
			return fmt.Errorf("variable %d: %w", i, err)
		}
	}
	return nil
}

// propose draws z' from the cached forward proposal, one variable at a
// time, and accepts it by the Metropolis–Hastings test (or takes it,
// without the correction).
func (s *Sampler) propose(ch *chain) {
	ch.accProb = 0
	var logFwd float64
	changed := 0
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
		if k-a != ch.Z[i] {
			changed++
		}
		logFwd += ch.logq[k]
	}
	if !s.correct {
		// Take the proposal: only the proposal at z' is needed, for the
		// next step.
		ch.pg.Grad(ch.g2, ch.z2)
		ch.Evals++
		if err := s.fill(s.run.Ctx, ch, ch.logq2, ch.q2, ch.g2, ch.z2); err != nil {
			if s.run.Ctx.Err() == nil {
				ch.Err = fmt.Errorf("at the proposed state: %w", err)
			}
			return // abandoned before anything changed
		}
		s.accept(ch, changed)
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
	// The reverse proposal from z'.
	ch.pg.Grad(ch.g2, ch.z2)
	ch.Evals++
	if err := s.fill(s.run.Ctx, ch, ch.logq2, ch.q2, ch.g2, ch.z2); err != nil {
		if s.run.Ctx.Err() == nil {
			ch.Err = fmt.Errorf("at the proposed state: %w", err)
		}
		return
	}
	var logRev float64
	for i := range s.d {
		logRev += ch.logq2[s.off[i]+ch.Z[i]]
	}
	// A chain in an impossible state (possible only at the start) accepts
	// any possible proposal, even one whose reverse has probability zero.
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
		ch.lp = lp2
		s.accept(ch, changed)
	}
}

// accept moves the chain to the proposed state, with its gradient and
// proposal.
func (s *Sampler) accept(ch *chain, changed int) {
	ch.Z, ch.z2 = ch.z2, ch.Z
	ch.g, ch.g2 = ch.g2, ch.g
	ch.logq, ch.logq2 = ch.logq2, ch.logq
	ch.q, ch.q2 = ch.q2, ch.q
	ch.Accepted++
	ch.moved += int64(changed)
}

// Current returns the chains' current states.
func (s *Sampler) Current() []int { return s.set.Current(s.cur, s.d) }

// Sweeps returns the number of completed steps (one proposal per chain
// each).
func (s *Sampler) Sweeps() int { return s.run.Done }

// Stats reports, with the Metropolis–Hastings test, acceptance_rate, the
// fraction of accepted proposals so far (one proposal per chain and Step,
// each moving any number of variables; a proposal into a state of
// probability zero counts as rejected), and with Settings.Adapt also
// step_size, the h in use (adapted, then fixed), and
// tuned_acceptance_rate, the fraction of proposals accepted since the
// adaptation ended (0 until then). Without the test it reports
// moved_fraction, the mean fraction of the variables that a step changed.
// Evaluations count, per proposal, one log p* of the proposed state (none
// without the test) and, unless that is −Inf, one proposal gradient
// there; at the start one gradient per chain and, with the test, one
// log p*.
func (s *Sampler) Stats() sampler.Stats {
	st := sampler.Stats{Evaluations: s.set.Evaluations()}
	if !s.correct {
		var moved int64
		for c := range s.chains {
			moved += s.chains[c].moved
		}
		frac := 0.0
		if s.run.Done > 0 {
			frac = float64(moved) / (float64(s.run.Done) * float64(s.n) * float64(s.d))
		}
		st.Values = []sampler.Stat{{Name: "moved_fraction", Value: frac}}
		return st
	}
	return s.run.Stats("step_size", s.h)
}
