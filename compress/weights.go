package compress

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/sampler"
)

// MaxWeightStates caps the distinct states SteinWeights takes: it holds the
// U×U Stein kernel matrix (8U² bytes: 72 MB at the cap).
const MaxWeightStates = 3000

// TooManyStates is SteinWeights' refusal of more distinct states than
// MaxWeightStates. The cap bounds memory (the U×U kernel matrix), so the
// error unwraps to a *memlimit.Exceeded: a command reports it as a
// refusal for resources (exit code 3), with its own message (no memory
// limit raises the cap).
type TooManyStates struct {
	Distinct int
	exceeded *memlimit.Exceeded
}

func tooManyStates(u int) *TooManyStates {
	return &TooManyStates{Distinct: u, exceeded: &memlimit.Exceeded{
		What: fmt.Sprintf("Stein weights on %d distinct states (the U×U kernel matrix)", u),
		Need: 8 * int64(u) * int64(u), Limit: 8 * MaxWeightStates * MaxWeightStates}}
}

func (e *TooManyStates) Error() string {
	return fmt.Sprintf("compress: %d distinct states; Stein weights take at most %d (the U×U kernel matrix, %s at the cap): compress or thin the draws first", e.Distinct, MaxWeightStates, memlimit.Format(e.exceeded.Limit))
}

// Unwrap returns the *memlimit.Exceeded behind the refusal.
func (e *TooManyStates) Unwrap() error { return e.exceeded }

// Weights are Stein importance weights of candidate draws.
type Weights struct {
	// W[i] is the weight of row i of the candidates (Σ W = 1); rows with
	// the same state share their state's weight equally.
	W []float64
	// KSD2 is the weighted squared discrepancy wᵀKw reached, Unweighted
	// that of equal weights on the rows.
	KSD2, Unweighted float64
	// ESS is the weights' effective sample size 1/Σ W².
	ESS float64
	// Iterations of the projected gradient method, and Gap, the
	// Frank–Wolfe gap at the end (an upper bound on KSD2 − its minimum).
	Iterations int
	Gap        float64
	Distinct   int
}

// MinEll is the smallest bandwidth ℓ of the Hamming kernel exp(−H/ℓ):
// the Stein kernel holds e^(1/ℓ), which overflows below ℓ ≈ 0.0014 (the
// points were then picked by NaN comparisons); at 0.01 the kernel is
// already the identity on distinct states to 43 digits.
const MinEll = 0.01

// GapTolerance is the relative Frank–Wolfe gap at which SteinWeights
// stops: the weighted KSD² is then within 1% of its minimum.
const GapTolerance = 1e-2

// SteinWeights returns the weights on the candidates' draws that minimise
// the kernel Stein discrepancy of the weighted draws against m (Liu and Lee
// 2017, black-box importance sampling): w ≥ 0, Σ w = 1, minimising wᵀKw
// with K the discrete Stein kernel matrix of the distinct states (ℓ from
// o). It needs m only up to its normaliser, and corrects the draws toward
// m within the states the draws visit. The quadratic program is solved by
// accelerated projected gradient (FISTA, step 1/L with L = 2λ_max(K) from
// power iteration, Euclidean projection onto the simplex) until the
// Frank–Wolfe gap is below 1% of wᵀKw (the gap bounds the distance to the
// minimum, so wᵀKw is then within 1% of it) or maxIter iterations; the
// result reports both. On a 4×4 grid, weights at ℓ = d repaired 1000
// draws of the wrong model (fields reversed) from an RMSE of the means of
// 0.31–0.32 to 0.08–0.10 (the package's test); at ℓ = 1 they did little
// (0.31 to 0.24 with 2000 draws).
func SteinWeights(ctx context.Context, m model.Model, c *sampler.Samples, o Options, maxIter int) (*Weights, error) {
	if err := check(c, nil, 1); err != nil {
		return nil, err
	}
	if c.D != m.Dim() {
		return nil, fmt.Errorf("compress: candidates have %d variables, the model %d", c.D, m.Dim())
	}
	o, err := o.resolved(float64(c.D))
	if err != nil {
		return nil, err
	}
	if maxIter < 1 {
		return nil, fmt.Errorf("compress: maxIter = %d; want at least 1", maxIter)
	}
	first, mass, of := distinct(c, nil)
	u := len(first)
	if u > MaxWeightStates {
		return nil, tooManyStates(u)
	}
	pts, k, err := steinOf(m, c, first, o.Ell)
	if err != nil {
		return nil, err
	}
	K := make([]float64, u*u)
	for a := range u {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for b := 0; b <= a; b++ {
			v := k.Eval(pts, a, pts, b)
			K[a*u+b], K[b*u+a] = v, v
		}
	}
	mul := func(dst, x []float64) {
		for a := range u {
			var s float64
			for b, v := range K[a*u : (a+1)*u] {
				s += v * x[b]
			}
			dst[a] = s
		}
	}
	quad := func(x, kx []float64) float64 {
		var s float64
		for a, v := range x {
			s += v * kx[a]
		}
		return s
	}
	// λ_max(K) by power iteration from the all-ones vector (deterministic).
	x, kx := make([]float64, u), make([]float64, u)
	for a := range x {
		x[a] = 1 / math.Sqrt(float64(u))
	}
	lambda := 0.0
	for range 100 {
		mul(kx, x)
		norm := math.Sqrt(quad(kx, kx))
		if norm == 0 {
			break
		}
		next := norm
		for a := range x {
			x[a] = kx[a] / norm
		}
		if math.Abs(next-lambda) <= 1e-9*next {
			lambda = next
			break
		}
		lambda = next
	}
	if lambda == 0 {
		return nil, fmt.Errorf("compress: the Stein kernel matrix is zero")
	}
	step := 1 / (2 * lambda * 1.01) // 1/L, L = 2λ_max, with a margin for the estimate
	// The start: the draws' own weights.
	w := make([]float64, u)
	var tot float64
	for _, v := range mass {
		tot += v
	}
	for a := range w {
		w[a] = mass[a] / tot
	}
	mul(kx, w)
	res := &Weights{Unweighted: quad(w, kx), Distinct: u}
	y, prev, grad := slices.Clone(w), slices.Clone(w), make([]float64, u)
	tk := 1.0
	const tol = GapTolerance
	for it := 1; it <= maxIter; it++ {
		if it%16 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		mul(grad, y)
		for a := range w {
			w[a] = y[a] - step*2*grad[a]
		}
		projectSimplex(w)
		tn := (1 + math.Sqrt(1+4*tk*tk)) / 2
		for a := range y {
			y[a] = w[a] + (tk-1)/tn*(w[a]-prev[a])
		}
		copy(prev, w)
		tk = tn
		res.Iterations = it
		if it%10 != 0 && it != maxIter {
			continue // the gap costs a product with K: every 10th iteration
		}
		// The Frank–Wolfe gap at w: ∇f(w)ᵀw − min ∇f(w).
		mul(kx, w)
		f := quad(w, kx)
		gmin := math.Inf(1)
		for _, v := range kx {
			gmin = min(gmin, 2*v)
		}
		res.KSD2, res.Gap = f, 2*f-gmin
		if res.Gap <= tol*max(f, 1e-300) {
			break
		}
	}
	res.W = make([]float64, c.N)
	rows := make([]float64, u) // rows per distinct state
	for _, a := range of {
		rows[a]++
	}
	var ss float64
	for i, a := range of {
		res.W[i] = w[a] / rows[a]
		ss += res.W[i] * res.W[i]
	}
	res.ESS = 1 / ss
	return res, nil
}

// projectSimplex replaces v by its Euclidean projection onto the
// probability simplex (sort-based, O(n log n)).
func projectSimplex(v []float64) {
	s := slices.Clone(v)
	slices.Sort(s)
	slices.Reverse(s)
	var cum, theta float64
	for j, x := range s {
		cum += x
		t := (cum - 1) / float64(j+1)
		if x-t > 0 {
			theta = t
		}
	}
	for i, x := range v {
		v[i] = max(0, x-theta)
	}
}
