package dlmc

import "math"

// The jump process of one variable is reversible with respect to
// ν ∝ e^ℓ over its m possible states: ν_a R(a → b) = ν_b R(b → a), since
// g(t) = t·g(1/t). So S = D^½ Q D^−½, D = diag(ν), is symmetric (see
// symmetrise), with eigenvalues 0 = λ_0 > λ_1 ≥ … ≥ λ_(m−1), γ = −λ_1 the
// spectral gap, and orthonormal eigenvectors v_k, v_0 = √ν; and
//
//	P_h(c → b) = √(ν_b/ν_c) e^(hS)[c, b]
//	           = ν_b + √(ν_b/ν_c) Σ_(k≥1) e^(hλ_k) v_k[c] v_k[b].
//
// By Cauchy–Schwarz the sum over k ≥ 1 is at most
// e^−hγ √((1 − ν_c)(1 − ν_b)) in absolute value, so that
//
//	|P_h(c → b) − ν_b| ≤ ν_b · e^−hγ / √(ν_c ν_b).                        (1)
//
// The kernel uses this twice (many). Where a lower bound of γ (gapBound,
// sqrtGapBound) makes the right side of (1) at most 10⁻¹⁷ ν_b for every
// b, the row is ν to double precision and is returned as such, whatever
// h. Where the uniformised series would need squarings, it diagonalises S
// (spectralRow) and keeps the result where a bound of its error,
// relative to each entry, is at most spectralTol.

// forgetLog is log 10¹⁷: the row is taken to be ν when bound (1) is at
// most e^−forgetLog relative to every entry, about a tenth of the unit
// of rounding 2^−53.
var forgetLog = math.Log(1e17)

// minSpectralLogNu bounds log ν of every possible state for spectralRow,
// so that neither √ν nor S's entries underflow or overflow.
const minSpectralLogNu = -600

// spectralTol is the largest error bound, relative to each entry of the
// row, with which spectralRow keeps its result; the uniformised series is
// used instead where the bound is larger.
const spectralTol = 1e-12

// maxSweeps bounds the Jacobi sweeps; a symmetric matrix of a few dozen
// rows converges quadratically, to rounding in about 5–10.
const maxSweeps = 40

// equilibrium writes ν of the m possible states k.idx[:m] of a variable
// with log-weights ell into k.nu and log ν into k.lnu, and returns the
// smallest log ν and the largest ν. Each ν_a is e^(ℓ_a − ℓ_max)/Σ, and
// log ν_a = ℓ_a − ℓ_max − log Σ, Σ = Σ_b e^(ℓ_b − ℓ_max), both to a few
// units of rounding of themselves.
func (k *kernel) equilibrium(ell []float64, m int) (minLog, maxNu float64) {
	idx := k.idx[:m]
	lo, hi := ell[idx[0]], ell[idx[0]]
	for _, s := range idx[1:] {
		if l := ell[s]; l > hi {
			hi = l
		} else if l < lo {
			lo = l
		}
	}
	nu, lnu := k.nu[:m], k.lnu[:m]
	var sum float64
	for a, s := range idx {
		x := 1.0 // e^0, for the largest
		if d := ell[s] - hi; d != 0 {
			x = math.Exp(d)
		}
		nu[a] = x
		sum += x
	}
	inv, logSum := 1/sum, math.Log(sum)
	for a, s := range idx {
		nu[a] *= inv
		lnu[a] = ell[s] - hi - logSum
	}
	return lo - hi - logSum, inv
}

// gapBound returns a lower bound of the spectral gap γ of the process,
// whose Dirichlet form E(f) = ½ Σ_(a≠b) ν_a R(a → b) (f_a − f_b)² is
// compared with Var_ν(f) = ½ Σ_(a≠b) ν_a ν_b (f_a − f_b)² (γ is the least
// ratio of the two): with Sqrt ν_a R(a → b) = √(ν_a ν_b) ≥ ν_a ν_b / ν_max,
// so γ ≥ 1/ν_max; with Ratio ν_a R(a → b) = ν_a ν_b/(ν_a + ν_b), so
// γ ≥ 1/(ν_(1) + ν_(2)), the two largest. Both are at least 1. It reads
// k.nu (equilibrium), whose largest entry is maxNu.
func (k *kernel) gapBound(bal Balance, m int, maxNu float64) float64 {
	if bal == Sqrt {
		return 1 / maxNu
	}
	first, second := 0.0, 0.0
	for _, x := range k.nu[:m] {
		if x > first {
			first, second = x, first
		} else if x > second {
			second = x
		}
	}
	return 1 / (first + second)
}

// sqrtGapBound returns a lower bound of γ with Sqrt that is never below
// gapBound's, at the cost of m square roots: Σ_b √(ν_b/ν_max), maxNu the
// largest ν. With Sqrt, S = 11ᵀ − diag(W/√ν_a), W = Σ_b √ν_b (see
// symmetrise), a diagonal matrix plus a positive rank-one term, whose
// eigenvalues interlace the diagonal's: the second largest, −γ, is at most
// the largest diagonal entry, −W/√ν_max.
func (k *kernel) sqrtGapBound(m int, maxNu float64) float64 {
	var w float64
	for _, x := range k.nu[:m] {
		w += math.Sqrt(x)
	}
	return w / math.Sqrt(maxNu)
}

// maxExit returns Λ, the largest exit rate of the process, from k.nu: the
// exit rate of a is Σ_(b≠a) √(ν_b/ν_a) with Sqrt and
// Σ_(b≠a) ν_b/(ν_a + ν_b) with Ratio, both largest at the least likely a.
func (k *kernel) maxExit(bal Balance, m int) float64 {
	nu := k.nu[:m]
	lo := 0
	for a := range m {
		if nu[a] < nu[lo] {
			lo = a
		}
	}
	var s float64
	for b := range m {
		if b == lo {
			continue
		}
		if bal == Sqrt {
			s += math.Sqrt(nu[b] / nu[lo])
		} else {
			s += nu[b] / (nu[lo] + nu[b])
		}
	}
	return s
}

// spectralRow writes row c of exp(hQ) for the m ≥ 3 possible states into
// k.v2[:m] (its sum is 1 up to rounding) from an eigendecomposition of S,
// and returns a bound of its error relative to each entry: the largest
// over the row, +Inf where there is none (the Jacobi iteration did not
// converge, or an entry is not > 0). It reads k.nu, whose entries must be
// ≥ e^minSpectralLogNu.
//
// The known eigenvector √ν of λ_0 = 0 is deflated first: the Householder
// reflection H = I − w wᵀ/(1 + √ν_p), w = √ν + e_p (p the most likely
// state), maps √ν to −e_p, so that H S H is zero in row and column p and
// its other m − 1 rows and columns, T, have S's other eigenvalues. Cyclic
// Jacobi rotations diagonalise T = V diag(λ) Vᵀ, and with X = H [V; 0]
// (V with a row of zeros inserted at p) the row is
//
//	e^(hS)[c, b] = √(ν_c ν_b) + Σ_k e^(hλ_k) X[c, k] X[b, k],
//
// its stationary term from ν itself, not from a computed eigenvector.
//
// The computed eigendecomposition is exact for S + E with ‖E‖_F ≤ β, β a
// few units of rounding u = 2^−53 times ‖S‖_F per sweep (taken as
// 4m(sweeps + 2)·u·‖S‖_F, the reflection included). The function that is
// e^(hλ) on S's negative eigenvalues and 0 at the stationary one then
// changes by at most ‖E‖_F times its largest divided difference over the
// two spectra, at most e^−hγ' max(h, 1/γ'), γ' = γ̂ − β ≤ γ, γ̂ the least
// of −λ_k. With the rounding of the sum (m terms of at most e^−hγ') the
// absolute error of e^(hS)[c, b] is at most
//
//	e^−hγ' (β (h + 1/γ') + 4m·u),
//
// and that relative to e^(hS)[c, b] is the bound returned (the entry of P
// is e^(hS)[c, b] times √(ν_b/ν_c), which adds rounding only). Where the
// process has hardly mixed (hγ small), entries off the diagonal are small
// against it. TestSpectralRowBound finds the actual errors far below the
// bound wherever it exceeds rounding.
func (k *kernel) spectralRow(c int, h float64, bal Balance, m int) float64 {
	nu, u := k.nu[:m], k.u[:m]
	p := 0
	for a := range m {
		u[a] = math.Sqrt(nu[a])
		if nu[a] > nu[p] {
			p = a
		}
	}
	s := k.s[:m*m]
	normF := symmetrise(s, nu, u, m, bal)
	// T = H S H without row and column p. With κ = 1/(1 + √ν_p), so that
	// H = I − κ w wᵀ, and y = S w = S e_p (S√ν = 0): H S H = S − w zᵀ − z wᵀ,
	// z = κ y − (κ² y_p/2) w (wᵀy = y_p); off p, w_a = √ν_a. z is kept in
	// k.x until X replaces it.
	n := m - 1
	kappa := 1 / (1 + u[p])
	z := k.x[:m]
	for a := range m {
		z[a] = kappa*s[a*m+p] - 0.5*kappa*kappa*s[p*m+p]*u[a]
	}
	t := k.tt[:n*n]
	for a, i := 0, 0; a < m; a++ {
		if a == p {
			continue
		}
		for b, j := 0, 0; b < m; b++ {
			if b == p {
				continue
			}
			t[i*n+j] = s[a*m+b] - u[a]*z[b] - z[a]*u[b]
			j++
		}
		i++
	}
	v := k.vec[:n*n]
	sweeps, ok := jacobi(t, v, n, 0x1p-56*normF)
	if !ok {
		return math.Inf(1)
	}
	gap := math.Inf(1)
	for j := range n {
		gap = min(gap, -t[j*n+j])
	}
	const unit = 0x1p-53
	beta := 4 * float64(m*(sweeps+2)) * unit * normF // β ≥ ‖E‖_F
	g := gap - beta
	if !(g > 0) {
		return math.Inf(1)
	}
	bound := math.Exp(-h*g) * (beta*(h+1/g) + 4*float64(m)*unit)
	ex := k.lam[:n]
	for j := range n {
		ex[j] = math.Exp(h * t[j*n+j])
	}
	// X = H [V; 0]: row a ≠ p is V's row minus κ √ν_a (wᵀ[V; 0])_k, row p
	// is −(wᵀ[V; 0])_k (κ w_p = 1). wᵀ[V; 0] goes into k.v.
	x, wv := k.x[:m*n], k.v[:n]
	for j := range n {
		var d float64
		for a, i := 0, 0; a < m; a++ {
			if a != p {
				d += u[a] * v[i*n+j]
				i++
			}
		}
		wv[j] = d
	}
	for a, i := 0, 0; a < m; a++ {
		row := x[a*n : (a+1)*n]
		if a == p {
			for j := range n {
				row[j] = -wv[j]
			}
			continue
		}
		for j := range n {
			row[j] = v[i*n+j] - kappa*u[a]*wv[j]
		}
		i++
	}
	out := k.v2[:m]
	xc := x[c*n : (c+1)*n]
	var worst float64 // the largest bound/e(hS)[c, b]
	for b := range m {
		xb := x[b*n : (b+1)*n]
		var sum float64
		for j := range n {
			sum += xc[j] * xb[j] * ex[j]
		}
		e := u[c]*u[b] + sum
		if !(e > 0) {
			return math.Inf(1)
		}
		worst = max(worst, bound/e)
		out[b] = e * (u[b] / u[c])
	}
	return worst
}

// symmetrise writes S = D^½ Q D^−½ (D = diag(ν)) into s, m×m, and returns
// its Frobenius norm. Off the diagonal S_ab = √(ν_a/ν_b) R(a → b): 1 with
// Sqrt (R(a → b) = √(ν_b/ν_a)), √(ν_a ν_b)/(ν_a + ν_b) with Ratio
// (R(a → b) = ν_b/(ν_a + ν_b)); on it minus the exit rate,
// −Σ_(b≠a) √ν_b/√ν_a with Sqrt and −Σ_(b≠a) ν_b/(ν_a + ν_b) with Ratio. u
// holds √ν.
func symmetrise(s, nu, u []float64, m int, bal Balance) float64 {
	var norm float64
	for a := range m {
		var exit float64
		for b := range m {
			if b == a {
				continue
			}
			var x float64
			if bal == Sqrt {
				x = 1
				exit += u[b]
			} else {
				den := 1 / (nu[a] + nu[b])
				x = u[a] * u[b] * den
				exit += nu[b] * den
			}
			s[a*m+b] = x
			norm += x * x
		}
		if bal == Sqrt {
			exit /= u[a]
		}
		s[a*m+a] = -exit
		norm += exit * exit
	}
	return math.Sqrt(norm)
}

// jacobi diagonalises the symmetric n×n matrix a (row-major, both
// triangles) by cyclic Jacobi rotations: on return a's diagonal holds the
// eigenvalues and the columns of v orthonormal eigenvectors, a = v·diag·vᵀ
// up to rounding. An off-diagonal entry of at most tiny is set to zero
// instead of rotated away (a perturbation of at most tiny); the iteration
// stops after the first sweep that rotates nothing. It returns the sweeps
// that rotated, and false if maxSweeps did not suffice.
func jacobi(a, v []float64, n int, tiny float64) (int, bool) {
	clear(v[:n*n])
	for j := range n {
		v[j*n+j] = 1
	}
	for sweep := range maxSweeps {
		rotated := false
		for p := 0; p < n-1; p++ {
			for q := p + 1; q < n; q++ {
				apq := a[p*n+q]
				if math.Abs(apq) <= tiny {
					a[p*n+q], a[q*n+p] = 0, 0
					continue
				}
				rotated = true
				// The rotation that zeroes a_pq: t = tan φ, the smaller
				// root of t² + 2θt − 1 = 0 (Rutishauser's formulas).
				app, aqq := a[p*n+p], a[q*n+q]
				theta := (aqq - app) / (2 * apq)
				var t float64
				if math.Abs(theta) > 1e150 {
					t = 0.5 / theta
				} else {
					t = 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
					if theta < 0 {
						t = -t
					}
				}
				cs := 1 / math.Sqrt(t*t+1)
				sn := t * cs
				tau := sn / (1 + cs)
				a[p*n+p] = app - t*apq
				a[q*n+q] = aqq + t*apq
				a[p*n+q], a[q*n+p] = 0, 0
				for r := range n {
					if r == p || r == q {
						continue
					}
					arp, arq := a[r*n+p], a[r*n+q]
					x := arp - sn*(arq+tau*arp)
					y := arq + sn*(arp-tau*arq)
					a[r*n+p], a[p*n+r] = x, x
					a[r*n+q], a[q*n+r] = y, y
				}
				for r := range n {
					vrp, vrq := v[r*n+p], v[r*n+q]
					v[r*n+p] = vrp - sn*(vrq+tau*vrp)
					v[r*n+q] = vrq + sn*(vrp-tau*vrq)
				}
			}
		}
		if !rotated {
			return sweep, true
		}
	}
	return maxSweeps, false
}
