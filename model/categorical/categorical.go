package categorical

import (
	"fmt"
	"math"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
)

// SumTolerance is how far the probabilities of one variable may sum from one
// before New rejects them. Accepted probabilities are renormalised exactly.
const SumTolerance = 1e-6

// Variable is one categorical variable: its state values, in order, and the
// probability of each.
type Variable struct {
	States []float64
	Probs  []float64
}

// Categorical is a product of independent categorical variables.
type Categorical struct {
	states  [][]float64
	probs   [][]float64
	logp    [][]float64
	offsets []int
}

var (
	_ model.Model       = (*Categorical)(nil)
	_ model.Conditional = (*Categorical)(nil)
	_ model.Delta       = (*Categorical)(nil)
	_ model.Relaxed     = (*Categorical)(nil)
	_ model.Support     = (*Categorical)(nil)

	_ model.RelaxedIncremental  = (*Categorical)(nil)
	_ model.ProposalIncremental = (*Categorical)(nil)
)

// MaxStateValue bounds the magnitude of a state value: the summaries
// square values (variances, MCSE), and 1e150² = 1e300 stays finite where
// 1e308 would not.
const MaxStateValue = 1e150

// New checks the variables and returns the model. Each variable needs at
// least one state, distinct finite state values, one finite non-negative
// probability per state, and probabilities that sum to one within
// SumTolerance.
func New(vars []Variable) (*Categorical, error) {
	if len(vars) == 0 {
		return nil, fmt.Errorf("categorical model has no variables")
	}
	c := &Categorical{offsets: make([]int, len(vars)+1)}
	for i, v := range vars {
		if len(v.States) == 0 {
			return nil, fmt.Errorf("variable %d has no states", i)
		}
		if len(v.Probs) != len(v.States) {
			return nil, fmt.Errorf("variable %d has %d states but %d probabilities", i, len(v.States), len(v.Probs))
		}
		seen := make(map[float64]bool, len(v.States))
		for s, x := range v.States {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("variable %d: state %d has value %v; want a finite number", i, s, x)
			}
			if math.Abs(x) > MaxStateValue {
				return nil, fmt.Errorf("variable %d: state %d has value %v; want at most %g in magnitude (means, variances and error bars square the values, which must stay finite)", i, s, x, MaxStateValue)
			}
			if seen[x] {
				return nil, fmt.Errorf("variable %d: state value %v is listed twice", i, x)
			}
			seen[x] = true
		}
		var sum float64
		for s, p := range v.Probs {
			if math.IsNaN(p) || math.IsInf(p, 0) || p < 0 {
				return nil, fmt.Errorf("variable %d: probability of state %v is %v; want a finite number ≥ 0", i, v.States[s], p)
			}
			sum += p
		}
		if math.Abs(sum-1) > SumTolerance {
			return nil, fmt.Errorf("variable %d: probabilities sum to %v; want 1 (within %g)", i, sum, SumTolerance)
		}
		st := append([]float64(nil), v.States...)
		pr := make([]float64, len(v.Probs))
		lp := make([]float64, len(v.Probs))
		for s, p := range v.Probs {
			pr[s] = p / sum
			lp[s] = math.Log(pr[s])
		}
		c.states = append(c.states, st)
		c.probs = append(c.probs, pr)
		c.logp = append(c.logp, lp)
		c.offsets[i+1] = c.offsets[i] + len(st)
	}
	return c, nil
}

// Dim returns the number of variables.
func (c *Categorical) Dim() int { return len(c.states) }

// States returns the state values of variable i.
func (c *Categorical) States(i int) []float64 { return c.states[i] }

// Probs returns the (normalised) probabilities of variable i's states. The
// caller must not modify the slice.
func (c *Categorical) Probs(i int) []float64 { return c.probs[i] }

// Possible reports whether state s of variable i has positive probability.
func (c *Categorical) Possible(i, s int) bool { return c.probs[i][s] > 0 }

// LogProb returns Σ_i log p_i(z_i); it is the normalised log-probability.
func (c *Categorical) LogProb(z []int) float64 {
	var s float64
	for i, zi := range z {
		s += c.logp[i][zi]
	}
	return s
}

// LogConditional writes log p_i(s) for each state s of variable i.
func (c *Categorical) LogConditional(dst []float64, z []int, i int) []float64 {
	return append(dst[:0], c.logp[i]...)
}

// DeltaLogProb returns log p_i(s) − log p_i(z_i), and 0 when both are zero
// probability.
func (c *Categorical) DeltaLogProb(z []int, i, s int) float64 {
	a, b := c.logp[i][s], c.logp[i][z[i]]
	if math.IsInf(a, -1) && math.IsInf(b, -1) {
		return 0
	}
	return a - b
}

// RelaxedLogProb is the multilinear extension Σ_i log Σ_s m_is p_i(s): the
// log of the expected probability under independent soft memberships. It is
// finite wherever some state of positive probability has positive
// membership, and its gradient is p_i(s) / Σ_s' m_is' p_i(s').
func (c *Categorical) RelaxedLogProb(grad, m []float64) float64 {
	var f float64
	for i, pr := range c.probs {
		off := c.offsets[i]
		var e float64
		for s, p := range pr {
			e += m[off+s] * p
		}
		f += math.Log(e)
		if grad != nil {
			inv := 1 / e
			for s, p := range pr {
				grad[off+s] = p * inv
			}
		}
	}
	return f
}

// Bytes returns the model's size: per variable three lists (24-byte
// headers in lists grown by appending) and an offset, per state its value,
// probability and log-probability (measured: 0.9–1.0 of what stays live).
func (c *Categorical) Bytes() int64 {
	var k int64
	for _, s := range c.states {
		k += int64(len(s))
	}
	return 96*int64(len(c.states)) + 24*k
}

// gradTracker keeps one configuration and a gradient at it made of one
// block per variable that depends on that variable's state only: the
// relaxed gradient, p_i(s)/p_i(z_i) for every state s of every variable i
// (block, computed as RelaxedLogProb does, bit for bit), or the proposal
// gradient, log p_i (logBlock, as ProposalGrad writes it). A change of
// variable i changes i's block only, in O(K_i).
type gradTracker struct {
	c       *Categorical
	block   func(dst []float64, i, s int)
	z       []int
	g, g2   []float64 // gradient at z; g2 equals g outside the pending Try's block
	changed [1]int
	ti, ts  int // the pending Try (ti < 0: none)
}

// NewGradientTracker returns a gradient tracker at a copy of z.
func (c *Categorical) NewGradientTracker(z []int) model.GradientTracker {
	return c.newTracker(z, c.block)
}

// NewProposalTracker returns a tracker of the proposal gradient at a copy
// of z.
func (c *Categorical) NewProposalTracker(z []int) model.GradientTracker {
	return c.newTracker(z, c.logBlock)
}

func (c *Categorical) newTracker(z []int, block func(dst []float64, i, s int)) *gradTracker {
	f := c.offsets[len(c.states)]
	t := &gradTracker{c: c, block: block, z: make([]int, len(c.states)), g: make([]float64, f), g2: make([]float64, f), ti: -1}
	t.Reset(z)
	return t
}

func (t *gradTracker) State() []int                  { return t.z }
func (t *gradTracker) Grad() []float64               { return t.g }
func (t *gradTracker) DeltaLogProb(i, s int) float64 { return t.c.DeltaLogProb(t.z, i, s) }

// block writes variable i's gradient at state s into dst.
func (c *Categorical) block(dst []float64, i, s int) {
	inv := 1 / c.probs[i][s]
	for r, p := range c.probs[i] {
		dst[c.offsets[i]+r] = p * inv
	}
}

func (t *gradTracker) Try(i, s int) ([]int, []float64) {
	if t.ti >= 0 {
		a, b := t.c.offsets[t.ti], t.c.offsets[t.ti+1]
		copy(t.g2[a:b], t.g[a:b])
	}
	t.block(t.g2, i, s)
	t.ti, t.ts = i, s
	t.changed[0] = i
	return t.changed[:], t.g2
}

func (t *gradTracker) Commit() {
	if t.ti < 0 {
		panic("categorical: GradientTracker.Commit without a pending Try")
	}
	i := t.ti
	t.z[i] = t.ts
	a, b := t.c.offsets[i], t.c.offsets[i+1]
	copy(t.g[a:b], t.g2[a:b])
	t.ti = -1
}

func (t *gradTracker) Reset(z []int) {
	copy(t.z, z)
	for i, s := range t.z {
		t.block(t.g, i, s)
	}
	copy(t.g2, t.g)
	t.ti = -1
}

// ProposalGrad writes the proposal gradient at z (model.ProposalGradient):
// the gradient of the energy Σ_i Σ_s m_is log p_i(s), linear in each
// variable's memberships, whose block of variable i is log p_i(s) (−Inf for
// a state of probability zero), so that g[i, s] − g[i, z_i] is the exact
// change of log p*. A variable whose current state has probability zero
// (z is impossible) gets a block of zeros instead.
func (c *Categorical) ProposalGrad(grad []float64, z []int) []float64 {
	for i, s := range z {
		c.logBlock(grad, i, s)
	}
	return grad
}

// logBlock writes variable i's block of the proposal gradient at state s
// into dst.
func (c *Categorical) logBlock(dst []float64, i, s int) {
	b := dst[c.offsets[i]:c.offsets[i+1]]
	if lp := c.logp[i]; !math.IsInf(lp[s], -1) {
		copy(b, lp)
	} else {
		clear(b)
	}
}

// RandomSimplex returns d independent variables of k states with values
// 0, …, k − 1 and probabilities drawn uniformly from the simplex
// (normalised standard exponentials of the model stream of seed,
// rng.NewKey(seed).For(rng.Model), variable by variable), so that no
// probability is a simple fraction.
func RandomSimplex(d, k int, seed uint64) (*Categorical, error) {
	if d < 1 || k < 2 {
		return nil, fmt.Errorf("categorical: %d variables of %d states; want d ≥ 1 and k ≥ 2", d, k)
	}
	r := rng.NewKey(seed).For(rng.Model).Rand()
	vs := make([]Variable, d)
	for i := range vs {
		st, p := make([]float64, k), make([]float64, k)
		var tot float64
		for s := range p {
			st[s] = float64(s)
			p[s] = r.ExpFloat64()
			tot += p[s]
		}
		for s := range p {
			p[s] /= tot
		}
		vs[i] = Variable{States: st, Probs: p}
	}
	return New(vs)
}

// Kind names the model's kind for messages (model.Kinder).
func (c *Categorical) Kind() string { return "a categorical model (independent variables)" }
