package rbm

import "fmt"

// Bits are the state values of an RBM with {0, 1} units: index 0 is 0 and
// index 1 is 1.
var Bits = []float64{0, 1}

// NewBinary returns the RBM with {0, 1} visible units v and {0, 1} hidden
// units h (the convention of Gibbs-with-Gradients' and DISCS's RBMs),
//
//	p(v, h) ∝ exp(vᵀW'h + b'ᵀv + c'ᵀh),
//
// given W' (d rows of M entries), b' and c' (nil for zeros). With
// v = (1 + z)/2 and h = (1 + s)/2 for ±1 units z and s,
//
//	vᵀW'h + b'ᵀv + c'ᵀh = zᵀWs + bᵀz + cᵀs + K
//
// where W = W'/4, b_i = b'_i/2 + Σ_k W'_ik/4 (half the bias plus a quarter
// of row i's sum), c_k = c'_k/2 + Σ_i W'_ik/4 (half the bias plus a quarter
// of column k's sum) and K = Σ_ik W'_ik/4 + Σ_i b'_i/2 + Σ_k c'_k/2. The
// returned RBM is the ±1 RBM of W, b, c, whose LogProb is therefore
// log Σ_h exp(vᵀW'h + b'ᵀv + c'ᵀh) − K (BinaryOffset returns K), and whose
// variables report the state values 0 and 1 (States), so that samples,
// means and marginals read in the file's own convention: a mean is P(v_i = 1).
func NewBinary(W [][]float64, b, c []float64) (*RBM, error) {
	if _, _, err := checkShapes(W, b, c); err != nil {
		return nil, err
	}
	ws, bs, cs := SpinParams(W, b, c)
	r, err := New(ws, bs, cs)
	if err != nil {
		return nil, err
	}
	r.binary = true
	return r, nil
}

// SpinParams converts the parameters of a {0, 1} RBM (see NewBinary) to
// those of the ±1 RBM with the same distribution: W'/4, b'/2 plus a quarter
// of W's row sums, c'/2 plus a quarter of its column sums. nil biases are
// zeros. Non-finite values pass through (New refuses them). Parameters of
// inconsistent shapes (a ragged W, biases of other lengths) are a
// programming mistake (NewBinary returns an error for them): it panics.
func SpinParams(W [][]float64, b, c []float64) (ws [][]float64, bs, cs []float64) {
	mustShapes("SpinParams", W, b, c)
	d := len(W)
	m := 0
	if d > 0 {
		m = len(W[0])
	}
	ws = make([][]float64, d)
	bs = make([]float64, d)
	cs = make([]float64, m)
	for k := range m {
		if c != nil {
			cs[k] = c[k] / 2
		}
	}
	for i, row := range W {
		ws[i] = make([]float64, len(row))
		if b != nil {
			bs[i] = b[i] / 2
		}
		for k, w := range row {
			ws[i][k] = w / 4
			bs[i] += w / 4
			cs[k] += w / 4
		}
	}
	return ws, bs, cs
}

// BinaryOffset returns K = Σ_ik W'_ik/4 + Σ_i b'_i/2 + Σ_k c'_k/2, the
// constant by which the {0, 1} RBM's log p*(v) (hidden units summed out)
// exceeds the LogProb of the RBM NewBinary builds from the same parameters.
func BinaryOffset(W [][]float64, b, c []float64) float64 {
	mustShapes("BinaryOffset", W, b, c)
	var k float64
	for _, row := range W {
		for _, w := range row {
			k += w / 4
		}
	}
	for _, v := range b {
		k += v / 2
	}
	for _, v := range c {
		k += v / 2
	}
	return k
}

// Binary reports whether the RBM was made by NewBinary: its units are
// {0, 1} and its variables' state values 0 and 1.
func (r *RBM) Binary() bool { return r.binary }

// mustShapes panics, naming the function, when W, b and c do not fit
// together (checkShapes).
func mustShapes(fn string, W [][]float64, b, c []float64) {
	if _, _, err := checkShapes(W, b, c); err != nil {
		panic(fmt.Sprintf("rbm: %s: %v", fn, err))
	}
}
