package exact

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
)

// GridPairs returns the exact pair marginals of an Ising model on an open
// grid with shorter side at most MaxGridSide (the models NewIsingGrid
// accepts), by the transfer of IsingGrid clamped at one site and state at a
// time.
//
// With α_t the stored forward messages and β_t the backward ones (all kept,
// 8·d·2^side bytes each), P(z at step c = u, z at step t = v) for t > c is
// P(z_c = u)·q_v/(q_0 + q_1), q_v = Σ_{x: bit of t = v} α'_t[x]·β_t[x], where
// α' is the forward pass restarted from α_{c−1} with step c's matrices
// zeroed outside z_c = u: clamping changes the forward messages after c
// only, and β_t, which depends on the sites after t, not at all. The 2(d−1)
// clamped passes (c, u) are independent and run on the worker pool; each
// costs d − c transfer steps of 2^side entries, so the whole costs about
// d²·2^side entry updates: about 20 ms for a 10×10 grid, 0.2 s for 12×12
// (one core). Results do not depend on GOMAXPROCS.
func GridPairs(ctx context.Context, m *ising.Ising, budget memlimit.Budget) (*Pairs, error) {
	if m == nil {
		return nil, fmt.Errorf("exact: GridPairs needs a model, got nil")
	}
	rows, cols, _, ok := m.GridShape()
	if ok && min(rows, cols) <= MaxGridSide {
		d := float64(m.Dim())
		if work := d * d * float64(int(1)<<min(rows, cols)); work > MaxPairsWork {
			return nil, fmt.Errorf("exact: the clamped transfer of the %d×%d grid costs %.3g entry updates, over MaxPairsWork = %.3g", rows, cols, work, float64(MaxPairsWork))
		}
		card := make([]int, m.Dim())
		for i := range card {
			card[i] = 2
		}
		if err := budget.Check(fmt.Sprintf("pair marginals of the %d×%d Ising grid", rows, cols), memlimit.Base+pairsBytes(card)+gridPairsBytes(m.Dim(), min(rows, cols))); err != nil {
			return nil, err
		}
	}
	g, err := isingGridContext(ctx, m)
	if err != nil {
		return nil, err
	}
	return g.pairs(ctx)
}

// gridPairsBytes is the memory of the clamped transfer of a grid of d sites
// and shorter side w: the forward and backward messages and two vectors per
// worker.
func gridPairsBytes(d, w int) float64 {
	n := float64(int(1) << w)
	return 8*2*float64(d)*n + 8*3*n*float64(runtime.GOMAXPROCS(0))
}

// pairs computes the pair marginals from the stored forward messages.
func (g *IsingGrid) pairs(ctx context.Context) (*Pairs, error) {
	d, n, w := len(g.site), g.n, g.w
	card := make([]int, d)
	vals := make([][]float64, d)
	for i := range card {
		card[i], vals[i] = 2, model.Spins
	}
	p := newPairs(card, vals, "ising-grid")
	for i := range d {
		p.marg[i] = append([]float64(nil), g.res.Marginals[i]...)
	}
	if d == 1 {
		return p, nil
	}
	// Backward messages, rescaled at each step as in newIsingGrid.
	beta := make([]float64, d*n)
	last := beta[(d-1)*n:]
	for x := range last {
		last[x] = 1
	}
	sum := float64(n)
	for t := d - 1; t > 0; t-- {
		sum = transferStep(beta[(t-1)*n:t*n], beta[t*n:(t+1)*n], nil, t%w, scaled(g.steps[t].f, true, 1/sum), nil)
	}
	task := &gridPairTask{g: g, p: p, beta: beta, ctx: ctx}
	task.pool.New = func() any {
		s := make([]float64, 3*n)
		return &s
	}
	parallel.For(2*(d-1), 1, task)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

// gridPairTask runs the clamped forward passes q = 2c + u: step c clamped to
// state u.
type gridPairTask struct {
	g    *IsingGrid
	p    *Pairs
	beta []float64
	ctx  context.Context
	pool sync.Pool // *[]float64: three frontier vectors
}

func (k *gridPairTask) Do(lo, hi int) {
	sp := k.pool.Get().(*[]float64)
	defer k.pool.Put(sp)
	g := k.g
	n, w, d := g.n, g.w, len(g.site)
	a, b, init := (*sp)[:n], (*sp)[n:2*n], (*sp)[2*n:3*n]
	for q := lo; q < hi; q++ {
		if k.ctx.Err() != nil {
			return
		}
		c, u := q/2, q%2
		i := g.site[c]
		pu := g.res.Marginals[i][u]
		if pu == 0 {
			continue // the tables stay zero
		}
		prev := init
		if c == 0 {
			clear(init)
			init[0] = 1
		} else {
			prev = g.alpha[(c-1)*n : c*n]
		}
		var sum float64
		for _, v := range prev {
			sum += v
		}
		f := g.steps[c].f
		for zl := range 2 {
			f[zl][1-u] = [2]float64{}
		}
		sum = transferStep(a, prev, nil, c%w, scaled(f, false, 1/sum), nil)
		for t := c + 1; t < d && sum > 0; t++ {
			sum = transferStep(b, a, nil, t%w, scaled(g.steps[t].f, false, 1/sum), nil)
			a, b = b, a
			q0, q1 := bitDot(a, k.beta[t*n:(t+1)*n], t%w)
			tot := q0 + q1
			if !(tot > 0) {
				continue
			}
			k.p.setSpinPair(i, u, g.site[t], clampProb(pu*q0/tot), clampProb(pu*q1/tot))
		}
	}
}

// bitDot returns Σ a[x]·b[x] over the x with bit bt clear and over those
// with it set.
func bitDot(a, b []float64, bt int) (q0, q1 float64) {
	b = b[:len(a)]
	bit := 1 << bt
	for x, v := range a {
		if x&bit == 0 {
			q0 += v * b[x]
		} else {
			q1 += v * b[x]
		}
	}
	return q0, q1
}

// setSpinPair sets P(z_i = u, z_j = 0) = p0 and P(z_i = u, z_j = 1) = p1
// for two-state variables i ≠ j.
func (p *Pairs) setSpinPair(i, u, j int, p0, p1 float64) {
	if i < j {
		o := p.off(i, j) + 2*u
		p.p[o], p.p[o+1] = p0, p1
		return
	}
	o := p.off(j, i) + u
	p.p[o], p.p[o+2] = p0, p1
}
