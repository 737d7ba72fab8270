package gof

import (
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/transform"
)

// features are the soft bin memberships φ(x) of n points (row-major n×F,
// F = Σ_l K_l) and their derivatives dφ/dx_l, grouped by variable.
type features struct {
	n, d, f int
	off     []int // variable l owns columns off[l] … off[l+1]−1
	phi, dp []float64
}

func softFeatures(m model.Model, t *transform.Transform, x []float64, n int, tau float64) (*features, error) {
	rs, err := transform.NewSoftBins(t, tau)
	if err != nil {
		return nil, err
	}
	off := model.Offsets(m)
	d := m.Dim()
	fe := &features{n: n, d: d, f: off[d], off: off}
	fe.phi = make([]float64, n*fe.f)
	fe.dp = make([]float64, n*fe.f)
	for i := range n {
		for l := range d {
			a, b := i*fe.f+off[l], i*fe.f+off[l+1]
			rs.Memberships(fe.phi[a:b], fe.dp[a:b], l, x[i*d+l])
		}
	}
	return fe, nil
}

// matrix returns H_ij = w_i κ(x_i, x_j) w_j for k(x, x') = exp(−‖φ(x) − φ(x')‖²/h).
// With Δ = φ(x_i) − φ(x_j), a_l = Σ_k ∂φ_lk/∂x_l(x_i) Δ_lk and
// b_l = Σ_k ∂φ_lk/∂x_l(x_j) Δ_lk (k over variable l's features),
//
//	κ = k [s_i·s_j + (2/h) Σ_l s_il b_l − (2/h) Σ_l s_jl a_l
//	       + (2/h) Σ_lk φ'_ilk φ'_jlk − (4/h²) Σ_l a_l b_l].
func (fe *features) matrix(score, w []float64, bw kernel.Bandwidth, ess float64) *gfksdMatrix {
	rbf := kernel.NewRBF(fe.n, fe.f)
	h := rbf.Compute(fe.phi, bw)
	t := &softTask{fe: fe, k: rbf.K, s: score, w: w, h: h, out: make([]float64, fe.n*fe.n)}
	parallel.For(fe.n, 4, t)
	return &gfksdMatrix{h: t.out, bw: h, ess: ess}
}

type softTask struct {
	fe      *features
	k, s, w []float64
	h       float64
	out     []float64
}

func (t *softTask) Do(lo, hi int) {
	fe := t.fe
	n, d, f := fe.n, fe.d, fe.f
	c1, c2 := 2/t.h, 4/(t.h*t.h)
	for i := lo; i < hi; i++ {
		pi, di, si := fe.phi[i*f:(i+1)*f], fe.dp[i*f:(i+1)*f], t.s[i*d:(i+1)*d]
		for j := 0; j <= i; j++ {
			kij := t.k[i*n+j]
			if kij == 0 {
				t.out[i*n+j], t.out[j*n+i] = 0, 0
				continue
			}
			pj, dj, sj := fe.phi[j*f:(j+1)*f], fe.dp[j*f:(j+1)*f], t.s[j*d:(j+1)*d]
			var ss, sb, sa, dd, ab float64
			for l := range d {
				var a, b float64
				for c := fe.off[l]; c < fe.off[l+1]; c++ {
					delta := pi[c] - pj[c]
					a += di[c] * delta
					b += dj[c] * delta
					dd += di[c] * dj[c]
				}
				ss += si[l] * sj[l]
				sb += si[l] * b
				sa += sj[l] * a
				ab += a * b
			}
			v := t.w[i] * kij * (ss + c1*sb - c1*sa + c1*dd - c2*ab) * t.w[j]
			t.out[i*n+j], t.out[j*n+i] = v, v
		}
	}
}
