package diag

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// chainMean returns the mean of x and whether every value of x is the
// same; a constant x has exactly its value as mean.
func chainMean(x []float64) (mean float64, constant bool) {
	sum, x0, differ := 0.0, x[0], 0
	for _, v := range x {
		sum += v
		if v != x0 {
			differ++
		}
	}
	if differ == 0 {
		return x0, true
	}
	return sum / float64(len(x)), false
}

// varMeans returns the sample variance (denominator k−1) of the k ≥ 2
// values; exactly 0 when they are all equal.
func varMeans(means []float64) float64 {
	sum, equal := 0.0, true
	for _, v := range means {
		sum += v
		if v != means[0] {
			equal = false
		}
	}
	if equal {
		return 0
	}
	mean := sum / float64(len(means))
	ss := 0.0
	for _, v := range means {
		ss += (v - mean) * (v - mean)
	}
	return ss / float64(len(means)-1)
}

// rhat returns the split-R̂ of the split chains y (2m chains of h draws):
// with W the mean within-chain variance and B/h the variance of the chain
// means, √(((h−1)/h·W + B/h)/W). When every chain is constant (W = 0) it is
// 1 if the chains agree (B = 0) and +Inf if they do not.
func (w *Workspace) rhat(y []float64) float64 {
	k, h := 2*w.m, w.h
	w.means = grow(w.means, k)
	W := 0.0
	for c := range k {
		x := y[c*h : (c+1)*h]
		mean, constant := chainMean(x)
		w.means[c] = mean
		if constant {
			continue
		}
		ss := 0.0
		for _, v := range x {
			ss += (v - mean) * (v - mean)
		}
		W += ss / float64(h-1)
	}
	W /= float64(k)
	vb := varMeans(w.means) // B/h
	if W == 0 {
		if vb == 0 {
			return 1
		}
		return math.Inf(1)
	}
	fh := float64(h)
	return math.Sqrt((fh*vb/W + fh - 1) / fh)
}

// fftSize returns the smallest n ≥ least whose only prime factors are 2, 3
// and 5, the sizes the Fourier transform is fast for.
func fftSize(least int) int {
	for n := max(least, 1); ; n++ {
		r := n
		for _, p := range [3]int{2, 3, 5} {
			for r%p == 0 {
				r /= p
			}
		}
		if r == 1 {
			return n
		}
	}
}

// directLags is how many lags ess computes as plain sums before it turns
// to the FFT for all of them. Geyer's sequence usually stops within a few
// lags, where the sums cost far less than transforming every chain; a
// chain that mixes slowly needs many lags and gets the FFT, which then
// costs at most this many lags' sums more than using it from the start.
//
// It and slowMixing are variables only so that the tests can force either
// path.
var directLags = 32

// slowMixing is the lag-1 autocorrelation above which ess goes to the FFT
// at once: an AR(1)-like chain with ρ₁ > 0.9 still has ρ_t > 0.035 at lag
// 32, so Geyer's sequence would most likely pass directLags anyway.
var slowMixing = 0.9

// ess returns the effective sample size of the split chains y (2m chains
// of h draws, S = 2mh in all), as Stan, posterior and ArviZ compute it
// (Vehtari et al. 2021):
//
//   - acov_{c,t} = (1/h) Σ_{i<h−t} (y_{c,i} − ȳ_c)(y_{c,i+t} − ȳ_c), the biased
//     autocovariance of each chain; W = mean_c acov_{c,0}·h/(h−1);
//     var⁺ = (h−1)/h·W + var_c(ȳ_c);
//   - ρ_t = 1 − (W − mean_c acov_{c,t})/var⁺;
//   - Geyer's initial positive sequence: pairs (ρ_t, ρ_{t+1}), t even, are
//     taken while their sum is positive (up to lag h−3), a pair with a
//     negative sum ends the sequence and is dropped, but its ρ_t is kept
//     for the last term when positive; then the initial monotone
//     sequence: a pair whose sum exceeds the previous pair's gets that
//     sum, split evenly;
//   - τ = −1 + 2 Σ_{t<T} ρ_t + ρ_T, T the even lag of the last pair
//     examined; τ ≥ 1/log₁₀ S (ESS at most S·log₁₀ S); ESS = S/τ.
//
// The autocovariances are sums over the chains' draws for the first
// directLags lags and come from one FFT of every chain (and one inverse
// transform of their summed power spectra) when the sequence goes
// further or ρ₁ > slowMixing: the same numbers, up to rounding.
//
// Defined cases beyond the formula: every draw the same gives S; every
// chain constant but not all equal gives ρ_t = 1 at every lag, so a small
// finite ESS. Split chains of at most 5 draws (chains shorter than 12)
// leave no room for the sequence beyond its first pair; there τ = 1 + 2ρ₁
// (Geyer's estimate with that one pair) where posterior has an indexing
// artefact (τ = 2) or no value, and ArviZ gives S·log₁₀ S (halves
// under 5 draws).
func (w *Workspace) ess(y []float64) float64 {
	k, h := 2*w.m, w.h
	S := float64(k * h)
	w.cent = grow(w.cent, k*h)
	w.moving = grow(w.moving, k)
	w.means = grow(w.means, k)
	still := true
	for c := range k {
		x, d := y[c*h:(c+1)*h], w.cent[c*h:(c+1)*h]
		mean, constant := chainMean(x)
		w.means[c], w.moving[c] = mean, !constant
		if constant {
			clear(d) // autocovariances all 0
			continue
		}
		still = false
		for i, v := range x {
			d[i] = v - mean
		}
	}
	vm := varMeans(w.means)
	if still && vm == 0 {
		return S // every draw the same
	}
	w.byFFT = false
	fh, fk := float64(h), float64(k)
	meanVar := w.acovAt(0) / (fh * fk) * fh / (fh - 1)
	varPlus := meanVar*(fh-1)/fh + vm
	if !(varPlus > 0) {
		return S // not reachable for finite draws that are not all the same
	}
	r := func(t int) float64 { return 1 - (meanVar-w.acovAt(t)/(fh*fk))/varPlus }

	w.rho = grow(w.rho, h)
	rho := w.rho
	clear(rho)
	even, odd := 1.0, r(1)
	rho[0], rho[1] = even, odd
	if odd > slowMixing && h > directLags {
		w.transform() // ρ₁^directLags < 0.035: the sequence will go further
	}
	t := 0
	for t < h-5 && even+odd > 0 {
		t += 2
		even, odd = r(t), r(t+1)
		if even+odd >= 0 {
			rho[t], rho[t+1] = even, odd
		}
	}
	last := t
	if even > 0 {
		rho[last] = even
	}
	for t := 2; t <= last-2; t += 2 {
		if rho[t]+rho[t+1] > rho[t-2]+rho[t-1] {
			rho[t] = (rho[t-2] + rho[t-1]) / 2
			rho[t+1] = rho[t]
		}
	}
	var tau float64
	if last == 0 && even+odd > 0 {
		tau = 1 + 2*rho[1] // too short for more than the first pair
	} else {
		sum := 0.0
		for _, v := range rho[:last] {
			sum += v
		}
		tau = -1 + 2*sum + rho[last]
	}
	tau = max(tau, 1/math.Log10(S))
	return S / tau
}

// acovAt returns Σ_c Σ_{i<h−t} d_{c,i} d_{c,i+t} over the centred split
// chains in w.cent: a sum for t < directLags, else from the FFT.
func (w *Workspace) acovAt(t int) float64 {
	h := w.h
	if t < directLags && !w.byFFT {
		sum := 0.0
		for c, moving := range w.moving {
			if moving {
				d := w.cent[c*h : (c+1)*h]
				sum += dot(d[:h-t], d[t:])
			}
		}
		return sum
	}
	if !w.byFFT {
		w.transform()
	}
	return w.acov[t] / float64(len(w.acov))
}

// dot returns Σ a_i b_i, len(b) ≥ len(a), in four running sums.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// transform fills w.acov with the summed autocovariances of every lag: each
// centred chain is padded with zeros to a length L ≥ 2h−1 (so that the
// circular autocorrelation is the linear one at lags 0 … h−1), its power
// spectrum added up, and the sum transformed back, which gives L times the
// sums.
func (w *Workspace) transform() {
	h := w.h
	L := fftSize(2*h - 1)
	if w.fft == nil {
		w.fft = fourier.NewFFT(L)
	} else if w.fft.Len() != L {
		w.fft.Reset(L)
	}
	w.seq = grow(w.seq, L)
	w.coef = grow(w.coef, L/2+1)
	w.power = grow(w.power, L/2+1)
	w.acov = grow(w.acov, L)
	clear(w.power)
	clear(w.seq[h:])
	for c, moving := range w.moving {
		if !moving {
			continue
		}
		copy(w.seq, w.cent[c*h:(c+1)*h])
		w.fft.Coefficients(w.coef, w.seq)
		for j, a := range w.coef {
			w.power[j] += complex(real(a)*real(a)+imag(a)*imag(a), 0)
		}
	}
	w.fft.Sequence(w.acov, w.power)
	w.byFFT = true
}
