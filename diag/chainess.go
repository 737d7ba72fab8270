package diag

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// ChainESS returns the effective sample size of one chain x as TensorFlow
// Probability's tfp.mcmc.effective_sample_size computes it with its
// defaults, the estimator behind the DISCS benchmark's tables:
//
//	ESS = N / (−1 + 2 Σ_{k=0}^{K−1} (1 − k/N) ρ_k),
//
// where ρ_k is the lag-k autocorrelation (the autocovariance averaged over
// the N − k products of lag k, over the variance) and K the first lag at
// which ρ_k < 0 (every lag when none is). It is not Geyer's initial
// sequence estimator that BulkESS uses, and it sees one chain only: a
// chain stuck in one mode has a large ESS here. A constant chain (zero
// variance) has no autocorrelation; tfp returns NaN there, which DISCS
// counts as 1, and so does ChainESS. It returns 0 for an empty chain.
func ChainESS(x []float64) float64 {
	n := len(x)
	if n == 0 {
		return 0
	}
	mean, constant := chainMean(x)
	if constant || n == 1 {
		return 1
	}
	acov := autocovariance(x, mean)
	if !(acov[0] > 0) {
		return 1
	}
	fn := float64(n)
	sum := 1.0 // k = 0: ρ_0 = 1, weight 1
	for k := 1; k < n; k++ {
		rho := acov[k] / float64(n-k) / (acov[0] / fn)
		if rho < 0 {
			break
		}
		sum += (1 - float64(k)/fn) * rho
	}
	return fn / (2*sum - 1)
}

// autocovariance returns the sums Σ_t (x_t − mean)(x_{t+k} − mean) for
// k = 0, …, n−1, by a Fourier transform padded to avoid wrap-around.
func autocovariance(x []float64, mean float64) []float64 {
	n := len(x)
	L := fftSize(2 * n)
	seq := make([]float64, L)
	for i, v := range x {
		seq[i] = v - mean
	}
	fft := fourier.NewFFT(L)
	coef := fft.Coefficients(nil, seq)
	for i, c := range coef {
		coef[i] = complex(real(c)*real(c)+imag(c)*imag(c), 0)
	}
	out := fft.Sequence(nil, coef)
	res := make([]float64, n)
	for k := range n {
		res[k] = out[k] / float64(L)
	}
	return res
}

// chainESSDirect is ChainESS with the autocovariances summed directly
// (O(N·K)), kept to check the transform.
func chainESSDirect(x []float64) float64 {
	n := len(x)
	mean, constant := chainMean(x)
	if constant || n < 2 {
		return 1
	}
	c0 := 0.0
	for _, v := range x {
		c0 += (v - mean) * (v - mean)
	}
	fn := float64(n)
	sum := 1.0
	for k := 1; k < n; k++ {
		c := 0.0
		for t := 0; t+k < n; t++ {
			c += (x[t] - mean) * (x[t+k] - mean)
		}
		rho := c / float64(n-k) / (c0 / fn)
		if rho < 0 || math.IsNaN(rho) {
			break
		}
		sum += (1 - float64(k)/fn) * rho
	}
	return fn / (2*sum - 1)
}
