package metrics

import (
	"context"
	"math"
	"testing"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/factorgraph"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// mixedGraph is a non-product factor graph of 2-, 3- and 2-state variables.
func mixedGraph(t testing.TB) *factorgraph.Graph {
	g, err := factorgraph.New([]int{2, 3, 2}, []factorgraph.Factor{
		{Scope: []int{0, 1}, LogTable: []float64{0.5, -0.3, 1, 0, 0.8, -1}},
		{Scope: []int{1, 2}, LogTable: []float64{0.2, 0, -0.4, 1.1, 0.3, 0.3}},
		{Scope: []int{2}, LogTable: []float64{0, 0.7}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// ExactMMD2 against E_QQ k − 2·E_QP k + E_PP k summed literally over pairs
// of rows and joint states, with k = exp(−H/d).
func TestExactMMD2BruteForce(t *testing.T) {
	g := mixedGraph(t)
	s := exactSamples(t, g, 30, 1)
	total, _, err := ExactMMD2(context.Background(), g, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	lp, logZ, _ := exact.LogProbs(context.Background(), g, 0)
	var states [][]int
	z := make([]int, 3)
	for range lp {
		states = append(states, append([]int(nil), z...))
		for i := 2; i >= 0; i-- {
			if z[i]++; z[i] < g.Cards()[i] {
				break
			}
			z[i] = 0
		}
	}
	k := func(a, b []int) float64 {
		h := 0
		for i := range a {
			if a[i] != b[i] {
				h++
			}
		}
		return math.Exp(-float64(h) / 3)
	}
	var qq, qp, pp float64
	for r := range s.N {
		for u := range s.N {
			qq += k(s.Row(r), s.Row(u))
		}
		for x, st := range states {
			qp += math.Exp(lp[x]-logZ) * k(s.Row(r), st)
		}
	}
	for x, a := range states {
		for y, b := range states {
			pp += math.Exp(lp[x]-logZ) * math.Exp(lp[y]-logZ) * k(a, b)
		}
	}
	n := float64(s.N)
	if want := qq/(n*n) - 2*qp/n + pp; math.Abs(total-want) > 1e-12 {
		t.Errorf("ExactMMD2 %.15g, brute force %.15g", total, want)
	}
}

// The orders sum to the total, each is non-negative, order 0 vanishes, and
// order 1 is FirstOrderMMD2 of the sample's and the exact marginals (on a
// 4×4 grid and on the mixed graph): the total is at least the first order.
func TestMMD2OrdersAndFirstOrder(t *testing.T) {
	for name, m := range map[string]model.Model{"4×4 grid": randomFieldGrid(t, 4, 4, 0.3, 0.3, 3), "mixed graph": mixedGraph(t)} {
		s := exactSamples(t, m, 200, 2)
		total, orders, err := ExactMMD2(context.Background(), m, s, 0)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for r, v := range orders {
			sum += v
			if v < -1e-15 {
				t.Errorf("%s: order %d part %v < 0", name, r, v)
			}
		}
		if math.Abs(sum-total) > 1e-12 || math.Abs(orders[0]) > 1e-15 {
			t.Errorf("%s: orders sum to %.15g, total %.15g; order 0 %v", name, sum, total, orders[0])
		}
		res, _ := exact.Enumerate(m, 0)
		first := FirstOrderMMD2(sampler.Marginals(m, s), res.Marginals)
		if math.Abs(first-orders[1]) > 1e-12 || total < first {
			t.Errorf("%s: FirstOrderMMD2 %.15g, order 1 %.15g, total %.15g", name, first, orders[1], total)
		}
	}
}

// For product distributions Q and P the orders have a closed form: with
// q_i = Q_i − 1/K_i, p_i = P_i − 1/K_i and α_i = c + (1−c)/K_i,
// ‖E_QΦ_A − E_PΦ_A‖² = Π_A ‖q_i‖² − 2·Π_A ⟨q_i, p_i⟩ + Π_A ‖p_i‖², so order r
// is the t^r coefficient of Π_i(α_i + (1−c)‖q_i‖²t) − 2·Π_i(α_i +
// (1−c)⟨q_i,p_i⟩t) + Π_i(α_i + (1−c)‖p_i‖²t). MMD2Dists must match it to
// 1e-12, and FirstOrderMMD2 its order 1.
func TestMMD2ProductsClosedForm(t *testing.T) {
	card := []int{2, 3, 4, 2, 3, 2}
	r := rng.NewKey(9).Rand()
	draw := func() [][]float64 {
		out := make([][]float64, len(card))
		for i, k := range card {
			out[i] = make([]float64, k)
			var s float64
			for x := range out[i] {
				out[i][x] = 0.1 + r.Float64()
				s += out[i][x]
			}
			for x := range out[i] {
				out[i][x] /= s
			}
		}
		return out
	}
	qm, pm := draw(), draw()
	joint := func(marg [][]float64) []float64 {
		out := []float64{1}
		for _, m := range marg {
			next := make([]float64, 0, len(out)*len(m))
			for _, a := range out {
				for _, b := range m {
					next = append(next, a*b)
				}
			}
			out = next
		}
		return out
	}
	total, orders := MMD2Dists(card, joint(qm), joint(pm))
	d := len(card)
	c := math.Exp(-1 / float64(d))
	poly := func(x func(i int) float64) []float64 {
		co := []float64{1}
		for i, k := range card {
			alpha := c + (1-c)/float64(k)
			next := make([]float64, len(co)+1)
			for r, v := range co {
				next[r] += v * alpha
				next[r+1] += v * (1 - c) * x(i)
			}
			co = next
		}
		return co
	}
	dot := func(a, b []float64, k int) float64 {
		var s float64
		for x := range a {
			s += (a[x] - 1/float64(k)) * (b[x] - 1/float64(k))
		}
		return s
	}
	qq := poly(func(i int) float64 { return dot(qm[i], qm[i], card[i]) })
	qp := poly(func(i int) float64 { return dot(qm[i], pm[i], card[i]) })
	pp := poly(func(i int) float64 { return dot(pm[i], pm[i], card[i]) })
	var want float64
	for r := range orders {
		w := qq[r] - 2*qp[r] + pp[r]
		want += w
		if math.Abs(orders[r]-w) > 1e-12 {
			t.Errorf("order %d: %.15g, closed form %.15g", r, orders[r], w)
		}
	}
	if math.Abs(total-want) > 1e-12 {
		t.Errorf("total %.15g, closed form %.15g", total, want)
	}
	if f := FirstOrderMMD2(qm, pm); math.Abs(f-orders[1]) > 1e-12 {
		t.Errorf("FirstOrderMMD2 %.15g, order 1 %.15g", f, orders[1])
	}
	// ±1 form: a^{d−1}·b·Σ (m_i^Q − m_i^P)².
	q2, p2 := [][]float64{{0.3, 0.7}, {0.6, 0.4}, {0.5, 0.5}}, [][]float64{{0.4, 0.6}, {0.2, 0.8}, {0.1, 0.9}}
	c3 := math.Exp(-1.0 / 3)
	a, b := (1+c3)/2, (1-c3)/2
	var dm float64
	for i := range q2 {
		x := (q2[i][1] - q2[i][0]) - (p2[i][1] - p2[i][0])
		dm += x * x
	}
	if f := FirstOrderMMD2(q2, p2); math.Abs(f-a*a*b*dm) > 1e-15 {
		t.Errorf("±1 first order %v, a²·b·Σ Δm² = %v", f, a*a*b*dm)
	}
}

// The share of MMD² in order 1 for n = 200 exact draws of a 4×4 grid (J =
// 0.3, fields uniform in (−0.3, 0.3)), over 20 samples, against the share
// of its expectation: for n i.i.d. draws E[order r] = (k_r − pp_r)/n, with
// k_r the order-r part of k(z, z) = 1 (C(d,r)·a^{d−r}·b^r for ±1) and pp_r
// that of E_PP k (MMD2Dists of P against the zero measure).
func TestFirstOrderShare(t *testing.T) {
	m := randomFieldGrid(t, 4, 4, 0.3, 0.3, 11)
	const n, reps = 200, 20
	var minShare, maxShare, sumShare, sumTotal, sumFirst float64 = 1, 0, 0, 0, 0
	for rep := range reps {
		s := exactSamples(t, m, n, uint64(100+rep))
		total, orders, err := ExactMMD2(context.Background(), m, s, 0)
		if err != nil {
			t.Fatal(err)
		}
		sh := orders[1] / total
		minShare, maxShare = min(minShare, sh), max(maxShare, sh)
		sumShare += sh
		sumTotal += total
		sumFirst += orders[1]
	}
	// Expected orders.
	lp, logZ, _ := exact.LogProbs(context.Background(), m, 0)
	p := make([]float64, len(lp))
	for k, v := range lp {
		p[k] = math.Exp(v - logZ)
	}
	card := make([]int, 16)
	for i := range card {
		card[i] = 2
	}
	_, ppOrders := MMD2Dists(card, make([]float64, len(p)), p)
	c := math.Exp(-1.0 / 16)
	a, b := (1+c)/2, (1-c)/2
	exp := make([]float64, 17)
	var expTotal float64
	binom := 1.0
	for r := range exp {
		exp[r] = (binom*math.Pow(a, float64(16-r))*math.Pow(b, float64(r)) - ppOrders[r]) / n
		expTotal += exp[r]
		binom = binom * float64(16-r) / float64(r+1)
	}
	t.Logf("first-order share over %d samples of %d: mean %.3f, range %.3f–%.3f, ratio of means %.3f; share of the expectation %.3f (order 2 %.3f, order 3 %.3f)",
		reps, n, sumShare/reps, minShare, maxShare, sumFirst/sumTotal, exp[1]/expTotal, exp[2]/expTotal, exp[3]/expTotal)
	if sumShare/reps < 0.5 || maxShare > 1 {
		t.Errorf("first-order share %v (range %v–%v)", sumShare/reps, minShare, maxShare)
	}
}
