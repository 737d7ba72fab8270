package dlmc

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// generator returns the generator Q of the jump process over the states
// with finite log-weights ell (rates g(e^(ℓ_b − ℓ_a))), written directly
// from the definition, and those states.
func generator(ell []float64, bal Balance) (*mat.Dense, []int) {
	var idx []int
	for s, l := range ell {
		if !math.IsInf(l, -1) {
			idx = append(idx, s)
		}
	}
	m := len(idx)
	q := mat.NewDense(m, m, nil)
	for a := range m {
		var out float64
		for b := range m {
			if a == b {
				continue
			}
			t := math.Exp(ell[idx[b]] - ell[idx[a]])
			var r float64
			if bal == Ratio {
				r = t / (1 + t)
			} else {
				r = math.Sqrt(t)
			}
			q.Set(a, b, r)
			out += r
		}
		q.Set(a, a, -out)
	}
	return q, idx
}

// reference returns exp(hQ) in 300-bit arithmetic: Q's float64 rates,
// scaled by 2^−s to a norm below 1/16, their Taylor series summed to
// 2^−250 and the result squared s times, then rounded to float64. Its error
// is far below float64 rounding, so the kernel's is measured relative to
// every entry, however small.
func reference(ell []float64, h float64, bal Balance) (*mat.Dense, []int) {
	q, idx := generator(ell, bal)
	m := len(idx)
	const prec = 300
	newF := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
	norm := 0.0
	for a := range m {
		norm = max(norm, 2*h*-q.At(a, a))
	}
	s := 4
	if norm > 1 {
		s += int(math.Ceil(math.Log2(norm)))
	}
	matrix := func() [][]*big.Float {
		x := make([][]*big.Float, m)
		for a := range x {
			x[a] = make([]*big.Float, m)
			for b := range x[a] {
				x[a][b] = newF(0)
			}
		}
		return x
	}
	mulBig := func(x, y [][]*big.Float) [][]*big.Float {
		z := matrix()
		t := newF(0)
		for a := range m {
			for j := range m {
				for b := range m {
					t.Mul(x[a][j], y[j][b])
					z[a][b].Add(z[a][b], t)
				}
			}
		}
		return z
	}
	// A = hQ/2^s with the diagonal as the exact sum of the float64 rates.
	A := matrix()
	for a := range m {
		diag := newF(0)
		for b := range m {
			if a != b {
				A[a][b].SetFloat64(q.At(a, b))
				diag.Sub(diag, A[a][b])
			}
		}
		A[a][a] = diag
		for b := range m {
			A[a][b].Mul(A[a][b], newF(h))
			A[a][b].SetMantExp(A[a][b], -s)
		}
	}
	P, T := matrix(), matrix()
	for a := range m {
		P[a][a].SetFloat64(1)
		T[a][a].SetFloat64(1)
	}
	tiny := new(big.Float).SetMantExp(newF(1), -250)
	for j := 1; ; j++ {
		T = mulBig(T, A)
		largest := newF(0)
		for a := range m {
			for b := range m {
				T[a][b].Quo(T[a][b], newF(float64(j)))
				P[a][b].Add(P[a][b], T[a][b])
				largest = maxBig(largest, new(big.Float).Abs(T[a][b]))
			}
		}
		if largest.Cmp(tiny) < 0 {
			break
		}
	}
	for range s {
		P = mulBig(P, P)
	}
	out := mat.NewDense(m, m, nil)
	for a := range m {
		for b := range m {
			x, _ := P[a][b].Float64()
			out.Set(a, b, x)
		}
	}
	return out, idx
}

func maxBig(x, y *big.Float) *big.Float {
	if x.Cmp(y) >= 0 {
		return x
	}
	return y
}

// The closed form of two states, P(move) = a/(a+b)·(1 − e^−(a+b)h), agrees
// with the matrix exponential of the 2×2 generator (rates a = g(e^δ) out
// and b = g(e^−δ) back) for both balancing functions, over log-ratios
// from −30 to 30 and times from 10⁻⁴ to 50, and its logarithms agree with
// the probabilities where those are tiny.
func TestTwoStateMatchesMatrixExponential(t *testing.T) {
	for _, bal := range []Balance{Sqrt, Ratio} {
		for _, delta := range []float64{-30, -8, -1, -0.1, 0, 0.3, 2, 8, 30} {
			for _, h := range []float64{1e-4, 0.01, 0.3, 1, 5, 50} {
				move, stay, logMove, logStay := twoState(bal, delta, h)
				p, _ := reference([]float64{0, delta}, h, bal)
				if d := math.Abs(move - p.At(0, 1)); d > 1e-13*p.At(0, 1) {
					t.Errorf("%v, δ = %v, h = %v: P(move) %v, matrix exponential %v", bal, delta, h, move, p.At(0, 1))
				}
				if d := math.Abs(stay - p.At(0, 0)); d > 1e-13*p.At(0, 0) {
					t.Errorf("%v, δ = %v, h = %v: P(stay) %v, matrix exponential %v", bal, delta, h, stay, p.At(0, 0))
				}
				if math.Abs(move+stay-1) > 1e-15 {
					t.Errorf("%v, δ = %v, h = %v: probabilities sum to %v", bal, delta, h, move+stay)
				}
				// The definition, term by term (a, b from g directly).
				a, b := math.Sqrt(math.Exp(delta)), math.Sqrt(math.Exp(-delta))
				if bal == Ratio {
					a, b = 1/(1+math.Exp(-delta)), 1/(1+math.Exp(delta))
				}
				want := a / (a + b) * -math.Expm1(-(a+b)*h)
				if math.Abs(move-want) > 1e-12*want {
					t.Errorf("%v, δ = %v, h = %v: P(move) %v, a/(a+b)(1 − e^−(a+b)h) = %v", bal, delta, h, move, want)
				}
				if math.Abs(logMove-math.Log(want)) > 1e-12 || math.Abs(logStay-math.Log(stay)) > 1e-12 {
					t.Errorf("%v, δ = %v, h = %v: logarithms %v, %v of %v, %v", bal, delta, h, logMove, logStay, move, stay)
				}
			}
		}
		// A move into a zero of p*.
		if move, stay, lm, ls := twoState(bal, math.Inf(-1), 0.7); move != 0 || stay != 1 || !math.IsInf(lm, -1) || ls != 0 {
			t.Errorf("%v, δ = −Inf: %v %v %v %v", bal, move, stay, lm, ls)
		}
	}
}

// The many-state kernel's rows of exp(hQ) sum to 1, match a 300-bit
// reference matrix exponential entry by entry, relative to each entry
// (with and without the halvings that large rates and long times need, on
// 3 to 7 states, some of them zeros of p*, and on 16), satisfy
// detailed balance with respect to the gradient's distribution to
// relative accuracy even where a probability is tiny, and on two states
// reproduce the closed form.
func TestManyStateRowsMatchMatrixExponential(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	k := newKernel(7)
	worst := 0.0
	defer func() { t.Logf("largest relative error %.3g × (1 + Λh)", worst) }()
	for _, bal := range []Balance{Sqrt, Ratio} {
		for trial := range 60 {
			q := 3 + trial%5
			spread := []float64{0.5, 2, 6, 15}[trial%4]
			ell := make([]float64, q)
			for s := range ell {
				ell[s] = spread * r.NormFloat64()
			}
			if trial%3 == 2 {
				ell[(trial/3)%q] = math.Inf(-1) // a zero of p*
			}
			for _, h := range []float64{1e-3, 0.05, 0.7, 3, 40} {
				p, idx := reference(ell, h, bal)
				m := len(idx)
				tol := relTol(ell, h, bal)
				if exitTimes(ell, h, bal) < 5 {
					// The reference against gonum's Padé approximant,
					// accurate to rounding at this norm.
					g, _ := generator(ell, bal)
					g.Scale(h, g)
					var e mat.Dense
					e.Exp(g)
					if !mat.EqualApprox(&e, p, 1e-13) {
						t.Errorf("%v, ℓ = %v, h = %v: the reference is not gonum's exp(hQ)", bal, ell, h)
					}
				}
				rows := make([][]float64, q)
				for _, cur := range idx {
					logq, pr := make([]float64, q), make([]float64, q)
					if err := k.row(logq, pr, ell, cur, h, bal); err != nil {
						t.Fatal(err)
					}
					rows[cur] = pr
					var sum float64
					for s := range q {
						sum += pr[s]
						if pr[s] > 0 && math.Abs(logq[s]-math.Log(pr[s])) > 1e-12 {
							t.Errorf("log q %v of q %v", logq[s], pr[s])
						}
					}
					if math.Abs(sum-1) > 1e-13 {
						t.Errorf("%v, ℓ = %v, h = %v, from %d: row sums to %v", bal, ell, h, cur, sum)
					}
				}
				for a := range m {
					for b := range m {
						got, want := rows[idx[a]][idx[b]], p.At(a, b)
						worst = max(worst, math.Abs(got-want)/want/(1+exitTimes(ell, h, bal)))
						if math.Abs(got-want) > tol*want {
							t.Errorf("%v, ℓ = %v, h = %v: P(%d → %d) = %v, matrix exponential %v", bal, ell, h, idx[a], idx[b], got, want)
						}
						// ν_a P_ab = ν_b P_ba with ν ∝ e^ℓ.
						lhs := ell[idx[a]] + math.Log(got)
						rhs := ell[idx[b]] + math.Log(rows[idx[b]][idx[a]])
						if got > 0 && math.Abs(lhs-rhs) > 2*tol {
							t.Errorf("%v, ℓ = %v, h = %v: detailed balance of %d ↔ %d off by %v in the log (P = %v)", bal, ell, h, idx[a], idx[b], lhs-rhs, got)
						}
					}
				}
				for s := range q {
					if rows[s] == nil {
						continue
					}
					for s2 := range q {
						if math.IsInf(ell[s2], -1) && rows[s][s2] != 0 {
							t.Errorf("a zero of p* has probability %v", rows[s][s2])
						}
					}
				}
			}
		}
		// 16 states: the row's series up to Λh = 64, then squarings.
		k16 := newKernel(16)
		ell := make([]float64, 16)
		for s := range ell {
			ell[s] = 3 * r.NormFloat64()
		}
		for _, h := range []float64{0.01, 0.3, 2, 30} {
			p, idx := reference(ell, h, bal)
			tol := relTol(ell, h, bal)
			for _, cur := range []int{0, 7, 15} {
				logq, pr := make([]float64, 16), make([]float64, 16)
				if err := k16.row(logq, pr, ell, cur, h, bal); err != nil {
					t.Fatal(err)
				}
				for b := range idx {
					if got, want := pr[b], p.At(cur, b); math.Abs(got-want) > tol*want {
						t.Errorf("%v, 16 states, h = %v (Λh = %.3g): P(%d → %d) = %v, matrix exponential %v", bal, h, exitTimes(ell, h, bal), cur, b, got, want)
					}
				}
			}
		}
		// The series and squaring on two states give the closed form.
		for _, delta := range []float64{-12, -1, 0, 0.4, 5} {
			for _, h := range []float64{0.01, 0.4, 3, 60} {
				ell := []float64{0, delta}
				k.idx[0], k.idx[1] = 0, 1
				out, err := k.transition(ell, 2, 0, h, bal)
				if err != nil {
					t.Fatal(err)
				}
				move, stay, _, _ := twoState(bal, delta, h)
				tol := relTol(ell, h, bal)
				if math.Abs(out[1]-move) > tol*move || math.Abs(out[0]-stay) > tol*stay {
					t.Errorf("%v, δ = %v, h = %v: series %v, %v; closed form %v, %v", bal, delta, h, out[1], out[0], move, stay)
				}
			}
		}
	}
}

// The many-state kernel reports a NaN or +Inf entry and an impossible
// current state; a variable with one possible state stays.
func TestKernelInput(t *testing.T) {
	k := newKernel(4)
	logq, q := make([]float64, 4), make([]float64, 4)
	for _, ell := range [][]float64{{0, math.NaN(), 1, 2}, {0, math.Inf(1), 1, 2}, {math.Inf(-1), 0, 1, 2}} {
		if err := k.row(logq, q, ell, 0, 0.5, Sqrt); err == nil {
			t.Errorf("ℓ = %v accepted", ell)
		}
	}
	inf := math.Inf(-1)
	if err := k.row(logq, q, []float64{inf, 3, inf, inf}, 1, 0.5, Sqrt); err != nil || q[1] != 1 || q[0] != 0 || logq[1] != 0 {
		t.Errorf("one possible state: %v, %v, %v", q, logq, err)
	}
}

// exitTimes returns Λh, the largest exit rate of the jump process times h.
func exitTimes(ell []float64, h float64, bal Balance) float64 {
	q, _ := generator(ell, bal)
	r, _ := q.Dims()
	lam := 0.0
	for a := range r {
		lam = max(lam, -q.At(a, a))
	}
	return lam * h
}

// relTol is the relative error allowed of the kernel's probabilities:
// a few units of rounding for the series, and for the s ≈ log₂(2Λh)
// squarings, each of which about doubles the relative error of the
// matrix squared, a multiple of 2^s ≈ 2Λh units.
func relTol(ell []float64, h float64, bal Balance) float64 {
	return 1e-13 + 3e-14*exitTimes(ell, h, bal)
}

// Computing a row allocates nothing, whichever way.
func TestKernelAllocs(t *testing.T) {
	k := newKernel(5)
	logq, q := make([]float64, 5), make([]float64, 5)
	ell := []float64{0, 1, -2, 0.5, 3}
	for _, bal := range []Balance{Sqrt, Ratio} {
		// The series, squarings (with Sqrt: the eigendecomposition's bound
		// refuses at h = 1), the eigendecomposition, ν.
		for _, h := range []float64{0.01, 1, 10, 1e9} {
			if n := testing.AllocsPerRun(10, func() { _ = k.row(logq, q, ell, 2, h, bal) }); n != 0 {
				t.Errorf("%v, h = %v: %v allocations", bal, h, n)
			}
		}
	}
}

// The rows that row computes agree with a 300-bit matrix exponential, and
// with the uniformisation alone (transition, the kernel before ν and the
// eigendecomposition were added), on 3 to 8 states, some of them zeros of
// p*, log-weights N(0, σ²) with σ from 0 to 10, both balancing functions
// and h from 10⁻³ to 10¹²: a row that is ν (the process has forgotten its
// start) or from the eigendecomposition to 10⁻¹² relative to each entry
// (in fact to a few units of rounding), a uniformised one to the
// uniformisation's tolerance (relTol, which grows with Λh through the
// squarings: 10⁻¹¹–10⁻¹⁰ where the log-weights are far apart); and every
// row agrees with the uniformisation's to 10⁻¹² where that is as
// accurate.
func TestRowsAgreeWithUniformisation(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	var ways [3]int // ν, eigendecomposition, uniformisation
	worst, worstOld := 0.0, 0.0
	for _, bal := range []Balance{Sqrt, Ratio} {
		for q := 3; q <= 8; q++ {
			k := newKernel(q)
			for trial, spread := range []float64{0, 0.5, 1.5, 4, 10} {
				ell := make([]float64, q)
				for s := range ell {
					ell[s] = spread * r.NormFloat64()
				}
				if trial == 2 || trial == 3 {
					ell[r.IntN(q)] = math.Inf(-1)
				}
				for _, h := range []float64{1e-3, 0.05, 0.5, 2, 10, 100, 1e3, 1e6, 1e9, 1e12} {
					p, idx := reference(ell, h, bal)
					tolOld := relTol(ell, h, bal)
					logq, pr := make([]float64, q), make([]float64, q)
					for c, cur := range idx {
						m := len(idx)
						copy(k.idx, idx)
						tol, uniformised := 1e-12, false
						switch out, err := k.many(ell, m, c, h, bal); {
						case err != nil:
							t.Fatal(err)
						case out == nil:
							ways[0]++
						case &out[0] == &k.v2[0]:
							ways[1]++
						default:
							ways[2]++
							tol, uniformised = max(tol, tolOld), true
						}
						if err := k.row(logq, pr, ell, cur, h, bal); err != nil {
							t.Fatal(err)
						}
						copy(k.idx, idx)
						old, err := k.transition(ell, m, c, h, bal)
						if err != nil {
							t.Fatal(err)
						}
						var sum float64
						for _, x := range old {
							sum += x
						}
						for b, s := range idx {
							want, prev := p.At(c, b), old[b]/sum
							rel := math.Abs(pr[s]-want) / want
							if !uniformised {
								worst = max(worst, rel)
							}
							if rel > tol {
								t.Errorf("%v, ℓ = %v, h = %v: P(%d → %d) = %v, 300-bit %v (relative error %.3g)", bal, ell, h, cur, s, pr[s], want, rel)
							}
							if tolOld <= 1e-12 {
								d := math.Abs(pr[s]-prev) / prev
								worstOld = max(worstOld, d)
								if d > 1e-12 {
									t.Errorf("%v, ℓ = %v, h = %v: P(%d → %d) = %v, uniformisation %v (relative difference %.3g)", bal, ell, h, cur, s, pr[s], prev, d)
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("rows by ν %d, eigendecomposition %d, uniformisation %d; largest relative error of the first two %.3g; largest difference from uniformisation where that is within 10⁻¹² %.3g", ways[0], ways[1], ways[2], worst, worstOld)
	for w, n := range ways {
		if n < 50 {
			t.Errorf("way %d taken %d times", w, n)
		}
	}
}

// spectralRow's bound of its relative error holds, against a 300-bit
// matrix exponential, wherever it is computed (also where it is too large
// for the kernel to keep the row), up to the rounding of the entries
// themselves.
func TestSpectralRowBound(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	kept, ratio := 0, 0.0
	for _, bal := range []Balance{Sqrt, Ratio} {
		for trial := range 120 {
			q := 3 + trial%6
			spread := []float64{0, 0.5, 1.5, 4, 8}[trial%5]
			ell := make([]float64, q)
			for s := range ell {
				ell[s] = spread * r.NormFloat64()
			}
			k := newKernel(q)
			for j := range q {
				k.idx[j] = j
			}
			for _, h := range []float64{0.01, 0.3, 1, 3, 10, 40} {
				p, _ := reference(ell, h, bal)
				k.equilibrium(ell, q)
				for c := range q {
					bound := k.spectralRow(c, h, bal, q)
					if math.IsInf(bound, 1) {
						continue
					}
					if bound <= spectralTol {
						kept++
					}
					for b := range q {
						want := p.At(c, b)
						rel := math.Abs(k.v2[b]-want) / want
						if rel > bound+1e-14 {
							t.Errorf("%v, ℓ = %v, h = %v: P(%d → %d) = %v, 300-bit %v: relative error %.3g above the bound %.3g", bal, ell, h, c, b, k.v2[b], want, rel, bound)
						}
						if bound > 1e-13 {
							ratio = max(ratio, rel/bound)
						}
					}
				}
			}
		}
	}
	t.Logf("%d rows within spectralTol; largest error/bound where the bound exceeds 10⁻¹³: %.3g", kept, ratio)
}
