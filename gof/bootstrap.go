package gof

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/dstein/dstein/internal/gemm"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// Kind is the bootstrap of the Stein discrepancy tests.
type Kind int

const (
	// Multinomial is the paper's bootstrap: u ~ Multinomial(n; 1/n, …)/n.
	Multinomial Kind = iota
	// Rademacher is the wild bootstrap with independent ±1 signs.
	Rademacher
	// Simulation is no bootstrap: the null distribution of the statistic
	// is simulated from B data sets drawn exactly from the model, which
	// holds the level at any sample size (see simulated). It needs a model
	// that dstein can sample exactly, and costs B + 1 statistics.
	Simulation
	// Auto picks for each sample (see Choose): the multinomial bootstrap,
	// unless the sample is one on which the bootstraps lose their level
	// (BootstrapCaveat) and the simulated null is affordable (at most
	// AutoWork) and possible (the model has an exact sampler), or the
	// test is GF-KSD or DKSD and the simulation is cheap (at most
	// AutoRoutineWork, RoutineSimulation); then Simulation.
	// Result.BootstrapReason says which and why. It is the
	// command line's default; the zero value of Options stays the paper's
	// multinomial bootstrap.
	Auto
)

// Kinds lists the bootstrap names ParseKind accepts.
var Kinds = []string{"auto", "multinomial", "rademacher", "simulation"}

func (k Kind) String() string {
	switch k {
	case Rademacher:
		return "rademacher"
	case Simulation:
		return "simulation"
	case Auto:
		return "auto"
	}
	return "multinomial"
}

// ParseKind returns the bootstrap named s.
func ParseKind(s string) (Kind, error) {
	switch s {
	case "multinomial", "":
		return Multinomial, nil
	case "rademacher":
		return Rademacher, nil
	case "simulation":
		return Simulation, nil
	case "auto":
		return Auto, nil
	}
	return 0, fmt.Errorf("unknown bootstrap %q; want auto, multinomial, rademacher or simulation", s)
}

// Options are the settings every test shares.
type Options struct {
	// Alpha is the level; default 0.05.
	Alpha float64
	// B is the number of bootstrap draws (permutations for MMD); default
	// 1000.
	B int
	// Bootstrap picks the bootstrap of GF-KSD and DKSD.
	Bootstrap Kind
	// Key is the test's random key: the continuous points of GF-KSD come
	// from Key.For(rng.Lift), the bootstrap draws or permutations from
	// Key.For(rng.Test).
	Key rng.Key

	// statisticOnly skips what only a bootstrap needs (DKSD's tail
	// check), for the statistics of a simulated null.
	statisticOnly bool
}

// DefaultAlpha and DefaultB are the defaults of Options.
const (
	DefaultAlpha = 0.05
	DefaultB     = 1000
)

func (o Options) withDefaults() (Options, error) {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.B == 0 {
		o.B = DefaultB
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return o, fmt.Errorf("alpha %v: want a level in (0, 1)", o.Alpha)
	}
	if o.B < 1 {
		return o, fmt.Errorf("bootstrap draws %d: want at least 1", o.B)
	}
	if o.Bootstrap != Multinomial && o.Bootstrap != Rademacher && o.Bootstrap != Simulation && o.Bootstrap != Auto {
		return o, fmt.Errorf("unknown bootstrap kind %d", o.Bootstrap)
	}
	return o, nil
}

// Result is the outcome of one test.
type Result struct {
	Test          string  `json:"test"`
	N             int     `json:"n"`
	Statistic     float64 `json:"statistic"`
	PValue        float64 `json:"p_value"`
	CriticalValue float64 `json:"critical_value"`
	Alpha         float64 `json:"alpha"`
	Reject        bool    `json:"reject"`
	Bootstrap     int     `json:"bootstrap"`
	// BootstrapKind is "multinomial", "rademacher", "simulation" or, for
	// MMD, "permutation" ("none" for impossible samples).
	BootstrapKind string `json:"bootstrap_kind"`
	// BootstrapReason says, under Auto, why BootstrapKind was chosen.
	BootstrapReason string `json:"bootstrap_reason,omitempty"`
	// Bandwidth is GF-KSD's RBF bandwidth h; for DKSD and MMD, whose
	// kernel is exp(−H/d), it is d.
	Bandwidth float64 `json:"bandwidth"`
	// Impossible counts samples to which the model gives probability 0.
	// Any such sample rejects the model outright (p-value 0) without a
	// bootstrap.
	Impossible int `json:"impossible,omitempty"`
	// ESS is GF-KSD's effective sample size of the weights w = ρ/p_c
	// (n when ρ = p_c); low values mean a weak test.
	ESS float64 `json:"weight_ess,omitempty"`
	// LevelChecked reports whether the test's level was checked at its
	// settings (EXPERIMENTS.md: GF-KSD with the relaxed surrogate at
	// τ ∈ [0.02, 0.05]; MMD always) or, for DKSD, whether its tail check
	// passed on these samples: TailBias at most TailBiasFactor × BootstrapSD.
	LevelChecked bool `json:"level_checked"`
	// TailBias is DKSD's estimate of its statistic's bias on samples that
	// lack the rare states its null mean depends on (0 when no sample has a
	// neighbour that rare; see TailBiasFactor), and BootstrapSD the standard
	// deviation of its bootstrap draws.
	TailBias    float64 `json:"tail_bias,omitempty"`
	BootstrapSD float64 `json:"bootstrap_sd,omitempty"`
	// Warning says why LevelChecked is false where the test itself found
	// out (DKSD's tail check); empty otherwise.
	Warning string `json:"warning,omitempty"`
	// Reference says where MMD's reference sample came from.
	Reference string `json:"reference,omitempty"`
	// Surrogate, Temperature, Kernel and BandwidthRule record GF-KSD's
	// resolved settings.
	Surrogate     string  `json:"surrogate,omitempty"`
	Temperature   float64 `json:"temperature,omitempty"`
	Kernel        string  `json:"kernel,omitempty"`
	BandwidthRule string  `json:"bandwidth_rule,omitempty"`

	bootSD     float64 // the bootstrap draws' standard deviation
	jointZeros int     // DKSD: sample-variable pairs whose cycles meet a zero (dksdJointZeros)
}

// MarshalJSON writes the result as JSON with an infinite statistic
// (impossible samples) or an infinite or undefined critical value (too few
// bootstrap draws to reach α, or no bootstrap) as null, since JSON has no
// such numbers.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	orNull := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		plain
		Statistic     *float64 `json:"statistic"`
		CriticalValue *float64 `json:"critical_value"`
	}{plain(r), orNull(r.Statistic), orNull(r.CriticalValue)})
}

// admit resolves o's defaults and checks the samples against m for a
// Stein test: an error for bad options or samples, or the outright
// rejection (rejectImpossible) when some samples have probability zero.
func admit(test string, m model.Model, s *sampler.Samples, o Options) (Options, *Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return o, nil, err
	}
	if err := checkSamples(m, s, 2); err != nil {
		return o, nil, err
	}
	if bad := sampler.Impossible(m, s); bad > 0 {
		return o, rejectImpossible(test, s.N, bad, o), nil
	}
	return o, nil, nil
}

// rejectImpossible is the result for samples the model cannot produce.
func rejectImpossible(test string, n, bad int, o Options) *Result {
	return &Result{Test: test, N: n, LevelChecked: true, Statistic: math.Inf(1), PValue: 0, CriticalValue: math.NaN(),
		Alpha: o.Alpha, Reject: true, Bootstrap: 0, BootstrapKind: "none", Impossible: bad}
}

// decide turns a statistic and its bootstrap draws into the p-value
// (1 + #{S* ≥ S})/(B + 1), the critical value and the decision p ≤ α. The
// critical value is the bootstrap draw c with S > c exactly when p ≤ α
// (+Inf when no S can reach p ≤ α with B draws). boot is sorted in place.
func decide(stat float64, boot []float64, alpha float64) (p, crit float64, reject bool) {
	sort.Float64s(boot)
	b := len(boot)
	// #{S* ≥ S} = b − (number of draws < S).
	below := sort.SearchFloat64s(boot, stat)
	p = float64(1+b-below) / float64(b+1)
	// p ≤ α ⇔ #{S* ≥ S} ≤ k for the largest k with (1+k)/(B+1) ≤ α (the
	// same comparison as for p) ⇔ S > the (k+1)-th largest draw.
	k := -1
	for k+1 < b && float64(1+k+1)/float64(b+1) <= alpha {
		k++
	}
	if k < 0 {
		crit = math.Inf(1)
	} else {
		crit = boot[b-1-k]
	}
	return p, crit, p <= alpha
}

// blockRows is the number of bootstrap vectors evaluated by one matrix
// product.
const blockRows = 64

// quadBatch evaluates Q_b = Σ_{i≠j} v_bi H_ij v_bj for blocks of vectors,
// with H a symmetric N×N matrix (row-major, diagonal included).
type quadBatch struct {
	h    []float64
	n    int
	v, c []float64
	prod gemm.ABt
	out  []float64
	rows int
}

func newQuadBatch(h []float64, n int) *quadBatch {
	q := &quadBatch{h: h, n: n, v: make([]float64, blockRows*n), c: make([]float64, blockRows*n), out: make([]float64, blockRows)}
	q.prod = gemm.ABt{C: q.c, A: q.v, B: h, N: n, K: n, Ldc: n, Lda: n, Ldb: n}
	return q
}

// eval computes the forms of the first rows vectors stored in q.v.
func (q *quadBatch) eval(rows int) []float64 {
	q.prod.M = rows
	q.prod.Mul()
	q.rows = rows
	parallel.For(rows, 1, q)
	return q.out[:rows]
}

// Do sums each row's form (a parallel task).
func (q *quadBatch) Do(lo, hi int) {
	n := q.n
	for b := lo; b < hi; b++ {
		v := q.v[b*n : (b+1)*n]
		c := q.c[b*n : (b+1)*n]
		var s, diag float64
		for i, vi := range v {
			s += vi * c[i]
			diag += vi * vi * q.h[i*n+i]
		}
		q.out[b] = s - diag
	}
}

// steinBootstrap draws o.B bootstrap statistics of the degenerate
// U-statistic with kernel matrix h (n×n).
func steinBootstrap(ctx context.Context, h []float64, n int, o Options, r *rand.Rand) ([]float64, error) {
	q := newQuadBatch(h, n)
	boot := make([]float64, 0, o.B)
	counts := make([]int, n)
	fn := float64(n)
	rad := 1 / math.Sqrt(fn*(fn-1))
	for len(boot) < o.B {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rows := min(blockRows, o.B-len(boot))
		for b := range rows {
			v := q.v[b*n : (b+1)*n]
			switch o.Bootstrap {
			case Multinomial:
				clear(counts)
				for range n {
					counts[r.IntN(n)]++
				}
				for i, c := range counts {
					v[i] = float64(c-1) / fn
				}
			case Rademacher:
				for i := range v {
					if r.Uint64()&1 == 1 {
						v[i] = rad
					} else {
						v[i] = -rad
					}
				}
			}
		}
		boot = append(boot, q.eval(rows)...)
	}
	return boot, nil
}

// uStatistic returns Σ_{i≠j} H_ij/(n(n−1)).
func uStatistic(h []float64, n int) float64 {
	var s float64
	for i := range n {
		row := h[i*n : (i+1)*n]
		for j, v := range row {
			if j != i {
				s += v
			}
		}
	}
	return s / (float64(n) * float64(n-1))
}

// steinTest finishes a Stein discrepancy test from its kernel matrix.
func steinTest(ctx context.Context, test string, h []float64, n int, o Options) (*Result, error) {
	stat := uStatistic(h, n)
	if math.IsNaN(stat) || math.IsInf(stat, 0) {
		return nil, fmt.Errorf("%s: the statistic is %v; the model's log-probabilities or the surrogate overflow on these samples", test, stat)
	}
	boot, err := steinBootstrap(ctx, h, n, o, newTestRand(o.Key))
	if err != nil {
		return nil, err
	}
	for _, v := range boot {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: a bootstrap statistic is %v; the Stein kernel overflows on these samples", test, v)
		}
	}
	p, crit, rej := decide(stat, boot, o.Alpha)
	return &Result{Test: test, N: n, LevelChecked: true, Statistic: stat, PValue: p, CriticalValue: crit, Alpha: o.Alpha,
		Reject: rej, Bootstrap: o.B, BootstrapKind: o.Bootstrap.String(), bootSD: stdDev(boot)}, nil
}

// stdDev is the standard deviation of v (divisor len(v); 0 for fewer than
// two values).
func stdDev(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	_, sd := stat.PopMeanStdDev(v, nil)
	return sd
}

// Memory estimates the bytes a test of n samples over d variables with b
// bootstrap draws allocates (memlimit.Base included, the samples not):
// GF-KSD keeps the RBF kernel and two n×n products besides the Stein kernel
// matrix (and n×d points, scores and memberships); DKSD the Stein kernel
// matrix and the samples' Stein points (16 bytes a value, and 1 for the
// tail check's marks, which follows the bootstrap); BKSD the Stein kernel
// matrix and its points (28 bytes a value); MMD the kernel
// matrix of the pooled 2n samples, the reference sample and the pool. Each
// bootstrap keeps b statistics, a count per sample and its batch of 64
// weight vectors and products (1024 bytes a sample; MMD's, of the 2n pooled
// samples, 2048). Measured on 3,000 samples of a 10×10 Ising grid (with the
// samples, 8 bytes a value): the live heap's peak was 0.78 (gfksd), 0.96
// (dksd) and 0.95 (mmd) of the estimate without Base.
func Memory(test string, n, d, b int) float64 {
	nf, df := float64(n), float64(d)
	var need float64
	switch test {
	case "gfksd":
		need = 8*(4.5*nf*nf) + 8*6*nf*df + 1032*nf
	case "dksd":
		need = 8*nf*nf + 17*nf*df + 1032*nf
	case "bksd":
		// The Stein kernel matrix; each sample's states, neighbours and
		// rates (28 bytes a value).
		need = 8*nf*nf + 28*nf*df + 1032*nf
	default: // mmd: the reference sample and the 2n×2n kernel
		need = 8*4*nf*nf + 8*3*nf*df + 2048*nf + 32*nf
	}
	return memlimit.Base + need + 8*float64(b)
}

// MaxSamples returns the largest number of samples whose test fits in
// limit bytes (0: no limit), so that readers stop before reading more.
func MaxSamples(test string, d, b int, limit int64) int {
	if limit <= 0 {
		return 0
	}
	lo, hi := 2, 1<<31
	if Memory(test, lo, d, b) > float64(limit) {
		return lo
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if Memory(test, mid, d, b) <= float64(limit) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
