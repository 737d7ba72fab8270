package model

import (
	"fmt"
	"math"
	"strconv"
)

// Model is an unnormalised discrete distribution p*(z).
type Model interface {
	// Dim returns the number of variables d.
	Dim() int
	// States returns the values of variable i's states, in the model's
	// order. The caller must not modify the slice.
	States(i int) []float64
	// LogProb returns log p*(z) up to an additive constant that does not
	// depend on z. z holds one state index per variable. The result is
	// finite or −Inf, never NaN or +Inf. LogProb must be safe for
	// concurrent use.
	LogProb(z []int) float64
}

// Conditional is a model that gives one variable's conditional distribution
// given the others, for Gibbs sampling.
type Conditional interface {
	Model
	// LogConditional writes into dst[s], for each state s of variable i,
	// log p*(z with z_i = s) up to a constant that may depend on the other
	// variables, and returns dst[:K_i]. It reads z but leaves it unchanged.
	LogConditional(dst []float64, z []int, i int) []float64
}

// BlockConditional is a model with groups of variables that single-site
// moves may be unable to change one at a time: a factor graph's scopes of
// tables with zero entries (either = tub ∨ lung), where every single
// change from a configuration of positive probability can lead to
// probability zero. Gibbs chains and parallel tempering's site kernel
// follow each sweep with a joint draw of every block's variables from
// their conditional given the others (a Gibbs update of the block).
type BlockConditional interface {
	Model
	// Blocks returns the blocks: each a list of distinct variables, with
	// at most MaxBlockStates joint states. The caller must not modify
	// them.
	Blocks() [][]int
	// LogBlockConditional writes, for each joint state a of block b's
	// variables (mixed radix in the block's order, the last variable
	// changing fastest), log p*(z with z_B = a) up to a constant that may
	// depend on the other variables, and returns dst[:Π_{i∈B} K_i]. It
	// changes z while it runs and restores it before it returns. It uses
	// dst's capacity up to 2·Π K_i as scratch and allocates when dst has
	// less.
	LogBlockConditional(dst []float64, z []int, b int) []float64
	// BlockCosts returns the work of one update of each block and of one
	// single-site sweep (LogConditional of every variable) in one unit,
	// about, so that a sampler can bound the updates' share of its time.
	BlockCosts() (blocks []int, sweep int)
}

// MaxBlockStates bounds a block's joint states (BlockConditional): a
// block update costs about that many evaluations of the block's factors.
const MaxBlockStates = 1024

// Delta is a model that gives the change of log p* when one coordinate
// changes, for samplers and tests that make local moves.
type Delta interface {
	Model
	// DeltaLogProb returns log p*(z') − log p*(z) where z' is z with z_i
	// set to s. It is +Inf when only z is impossible, −Inf when only z' is,
	// and 0 when the factors that involve variable i are impossible both
	// before and after the change. It never returns NaN.
	DeltaLogProb(z []int, i, s int) float64
}

// Relaxed is a model with a smooth extension of log p* to soft state
// memberships, for relaxed surrogates and gradient-informed samplers.
//
// The memberships m are laid out flat: variable i owns the K_i entries
// starting at Offsets(model)[i], one per state, each in [0, 1] and summing to
// one. At a one-hot m that encodes z, RelaxedLogProb equals LogProb(z) up to
// the same additive constant for every z.
//
// Gradient-guided samplers use the relaxation's gradient at one-hot
// memberships to estimate the change of log p* of single-variable moves,
// unless the model is a ProposalGradient: a relaxation that is not linear
// in each variable's memberships (a multilinear extension) should come with
// one.
type Relaxed interface {
	Model
	// RelaxedLogProb returns the relaxed log-probability at m and, when
	// grad is not nil, writes its gradient with respect to every entry of m
	// into grad (same layout as m). It must be safe for concurrent use.
	RelaxedLogProb(grad, m []float64) float64
}

// LogProbBatch is a model that evaluates log p* at many states at once,
// with matrix products, for particle methods.
type LogProbBatch interface {
	Model
	// NewLogProbBatch returns an evaluator for n states.
	NewLogProbBatch(n int) LogProbBatcher
}

// LogProbBatcher writes lp[j] = log p*(row j of z) for the n rows of z
// (n×d), equal to LogProb up to rounding (the sums are taken in another
// order). LogProbs spreads the rows over the cores; LogProbRows evaluates
// rows [lo, hi) alone on the calling goroutine, with the same bits, for
// callers that split their own work by rows. LogProbRows on disjoint
// ranges may run concurrently; nothing else is safe for concurrent use.
type LogProbBatcher interface {
	LogProbs(lp []float64, z []int)
	LogProbRows(lo, hi int, lp []float64, z []int)
	// RowWork is the element operations (multiply-adds, reads and
	// writes) of one row, for callers' chunk sizes (parallel.GrainWork).
	RowWork() float64
}

// RelaxedBatch is a Relaxed model that evaluates its relaxation at many
// points at once, with matrix products, for particle methods.
type RelaxedBatch interface {
	Relaxed
	// NewRelaxedBatch returns an evaluator for n points.
	NewRelaxedBatch(n int) RelaxedBatcher
}

// RelaxedBatcher evaluates RelaxedLogProb at n points: for each row j of
// mem (n rows laid out like the memberships, Offsets), f[j] is the value
// and row j of grad the gradient, equal to RelaxedLogProb's up to rounding
// (the sums are taken in another order). RelaxedLogProbs spreads the
// points over the cores; RelaxedLogProbRows evaluates points [lo, hi)
// alone on the calling goroutine, with the same bits. RelaxedLogProbRows
// on disjoint ranges may run concurrently; nothing else is safe for
// concurrent use.
type RelaxedBatcher interface {
	RelaxedLogProbs(f, grad, mem []float64)
	RelaxedLogProbRows(lo, hi int, f, grad, mem []float64)
	// RowWork is the element operations of one point (see LogProbBatcher).
	RowWork() float64
}

// RelaxedIncremental is a Relaxed model with its own fast GradientTracker.
type RelaxedIncremental interface {
	Relaxed
	// NewGradientTracker returns a gradient tracker at a copy of z.
	NewGradientTracker(z []int) GradientTracker
}

// GradientTracker follows one configuration z of a Relaxed model and the
// gradient of RelaxedLogProb at z's one-hot memberships through changes of
// single variables, so that gradient-guided samplers making local moves
// (Gibbs-with-Gradients) pay for the entries a change touches, not for a
// whole gradient. A change is made in two steps: Try computes the gradient
// at z with z_i = s without moving, and Commit moves there; the next Try or
// Reset abandons a tried change that was not committed. A sampler can thus
// read the gradient at a proposed state, for the reverse proposal, before it
// decides.
//
// Grad equals the gradient that RelaxedLogProb writes at the one-hot
// memberships of State(), up to rounding that does not accumulate: a
// tracker that updates sums in place recomputes them from scratch often
// enough that they stay within 1e-9 (relative to the size of their terms)
// of a fresh computation, however many changes it has made. A tracker is
// not safe for concurrent use; make one per chain.
type GradientTracker interface {
	// State returns the current configuration. The caller must not modify
	// it; it changes with Commit and Reset.
	State() []int
	// Grad returns the gradient at the current configuration, laid out like
	// the memberships (Offsets). The caller must not modify it; it changes
	// with Commit and Reset.
	Grad() []float64
	// DeltaLogProb returns log p*(z with z_i = s) − log p*(z), with the
	// conventions of Delta.DeltaLogProb.
	DeltaLogProb(i, s int) float64
	// Try computes the gradient at the current configuration with z_i = s
	// (s ≠ z_i) and returns the variables whose blocks of it may differ
	// from Grad() (i among them), each once, and the whole tried gradient.
	// Both are valid until the next call; the caller must not modify them.
	Try(i, s int) (changed []int, grad []float64)
	// Commit moves to the configuration of the last Try, whose gradient
	// becomes Grad(). It panics when no Try is pending.
	Commit()
	// Reset moves the tracker to configuration z (copied) and recomputes
	// everything from scratch.
	Reset(z []int)
}

// Support is a model that knows states which have probability zero whatever
// the other variables are (unary zeros). The continuous parameterization
// gives such states no bin, so that no sampler working through it can reach
// them.
type Support interface {
	Model
	// Possible reports whether state s of variable i can have positive
	// probability. At least one state of every variable must be possible.
	Possible(i, s int) bool
}

// NumStates returns K_i, the number of states of variable i.
func NumStates(m Model, i int) int { return len(m.States(i)) }

// Offsets returns the start of each variable's block in a flat membership
// vector, with one extra entry at the end that holds the total length.
func Offsets(m Model) []int {
	d := m.Dim()
	off := make([]int, d+1)
	for i := range d {
		off[i+1] = off[i] + len(m.States(i))
	}
	return off
}

// StateCount returns the number of joint states Π K_i, or math.MaxInt when
// it overflows.
func StateCount(m Model) int {
	n := 1
	for i := range m.Dim() {
		k := len(m.States(i))
		if k == 0 {
			return 0
		}
		if n > math.MaxInt/k {
			return math.MaxInt
		}
		n *= k
	}
	return n
}

// Values writes the state values of z into dst and returns it; dst is
// allocated when nil.
func Values(dst []float64, m Model, z []int) []float64 {
	if dst == nil {
		dst = make([]float64, len(z))
	}
	for i, s := range z {
		dst[i] = m.States(i)[s]
	}
	return dst
}

// Index returns the index of value v among variable i's states, or an error
// naming the allowed values.
func Index(m Model, i int, v float64) (int, error) {
	if i < 0 || i >= m.Dim() {
		return 0, fmt.Errorf("variable %d does not exist: the model has %d (0…%d)", i, m.Dim(), m.Dim()-1)
	}
	st := m.States(i)
	for s, sv := range st {
		if sv == v {
			return s, nil
		}
	}
	return 0, fmt.Errorf("value %v is not a state of variable %d (states: %v)", v, i, st)
}

// Spins are the states of a ±1 variable, in dstein's order: index 0 is −1 and
// index 1 is +1, so that the first state maps to the negative half-line.
var Spins = []float64{-1, 1}

// Spin returns the ±1 value of a spin state index.
func Spin(s int) float64 { return float64(2*s - 1) }

// MaxLogBound is the largest bound on |log p*(z)| a model may have: far
// beyond any real model, and small enough that sums and differences of a
// few log-probabilities (Gibbs conditionals, Metropolis ratios, importance
// weights) can never overflow to ±Inf or NaN.
const MaxLogBound = 1e100

// CheckLogBound reports a model whose worst-case |log p*| (bound, computed
// by the model from its parameters) is not finite or exceeds MaxLogBound.
func CheckLogBound(what string, bound float64) error {
	if math.IsNaN(bound) || math.IsInf(bound, 0) || bound > MaxLogBound {
		return fmt.Errorf("%s: its parameters are so large that |log p*| can reach %v, beyond %g where sampling arithmetic stays finite; rescale them", what, bound, MaxLogBound)
	}
	return nil
}

// Sizer is a model that knows about how many bytes it holds, for memory
// estimates.
type Sizer interface {
	Bytes() int64
}

// Bytes returns m's size in bytes when it is a Sizer, else an estimate of
// 64 bytes per state of its variables.
func Bytes(m Model) int64 {
	if s, ok := m.(Sizer); ok {
		return s.Bytes()
	}
	var k int64
	for i := range m.Dim() {
		k += int64(len(m.States(i)))
	}
	return 64 * k
}

// Observables is a model with model-level statistics that run summaries
// monitor besides log p* and the variables themselves (the magnetisation
// of an Ising model).
type Observables interface {
	Model
	// ObservableNames returns the statistics' names, the same every call.
	ObservableNames() []string
	// Observe writes the statistics of configuration z into dst, one per
	// name. It must be safe for concurrent use.
	Observe(dst []float64, z []int)
}

// StateNamer is a model whose states have names, which quantity names in
// run summaries use ("z3=red") in place of the state values.
type StateNamer interface {
	Model
	// StateNames returns the names of variable i's states, one per state
	// in the order of States, or nil when its states are unnamed. The
	// caller must not modify the slice.
	StateNames(i int) []string
}

// VariableNamer is a model whose variables have names of their own: a
// network clamped by evidence names its free variables by their index in
// the file ("z4" is the file's variable 4 whatever its place among the
// free ones), so that every output numbers variables as the file does.
type VariableNamer interface {
	Model
	// VariableName returns variable i's name, never empty.
	VariableName(i int) string
}

// VariableName returns the name of m's variable i in every output: m's
// own (VariableNamer), else "z" followed by i.
func VariableName(m Model, i int) string {
	if vn, ok := m.(VariableNamer); ok {
		return vn.VariableName(i)
	}
	return "z" + strconv.Itoa(i)
}

// NoDensity is a model that only names variables and states: draws
// summarised without a model (dstein summary DRAWS) get one whose states
// are the values seen. Its LogProb is constant and means nothing, so
// summaries monitor no log p*.
type NoDensity interface {
	Model
	NoDensity()
}

// SpinShape is what memory estimates of a pairwise ±1 model's spin kernels
// need (the neighbour arrays and the threshold tables that Gibbs and
// parallel tempering build), given by the model and by a model file's
// shape before the model is built, so that the estimate is the same
// before and after.
type SpinShape interface {
	Model
	// SpinEdges returns the number of edges.
	SpinEdges() int
	// SpinTableEntries returns Σ 2^deg_i over the spins i of degree
	// deg_i ≤ maxDeg, or an upper bound of it.
	SpinTableEntries(maxDeg int) float64
}

// Kinder is a model that names its kind for messages ("an RBM").
type Kinder interface {
	// Kind names the model's kind with its article: "an Ising model".
	Kind() string
}

// Kind names m's kind for messages: its Kind where it has one, else "a
// model of this type" with Go's type name.
func Kind(m Model) string {
	if k, ok := m.(Kinder); ok {
		return k.Kind()
	}
	return fmt.Sprintf("a model of type %T", m)
}
