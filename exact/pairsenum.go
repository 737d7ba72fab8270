package exact

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/model"
)

// LogProbs returns log p*(z) for every joint state z of m, in odometer order
// (the last variable fastest: state z has index Σ_i z_i·Π_{u>i} K_u), and
// log Z, so that P(z) = exp(lp[z] − logZ). It refuses more than maxStates
// joint states (DefaultMaxStates when maxStates ≤ 0), a NaN or +Inf
// log-probability and a model in which every state has probability zero,
// and stops with ctx's error when ctx is canceled. It allocates 8 bytes per
// state.
func LogProbs(ctx context.Context, m model.Model, maxStates int) (lp []float64, logZ float64, err error) {
	if maxStates <= 0 {
		maxStates = DefaultMaxStates
	}
	d := m.Dim()
	if d < 1 {
		return nil, 0, fmt.Errorf("exact: model has no variables")
	}
	n := model.StateCount(m)
	if n > maxStates {
		return nil, 0, tooLarge("exact: the model has more than %d joint states; enumeration is limited to %d", maxStates, maxStates)
	}
	k := make([]int, d)
	for i := range k {
		k[i] = len(m.States(i))
	}
	lp = make([]float64, n)
	z := make([]int, d)
	mx := math.Inf(-1)
	for idx := range lp {
		if idx&0xfff == 0 && ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		v := m.LogProb(z)
		if math.IsNaN(v) || math.IsInf(v, 1) {
			return nil, 0, fmt.Errorf("exact: model returned log-probability %v at state %v", v, z)
		}
		lp[idx] = v
		mx = max(mx, v)
		odometer(z, k)
	}
	if math.IsInf(mx, -1) {
		return nil, 0, fmt.Errorf("exact: the model gives probability zero to every state")
	}
	var s float64
	for _, v := range lp {
		s += math.Exp(v - mx)
	}
	return lp, mx + math.Log(s), nil
}

// odometer advances z to the next joint state, the last variable fastest,
// wrapping to all zeros after the last state.
func odometer(z, k []int) {
	for i := len(z) - 1; i >= 0; i-- {
		z[i]++
		if z[i] < k[i] {
			return
		}
		z[i] = 0
	}
}

// EnumeratePairs returns the exact pair marginals of m by visiting every
// joint state: P(z_i = s, z_j = t) = Σ_z P(z)·1[z_i = s]·1[z_j = t]. It
// refuses more than maxStates joint states (DefaultMaxStates when
// maxStates ≤ 0) and costs about d²/2 additions per state plus LogProbs.
func EnumeratePairs(ctx context.Context, m model.Model, maxStates int) (*Pairs, error) {
	lp, logZ, err := LogProbs(ctx, m, maxStates)
	if err != nil {
		return nil, err
	}
	p := newModelPairs(m, "enumeration")
	card := p.card
	z := make([]int, m.Dim())
	for idx, v := range lp {
		if idx&0xfff == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !math.IsInf(v, -1) {
			p.addState(z, math.Exp(v-logZ))
		}
		odometer(z, card)
	}
	return p, nil
}

// newModelPairs returns zero pair and single marginals over m's states.
func newModelPairs(m model.Model, route string) *Pairs {
	d := m.Dim()
	card := make([]int, d)
	vals := make([][]float64, d)
	for i := range d {
		card[i] = len(m.States(i))
		vals[i] = m.States(i)
	}
	p := newPairs(card, vals, route)
	for i, k := range card {
		p.marg[i] = make([]float64, k)
	}
	return p
}

// addState adds weight w to every marginal and pair entry of state z.
func (p *Pairs) addState(z []int, w float64) {
	for i, s := range z {
		p.marg[i][s] += w
		ki := p.card[i]
		o := p.row[i]
		for j := i + 1; j < p.d; j++ {
			kj := p.card[j]
			p.p[o+s*kj+z[j]] += w
			o += ki * kj
		}
	}
}

// EmpiricalPairs returns the pair marginals of n samples of m (row-major
// n×d state indices): the frequency of each (z_i = s, z_j = t). It is the
// fallback ground truth where PairsFor has no exact route: from n exact
// draws each entry has standard error sqrt(p(1−p)/n). Its route is
// "reference sample of N".
func EmpiricalPairs(m model.Model, z []int, n int) *Pairs {
	d := m.Dim()
	if n < 0 || len(z) < n*d {
		panic(fmt.Sprintf("exact: EmpiricalPairs of %d states of %d variables from %d state indices", n, d, len(z)))
	}
	p := newModelPairs(m, fmt.Sprintf("reference sample of %d", n))
	if n == 0 {
		return p
	}
	w := 1 / float64(n)
	for r := range n {
		p.addState(z[r*d:(r+1)*d], w)
	}
	return p
}
