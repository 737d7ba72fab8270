package dlmc

import (
	"fmt"
	"math"

	"github.com/dstein/dstein/sampler/balance"
)

// Why one file of about 510 lines: the continuous-time jump process of DLMC: its balancing
// functions, the exact per-variable transition probabilities and their numerically stable
// forms are one derivation.

// Balance is the locally balanced function g that turns the estimated
// ratio t = p*(z with z_i = s) / p*(z) of a move into its rate g(t) (see
// package balance).
type Balance = balance.Func

const (
	// Sqrt is g(t) = √t, DISCS's SQRT (its default, and this package's).
	Sqrt = balance.Sqrt
	// Ratio is g(t) = t/(1+t), DISCS's RATIO (Barker's function).
	Ratio = balance.Ratio
)

// logSigmoid returns log σ(x) = −log(1 + e^−x) without overflow.
func logSigmoid(x float64) float64 { return balance.LogSigmoid(x) }

// twoState returns the probabilities, and their logarithms, that a
// two-state chain at its state c is at the other state o, or still (or
// again) at c, after time h, when the log-ratio of o to c is estimated as
// δ: with a = g(e^δ) the rate c → o and b = g(e^−δ) the rate back,
//
//	P(move) = a/(a+b) · (1 − e^−(a+b)h),   P(stay) = b/(a+b) + a/(a+b) · e^−(a+b)h,
//
// where a/(a+b) = σ(δ) for either balancing function (g(t) = t·g(1/t)).
// Both are computed without cancellation and sum to 1 up to rounding. δ
// must not be NaN or +Inf; δ = −Inf gives P(move) = 0.
func twoState(b Balance, delta, h float64) (move, stay, logMove, logStay float64) {
	// σ(δ) and σ(−δ) from e^−|δ|; Sqrt's pair rate e^(δ/2) + e^(−δ/2) from
	// its square root.
	ea := math.Exp(-math.Abs(delta))
	big := 1 / (1 + ea)
	sm, ss := big, ea*big
	if delta < 0 {
		sm, ss = ss, sm
	}
	c := 1.0 // Ratio: σ(δ) + σ(−δ)
	if b == Sqrt {
		r := math.Sqrt(ea)
		c = r + 1/r
	}
	// e^−(a+b)h and 1 − e^−(a+b)h, each to full relative accuracy.
	ht := h * c
	var e, one float64
	if ht > 0.5 {
		e = math.Exp(-ht)
		one = 1 - e
	} else {
		em := math.Expm1(-ht)
		e, one = 1+em, -em
	}
	move, stay = sm*one, ss+sm*e
	return move, stay, math.Log(move), math.Log(stay)
}

// The many-state kernel sums the series of the current state's row alone
// (see kernel) when Λh ≤ rowTheta·m for m possible states, at most
// maxRowTheta: up to there that costs fewer operations (about
// Λh + 9√Λh + 10 terms of m² each) than the whole matrix's series at
// Λt ≤ thetaMax (about 15–20 terms of m³ each) and its log₂(Λh/thetaMax)
// squarings. Above it, the time is halved until Λt ≤ thetaMax, the series
// summed for the whole matrix and the matrix squared as often.
const (
	rowTheta    = 4
	maxRowTheta = 256
	thetaMax    = 0.5
)

// maxTerms bounds the terms of the series, plus 2θ in the row's: it
// converges to rounding within about θ + 9√θ + 10 terms.
const maxTerms = 64

// maxHalvings bounds the squarings: 2^4096 exceeds any Λh whose rates are
// formed from differences of log p* below about 5000 (Sqrt) and any step
// size the adaptation reaches.
const maxHalvings = 4096

// A kernel computes transition probabilities of the jump process of one
// variable with more than two possible states, for one chain.
//
// The process moves between the variable's possible states a ≠ b at rate
// R(a → b) = g(e^(ℓ_b − ℓ_a)), where ℓ is the variable's block of the
// proposal gradient at the chain's state; its transition probabilities
// over time h are exp(hQ), Q the generator (off-diagonal R, rows summing
// to 0). With q > 2 states exp(hQ) has no closed form. DISCS uses a
// factorised estimate instead, exact for two states only: it gives each
// other state s the probability ν_s(1 − e^(−R(z_i → s)h/ν_s)), with ν ∝ e^ℓ,
// as if s and the current state formed a two-state process, and the
// current state the rest (a proposal still reversible with respect to ν,
// with the right limits for small and large h, but not the process's
// transition probabilities in between). Here exp(hQ) is computed
// exactly, up to a small error relative to each entry, so that the
// proposal is the one the method defines whatever q.
//
// Small probabilities' logarithms enter the acceptance ratio, so each
// entry must be accurate relative to itself, not merely against the
// largest. Of three ways, many chooses:
//
// Uniformisation (uniformised), where the process is far from its
// stationary distribution: with Λ the largest exit rate,
// exp(tQ) = e^−Λt · exp(t(Q + ΛI)), where Q + ΛI ≥ 0 entrywise, and the
// Taylor series of exp(t(Q + ΛI)) is summed until no entry changes (all
// its terms are ≥ 0). When Λh ≤ 4q (at most 256) the series is summed at
// t = h for the current state's row alone, O(q²) per term and about
// Λh + 9√Λh + 10 terms. Beyond that the time is halved s times, until
// Λt ≤ 0.5, the whole matrix's series summed (about 15–20 terms of O(q³))
// and the result squared s ≈ log₂(2Λh) times; the squaring stops early
// once it no longer changes the matrix (every row the stationary
// distribution: h long enough for the process to forget its start). All
// the arithmetic adds and multiplies numbers ≥ 0, so every probability,
// however small, is accurate relative to itself: to a few units of
// rounding, times 2^s ≈ 2Λh after s squarings, each of which about
// doubles the relative error (TestManyStateRowsMatchMatrixExponential
// measures at most 7e-15·(1 + Λh) against a 300-bit reference). The rates
// come from one exponential per state where the log-weights' spread
// allows it (linearRates), else from their logarithms, and are scaled by
// t in the log, so that neither Λh nor a rate overflows.
//
// The stationary distribution ν ∝ e^ℓ itself, where the process has
// forgotten its start to double precision: where a lower bound γ of its
// spectral gap gives e^−hγ/√(ν_c ν_b) ≤ 10⁻¹⁷ for the current state c and
// every b (spectral.go), whatever h. This is the row at the long step
// sizes that adaptation reaches on weakly coupled models (10⁹ on
// independent variables), m − 1 exponentials and a logarithm.
//
// An eigendecomposition of the symmetrised generator (spectralRow), in
// between, where uniformisation would square: O(q³) whatever h, with the
// stationary term exact. In general an eigendecomposition cancels terms
// of opposite signs, so that small entries lose their relative accuracy
// (so would a Padé approximant); this one is kept only where a bound of
// its error is at most 10⁻¹² relative to every entry of the row, which
// holds once the process has partly mixed (e^−hγ small against the
// entries); elsewhere the uniformised series is squared.
//
// The sampler samples from, and evaluates, these computed probabilities
// (normalised), so the Metropolis–Hastings correction is exact whatever
// their remaining error.
type kernel struct {
	linear bool      // whether the rates are in b (linearRates) or their logarithms in lr
	idx    []int     // the possible states (ℓ > −Inf)
	lr     []float64 // log-rates, m×m
	exit   []float64 // log exit rates, then off-diagonal row sums of b
	b      []float64 // t·(Q + ΛI), m×m
	p, t   []float64 // the series' sum and term, m×m
	t2     []float64 // scratch, m×m
	v, v2  []float64 // rows
	// The equilibrium and spectral paths (spectral.go).
	nu, lnu []float64 // ν and log ν of the possible states
	u, lam  []float64 // √ν; e^(hλ) of T's eigenvalues
	s       []float64 // S, m×m
	tt, vec []float64 // T, diagonalised in place, and its eigenvectors (columns), (m−1)×(m−1)
	x       []float64 // H [V; 0], m×(m−1)
}

// newKernel returns a kernel for variables of up to q states.
func newKernel(q int) *kernel {
	return &kernel{
		idx: make([]int, q), lr: make([]float64, q*q), exit: make([]float64, q),
		b: make([]float64, q*q), p: make([]float64, q*q), t: make([]float64, q*q), t2: make([]float64, q*q),
		v: make([]float64, q), v2: make([]float64, q),
		nu: make([]float64, q), lnu: make([]float64, q), u: make([]float64, q), lam: make([]float64, q),
		s: make([]float64, q*q), tt: make([]float64, q*q), vec: make([]float64, q*q), x: make([]float64, q*q),
	}
}

// row writes P_h(cur → s) and its logarithm into q[s] and logq[s] for
// every state s of one variable whose proposal-gradient block is ell
// (log-weights up to a constant), for the balancing function bal and the
// time h > 0. States with ℓ = −Inf (zeros of p* given the other
// variables) get probability 0. It fails when an entry of ell is NaN or
// +Inf, or ell[cur] is not finite.
func (k *kernel) row(logq, q, ell []float64, cur int, h float64, bal Balance) error {
	m, c := 0, -1
	for s, l := range ell {
		switch {
		case math.IsNaN(l) || math.IsInf(l, 1):
			return fmt.Errorf("proposal gradient of state %d is %v", s, l)
		case math.IsInf(l, -1):
			if s == cur {
				return fmt.Errorf("proposal gradient of the current state %d is %v", s, l)
			}
			logq[s], q[s] = math.Inf(-1), 0
			continue
		}
		if s == cur {
			c = m
		}
		k.idx[m] = s
		m++
	}
	switch m {
	case 1:
		logq[cur], q[cur] = 0, 1
		return nil
	case 2:
		o := k.idx[0] + k.idx[1] - cur
		q[o], q[cur], logq[o], logq[cur] = twoState(bal, ell[o]-ell[cur], h)
		return nil
	}
	out, err := k.many(ell, m, c, h, bal)
	if err != nil {
		return err
	}
	if out == nil {
		// The process has forgotten its start: the row is ν.
		for j, s := range k.idx[:m] {
			q[s], logq[s] = k.nu[j], k.lnu[j]
		}
		return nil
	}
	var sum float64
	for j := range m {
		sum += out[j]
	}
	inv := 1 / sum
	for j := range m {
		p := out[j] * inv
		q[k.idx[j]], logq[k.idx[j]] = p, math.Log(p)
	}
	return nil
}

// many returns row c of exp(hQ) for the m ≥ 3 possible states k.idx[:m]
// (unnormalised: its sum is 1 up to rounding; the slice belongs to k), or
// nil where that row is ν, in k.nu and k.lnu, to double precision:
//
//   - ν where bound (1) of spectral.go, with a lower bound of γ
//     (gapBound, then with Sqrt the sharper sqrtGapBound), is at most
//     10⁻¹⁷ relative to every entry, that is where
//     hγ ≥ log 10¹⁷ − ½ log(ν_c ν_min). As both bounds are at most m,
//     that needs h·m ≥ log 10¹⁷, below which ν is not computed for it.
//   - The uniformised series of the row alone (uniformised) where
//     Λh ≤ rowTheta·m, Λ the largest exit rate.
//   - Beyond that the eigendecomposition (spectralRow) where its error
//     bound is at most spectralTol relative to every entry, else the
//     uniformised series with squarings.
//
// Λ comes from ν where ν is at hand, else from the rates (rates), which
// uniformisation then reuses.
func (k *kernel) many(ell []float64, m, c int, h float64, bal Balance) ([]float64, error) {
	rowMax := min(rowTheta*float64(m), maxRowTheta) // Λh above this needs squarings
	if h*float64(m) >= forgetLog {
		minLog, maxNu := k.equilibrium(ell, m)
		need := forgetLog - 0.5*(k.lnu[c]+minLog) // hγ needed for ν
		if h*k.gapBound(bal, m, maxNu) >= need || bal == Sqrt && h*k.sqrtGapBound(m, maxNu) >= need {
			return nil, nil
		}
		if minLog > minSpectralLogNu && k.maxExit(bal, m)*h > rowMax && k.spectralRow(c, h, bal, m) <= spectralTol {
			return k.v2[:m], nil
		}
		return k.transition(ell, m, c, h, bal)
	}
	logL := k.rates(ell, m, bal)
	if logL+math.Log(h) > math.Log(rowMax) { // as uniformised decides
		if minLog, _ := k.equilibrium(ell, m); minLog > minSpectralLogNu && k.spectralRow(c, h, bal, m) <= spectralTol {
			return k.v2[:m], nil
		}
	}
	return k.uniformised(m, c, h, logL)
}

// transition returns row c of exp(hQ) for the m ≥ 3 possible states
// k.idx[:m] (unnormalised: its sum is 1 up to rounding) by uniformisation
// alone, the rates from ell: rates, then uniformised.
func (k *kernel) transition(ell []float64, m, c int, h float64, bal Balance) ([]float64, error) {
	return k.uniformised(m, c, h, k.rates(ell, m, bal))
}

// rates writes the rates R(a → b) of the m possible states k.idx[:m] into
// k.b (off the diagonal), or their logarithms into k.lr where the
// log-weights are too far apart (linearRates, logRates), and returns the
// logarithm of the largest exit rate Λ.
func (k *kernel) rates(ell []float64, m int, bal Balance) float64 {
	if !k.linearRates(ell, m, bal) {
		k.logRates(ell, m, bal)
	}
	logL := math.Inf(-1)
	for a := range m {
		logL = max(logL, k.exit[a])
	}
	return logL
}

// uniformised returns row c of exp(hQ) from the rates that rates wrote,
// logL the logarithm of the largest exit rate, by uniformisation (see
// kernel). The returned slice belongs to k; its sum is 1 up to rounding.
// It fails when the rates are so far apart that more than maxHalvings
// halvings would be needed (differences of log p* in the hundreds of
// thousands).
func (k *kernel) uniformised(m, c int, h, logL float64) ([]float64, error) {
	// The time t = h/2^s of the series: h itself when Λh ≤ rowTheta·m (only
	// row c is needed then), else halved until Λt ≤ thetaMax.
	logT := logL + math.Log(h)
	halve := 0
	if logT > math.Log(min(rowTheta*float64(m), maxRowTheta)) {
		x := math.Ceil((logT - math.Log(thetaMax)) / math.Ln2)
		if !(x <= maxHalvings) {
			return nil, fmt.Errorf("transition rates out of range (largest exit rate × step size = e^%.4g)", logT)
		}
		halve = int(x)
	}
	logt := math.Log(h) - float64(halve)*math.Ln2
	// b = t(Q + θ/t·I) with θ the largest off-diagonal row sum of tQ, so
	// that every row of b sums to θ and the diagonal is ≥ 0.
	theta, tt := 0.0, math.Exp(logt)
	for a := range m {
		var s float64
		for b := range m {
			if b == a {
				continue
			}
			var x float64
			if k.linear {
				x = k.b[a*m+b] * tt
			} else {
				x = math.Exp(k.lr[a*m+b] + logt)
			}
			k.b[a*m+b] = x
			s += x
		}
		k.exit[a] = s
		theta = max(theta, s)
	}
	for a := range m {
		k.b[a*m+a] = theta - k.exit[a]
	}
	scale := math.Exp(-theta)
	if halve == 0 {
		// Row c alone: v ← v·b/j, summed into the result.
		acc, v, w := k.p[:m], k.v[:m], k.v2[:m]
		clear(acc)
		clear(v)
		acc[c], v[c] = 1, 1
		bm := k.b[:m*m]
		for j := 1; j <= maxTerms+2*int(theta); j++ {
			inv := 1 / float64(j)
			for b := range m {
				var s float64
				for a := range m {
					s += v[a] * bm[a*m+b]
				}
				w[b] = s * inv
			}
			done := true
			for b := range m {
				acc[b] += w[b]
				if w[b] > 0x1p-53*acc[b] {
					done = false
				}
			}
			v, w = w, v
			if done {
				break
			}
		}
		for b := range m {
			acc[b] *= scale
		}
		return acc, nil
	}
	// The whole matrix, then squared.
	mm := m * m
	p, t, t2 := k.p[:mm], k.t[:mm], k.t2[:mm]
	clear(p)
	clear(t)
	for a := range m {
		p[a*m+a], t[a*m+a] = 1, 1
	}
	for j := 1; j <= maxTerms; j++ {
		mul(t2, t, k.b[:mm], m, 1/float64(j))
		t, t2 = t2, t
		done := true
		for x := range mm {
			p[x] += t[x]
			if t[x] > 0x1p-53*p[x] {
				done = false
			}
		}
		if done {
			break
		}
	}
	for x := range mm {
		p[x] *= scale
	}
	for range halve {
		mul(t2, p, p, m, 1)
		p, t2 = t2, p
		if stationary(p, t2) {
			// Squaring no longer changes the matrix: every row is the
			// stationary distribution, which further squarings keep.
			break
		}
	}
	return p[c*m : (c+1)*m], nil
}

// maxLinearExp bounds f·(ℓ_max − ℓ_min) (f = ½ with Sqrt, 1 with Ratio)
// for linearRates: the weights e^(f(ℓ − ℓ_max)) then stay above e^−700,
// far from underflow, and Sqrt's rates below e^700.
const maxLinearExp = 700

// linearRates writes the rates R(a → b) into k.b (a ≠ b) and the logarithm
// of each state's exit rate into k.exit, from one exponential per state:
// with w_a = e^(f(ℓ_a − ℓ_max)), R(a → b) = w_b/w_a for Sqrt (f = ½) and
// w_b/(w_a + w_b) for Ratio (f = 1). It reports false, having written
// nothing, when the log-weights are too far apart for that (maxLinearExp).
func (k *kernel) linearRates(ell []float64, m int, bal Balance) bool {
	f := 0.5
	if bal == Ratio {
		f = 1
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for a := range m {
		l := ell[k.idx[a]]
		lo, hi = min(lo, l), max(hi, l)
	}
	if f*(hi-lo) > maxLinearExp {
		return false
	}
	w := k.v[:m]
	for a := range m {
		w[a] = math.Exp(f * (ell[k.idx[a]] - hi))
	}
	for a := range m {
		var s float64
		for b := range m {
			if b == a {
				continue
			}
			var r float64
			if bal == Ratio {
				r = w[b] / (w[a] + w[b])
			} else {
				r = w[b] / w[a]
			}
			k.b[a*m+b] = r
			s += r
		}
		k.exit[a] = math.Log(s)
	}
	k.linear = true
	return true
}

// logRates writes the log-rates log R(a → b) into k.lr (a ≠ b) and the
// logarithm of each state's exit rate into k.exit, for log-weights too far
// apart for linearRates.
func (k *kernel) logRates(ell []float64, m int, bal Balance) {
	for a := range m {
		la := ell[k.idx[a]]
		top := math.Inf(-1)
		for b := range m {
			if b == a {
				continue
			}
			r := bal.LogWeight(ell[k.idx[b]] - la)
			k.lr[a*m+b] = r
			top = max(top, r)
		}
		var s float64
		for b := range m {
			if b != a {
				s += math.Exp(k.lr[a*m+b] - top)
			}
		}
		k.exit[a] = top + math.Log(s)
	}
	k.linear = false
}

// stationary reports whether the squared matrix p equals the matrix t that
// was squared to within a relative 2^−50 in every entry.
func stationary(p, t []float64) bool {
	for x, v := range p {
		if math.Abs(v-t[x]) > 0x1p-50*v {
			return false
		}
	}
	return true
}

// mul writes f·(x·y) into dst, all m×m row-major; dst must not overlap x
// or y.
func mul(dst, x, y []float64, m int, f float64) {
	for a := range m {
		row := dst[a*m : (a+1)*m]
		clear(row)
		for j := range m {
			xa := x[a*m+j] * f
			if xa == 0 {
				continue
			}
			yj := y[j*m : (j+1)*m]
			for b := range m {
				row[b] += xa * yj[b]
			}
		}
	}
}
