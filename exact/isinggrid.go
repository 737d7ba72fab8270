package exact

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
)

// Why one file of about 510 lines: the transfer-matrix pass over a grid (forward, backward,
// sampling) shares one plan and its buffers.

// MaxGridSide is the largest shorter side of a grid that IsingGrid accepts:
// its transfer keeps 2^side numbers per site.
const MaxGridSide = 14

// maxTransferNats bounds how strongly the couplings and fields of one grid
// may pull, in nats, for the float64 transfer to stay exact (see
// newIsingGrid).
const maxTransferNats = 600

// IsingGrid is the exact ground truth of an Ising model on a rows×cols grid
// with open boundary: log Z, every marginal and mean, and independent exact
// samples, for grids whose shorter side is at most MaxGridSide whatever the
// longer side.
//
// It visits the sites line by line along the longer side (row by row when
// cols ≤ rows, column by column otherwise), each line across the shorter
// side, keeping as frontier the last side = min(rows, cols) sites visited (a
// broken line: the head of the current line and the tail of the previous
// one). Adding a site multiplies in its field and its couplings to its
// previous-site and previous-line neighbours, both in the frontier, and sums
// out the previous-line neighbour, which leaves the frontier; each site costs
// O(2^side). The forward messages α_t (the weight of each frontier
// configuration after site t, rescaled at every step, the scales kept in
// log Z) are all stored; a backward pass of messages β_t gives every
// marginal from α_t·β_t, and samples are drawn backwards: the last frontier
// from α_{d−1}, then each site leaving the frontier, given the frontier
// after its removal, from α_{t−1} and its coupling (forward filtering,
// backward sampling).
//
// Every coupling and field may differ. Cost: about 4·d·2^side multiplications
// to build, 8·d·2^side bytes of memory for the stored messages (25 MB at
// 14×14; proportionally more for longer grids), and d − side + 1 uniform
// draws per sample. Nothing depends on GOMAXPROCS. It is immutable after
// construction and safe for concurrent use, given one *rand.Rand per
// goroutine.
type IsingGrid struct {
	rows, cols int
	w          int   // frontier width: the shorter side
	n          int   // 2^w frontier configurations
	site       []int // site[t]: the spin visited at step t
	steps      []gridStep
	alpha      []float64 // α_t for t = 0…d−1, n entries each, each rescaled
	cdf        []float64 // cumulative α_{d−1}
	lastPos    int       // last frontier configuration of positive weight
	res        *Result
}

// gridStep holds the factors of one site t. Bit b = t mod w of the frontier
// holds, before the step, the spin s of the upper neighbour and, after it,
// the spin z of site t; bit b−1 holds the left neighbour zl (when b > 0).
type gridStep struct {
	// f[zl][z][s] = exp(h·Z + Jv·Z·S + Jh·Z·ZL − maxE), with capitals the
	// spin values and maxE = |h| + |Jv| + |Jh|, so that f ≤ 1.
	f [2][2][2]float64
	// g[z][s] = exp(Jv·Z·S − |Jv|): the part of f that depends on s, for
	// drawing s given the frontier after the step.
	g [2][2]float64
}

var _ Truth = (*IsingGrid)(nil)

// NewIsingGrid returns the exact ground truth of m, which must have been
// built by ising.Grid with open boundary (not periodic) and have a shorter
// side of at most MaxGridSide. It checks that every edge joins two grid
// neighbours, and refuses couplings and fields so strong that float64
// arithmetic could lose probability mass: 2·Σ|J| over the bonds that cross
// the frontier plus 2·(|h| + |J| + |J'|) at a site (its field and its two
// couplings to the frontier) must stay at most 600 nats, which allows a
// uniform |J| up to about 17 at 14×14 without fields.
func NewIsingGrid(m *ising.Ising) (*IsingGrid, error) {
	return isingGridContext(context.Background(), m)
}

// isingGridContext is NewIsingGrid that stops with ctx's error when ctx is
// canceled.
func isingGridContext(ctx context.Context, m *ising.Ising) (*IsingGrid, error) {
	if m == nil {
		return nil, fmt.Errorf("exact: NewIsingGrid needs a model, got nil")
	}
	rows, cols, periodic, ok := m.GridShape()
	if !ok {
		return nil, fmt.Errorf("exact: NewIsingGrid needs an Ising model built by ising.Grid on an open rows×cols grid; this model has no grid shape (use Enumerate for small models)")
	}
	if periodic {
		return nil, fmt.Errorf("exact: NewIsingGrid supports open boundaries only; the %d×%d grid is periodic (use NewIsingTorus)", rows, cols)
	}
	if rows*cols != m.Dim() {
		return nil, fmt.Errorf("exact: the model has %d spins but its grid is %d×%d", m.Dim(), rows, cols)
	}
	return newIsingGridContext(ctx, rows, cols, m.Edges(), m.Fields())
}

// newIsingGrid builds the truth from the grid shape, edges and fields
// directly, so that every edge may have its own coupling. fields may be nil
// (all zero).
func newIsingGrid(rows, cols int, edges []ising.Edge, fields []float64) (*IsingGrid, error) {
	return newIsingGridContext(context.Background(), rows, cols, edges, fields)
}

// pollEntries is the number of table entries the transfer updates between
// two looks at its context.
const pollEntries = 1 << 16

// newIsingGridContext is newIsingGrid that looks at ctx every pollEntries
// entry updates of its passes and stops with ctx's error when it is
// canceled.
func newIsingGridContext(ctx context.Context, rows, cols int, edges []ising.Edge, fields []float64) (*IsingGrid, error) {
	if rows < 1 || cols < 1 {
		return nil, fmt.Errorf("exact: Ising grid must have at least one row and one column, got %d×%d", rows, cols)
	}
	if side := min(rows, cols); side > MaxGridSide {
		return nil, tooLarge("exact: the %d×%d Ising grid has shorter side %d; exact transfer supports a shorter side of at most %d (any longer side)", rows, cols, side, MaxGridSide)
	}
	d := rows * cols
	fields, err := gridFields(rows, cols, fields)
	if err != nil {
		return nil, err
	}

	// Sweep order: along the longer side, w = the shorter side per line.
	// Step t = a·w + b visits line a, position b.
	w := min(rows, cols)
	transposed := cols > rows // lines are columns
	g := &IsingGrid{rows: rows, cols: cols, w: w, n: 1 << w, site: make([]int, d)}
	step := make([]int, d) // inverse of site
	for t := range d {
		a, b := t/w, t%w
		s := t
		if transposed {
			s = b*cols + a
		}
		g.site[t] = s
		step[s] = t
	}

	// Couplings of step t to its left (same line, b−1) and upper (previous
	// line, same b) neighbours.
	hJ := make([]float64, d)
	vJ := make([]float64, d)
	seen := make([]int8, 2*d) // 1 + edge kind, to catch duplicates
	for k, e := range edges {
		if err := checkGridEdge(k, e, rows, cols); err != nil {
			return nil, err
		}
		ri, ci, rj, cj := e.I/cols, e.I%cols, e.J/cols, e.J%cols
		if dr, dc := ri-rj, ci-cj; dr*dr+dc*dc != 1 {
			return nil, fmt.Errorf("exact: edge %d joins spins %d (%d, %d) and %d (%d, %d), which are not neighbours on the open %d×%d grid", k, e.I, ri, ci, e.J, rj, cj, rows, cols)
		}
		ti, tj := step[e.I], step[e.J]
		if ti > tj {
			ti, tj = tj, ti
		}
		slot := 2 * tj // horizontal: left neighbour
		if tj-ti == w && ti%w == tj%w {
			slot++ // vertical: upper neighbour (always so when w = 1)
		}
		if seen[slot] != 0 {
			return nil, fmt.Errorf("exact: spins %d and %d are joined by more than one edge (edge %d repeats one)", e.I, e.J, k)
		}
		seen[slot] = 1
		if slot%2 == 1 {
			vJ[tj] = e.Coupling
		} else {
			hJ[tj] = e.Coupling
		}
	}

	// Float64 safety. The backward message β_t depends on the frontier
	// only through the bonds that cross from sites ≤ t to sites > t, so its
	// entries lie within exp(2·cut) of each other, cut = Σ|J| over those
	// bonds; one step's factors lie within exp(2·maxE) of each other, maxE
	// = |h| + |Jv| + |Jh|. The input of every step is rescaled to sum 1, so
	// with 2·cut + 2·maxE ≤ 600 no β entry and no product in a step comes
	// near underflow (e^−708). Forward entries can underflow (fields inside
	// the frontier spread α without bound), but an entry below e^−700 of
	// the largest carries less than e^(2·cut − 700) ≤ e^−100 of the mass
	// however much the future favours it, so nothing that double precision
	// can see is lost.
	var maxStep, maxCut float64
	for t := range d {
		maxStep = max(maxStep, math.Abs(fields[g.site[t]])+math.Abs(vJ[t])+math.Abs(hJ[t]))
		if t+1 < d {
			cut := math.Abs(hJ[t+1])
			for u := t + 1; u <= min(t+w, d-1); u++ {
				cut += math.Abs(vJ[u])
			}
			maxCut = max(maxCut, cut)
		}
	}
	if bound := 2*maxCut + 2*maxStep; bound > maxTransferNats {
		return nil, fmt.Errorf("exact: couplings and fields of the %d×%d Ising grid are too strong for exact transfer in float64 (2·%.4g across the frontier + 2·%.4g at a site = %.4g nats > %d)", rows, cols, maxCut, maxStep, bound, maxTransferNats)
	}

	g.steps = make([]gridStep, d)
	stepMaxE := make([]float64, d)
	for t := range d {
		h, jv, jh := fields[g.site[t]], vJ[t], hJ[t]
		maxE := math.Abs(h) + math.Abs(jv) + math.Abs(jh)
		stepMaxE[t] = maxE
		st := &g.steps[t]
		for zl := range 2 {
			for z := range 2 {
				for s := range 2 {
					Z, S, ZL := model.Spin(z), model.Spin(s), model.Spin(zl)
					st.f[zl][z][s] = math.Exp(h*Z + jv*Z*S + jh*Z*ZL - maxE)
				}
			}
		}
		st.g = upperFactors(jv)
	}

	// Forward pass. Before the first site the frontier holds placeholder
	// spins fixed at state 0 (α_{−1} = δ_0) with no couplings, so the first
	// line needs no special case: summing a placeholder out adds nothing.
	// α_t is stored unnormalised, with sum S_t; the next step divides by
	// S_t as it goes (folded into its matrix), so that log Z = Σ_t
	// (maxE_t + log S_t) with every S_t the sum after a normalised input.
	n := g.n
	g.alpha = make([]float64, d*n)
	init := make([]float64, n)
	init[0] = 1
	prev, sum := init, 1.0
	var logZ float64
	work := 0
	for t := range d {
		if work += n; work >= pollEntries {
			work = 0
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		cur := g.alpha[t*n : (t+1)*n]
		sum = transferStep(cur, prev, nil, t%w, scaled(g.steps[t].f, false, 1/sum), nil)
		logZ += stepMaxE[t] + math.Log(sum)
		prev = cur
	}

	// Sampling table for the last frontier.
	last := g.alpha[(d-1)*n:]
	g.cdf = make([]float64, n)
	var acc float64
	for x, v := range last {
		acc += v
		g.cdf[x] = acc
		if v > 0 {
			g.lastPos = x
		}
	}

	// Backward pass: β_t, from which β_{t−1}[x with s] = Σ_z
	// f[zl][z][s]·β_t[x with z] (the transposed step, rescaled by the sum of
	// β_t as it goes), and the marginal of site t from α_t·β_t in the same
	// sweep.
	res := &Result{LogZ: logZ, Marginals: make([][]float64, d), Means: make([]float64, d)}
	probs := make([]float64, 2*d)
	beta := make([]float64, n)
	next := make([]float64, n)
	for x := range beta {
		beta[x] = 1
	}
	sum = float64(n)
	for t := d - 1; t >= 0; t-- {
		if work += n; work >= pollEntries {
			work = 0
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		var p [2]float64
		var dst []float64
		if t > 0 {
			dst = next
		}
		at := g.alpha[t*n : (t+1)*n]
		sum = transferStep(dst, beta, at, t%w, scaled(g.steps[t].f, true, 1/sum), &p)
		tot := p[0] + p[1]
		i := g.site[t]
		mi := probs[2*i : 2*i+2 : 2*i+2]
		mi[0], mi[1] = p[0]/tot, p[1]/tot
		res.Marginals[i] = mi
		res.Means[i] = (p[1] - p[0]) / tot
		beta, next = next, beta
	}
	g.res = res
	return g, nil
}

// checkGridEdge reports edge k of a rows×cols grid when it names a spin
// outside the grid or has a coupling that is not finite.
func checkGridEdge(k int, e ising.Edge, rows, cols int) error {
	d := rows * cols
	if e.I < 0 || e.I >= d || e.J < 0 || e.J >= d {
		return fmt.Errorf("exact: edge %d (%d, %d) names a spin outside [0, %d) of the %d×%d grid", k, e.I, e.J, d, rows, cols)
	}
	if math.IsNaN(e.Coupling) || math.IsInf(e.Coupling, 0) {
		return fmt.Errorf("exact: edge %d (%d, %d) has coupling %v; want a finite number", k, e.I, e.J, e.Coupling)
	}
	return nil
}

// upperFactors returns exp(J·z·s − |J|) for the spins z, s of a site and
// its upper neighbour joined by coupling J: the backward pass's factors,
// scaled so that the largest is 1.
func upperFactors(jv float64) [2][2]float64 {
	var f [2][2]float64
	for z := range 2 {
		for s := range 2 {
			f[z][s] = math.Exp(jv*model.Spin(z)*model.Spin(s) - math.Abs(jv))
		}
	}
	return f
}

// scaled returns the step matrices f[zl][z][s] times c, transposed to
// [zl][s][z] when transpose is set.
func scaled(f [2][2][2]float64, transpose bool, c float64) [2][2][2]float64 {
	var m [2][2][2]float64
	for zl := range 2 {
		for u := range 2 {
			for v := range 2 {
				if transpose {
					m[zl][u][v] = c * f[zl][v][u]
				} else {
					m[zl][u][v] = c * f[zl][u][v]
				}
			}
		}
	}
	return m
}

// transferStep applies one site's 2×2 matrices to bit b of the frontier:
// dst[x with bit b = u] = Σ_v m[zl][u][v]·src[x with bit b = v], with zl
// the bit b−1 of x (0 when b = 0), and returns the sum of dst. dst may be
// nil (then nothing is written and the sum is 0). When alpha is not nil it
// also adds Σ alpha[x]·src[x] over the x with bit b = s into p[s]. It is
// transferKernel without a wrap bond, writing one slice.
func transferStep(dst, src, alpha []float64, b int, m [2][2][2]float64, p *[2]float64) float64 {
	mm := [2][2][2][2]float64{m}
	return transferKernel(dst, dst, src, alpha, b, false, &mm, p)
}

// transferKernel applies one site's matrices to bit b of the frontier:
// y[x] = Σ_v m[z0][zl][u][v]·src[x with bit b = v], u the bit b of x, zl
// its bit b−1 (0 when b = 0) and z0 its bit 0 when wrap is set (b ≥ 2; 0
// otherwise, where m[1] must equal m[0]). It writes y[x] into dst0 for the x with bit b clear and into
// dst1 for those with it set (the same slice for a plain step; two count
// blocks for the magnetisation) and returns the sum of what it wrote; with
// dst0 nil it writes nothing and returns 0. When alpha is not nil it also
// adds Σ alpha[x]·src[x] over the x with bit b = s into p[s].
func transferKernel(dst0, dst1, src, alpha []float64, b int, wrap bool, m *[2][2][2][2]float64, p *[2]float64) float64 {
	n := len(src)
	bit := 1 << b
	var sum, p0, p1 float64
	if b < 2 {
		for base := 0; base < n; base += 2 * bit {
			for zl := range bit {
				i0, i1 := base+zl, base+zl+bit
				v0, v1 := src[i0], src[i1]
				if alpha != nil {
					p0 += alpha[i0] * v0
					p1 += alpha[i1] * v1
				}
				if dst0 != nil {
					mz := &m[0][zl]
					x0 := mz[0][0]*v0 + mz[0][1]*v1
					x1 := mz[1][0]*v0 + mz[1][1]*v1
					dst0[i0], dst1[i1] = x0, x1
					sum += x0 + x1
				}
			}
		}
	} else {
		// Runs of constant zl, even length, starting at even x: within a
		// run bit 0 alternates, 0 first.
		run := bit >> 1
		for base := 0; base < n; base += 2 * bit {
			for zl := range 2 {
				lo := base + zl*run
				s0 := src[lo : lo+run : lo+run]
				s1 := src[lo+bit : lo+bit+run : lo+bit+run]
				if alpha != nil {
					a0 := alpha[lo : lo+run : lo+run]
					a1 := alpha[lo+bit : lo+bit+run : lo+bit+run]
					for k, v := range s0 {
						p0 += a0[k] * v
						p1 += a1[k] * s1[k]
					}
				}
				if dst0 == nil {
					continue
				}
				a00, a01, a10, a11 := m[0][zl][0][0], m[0][zl][0][1], m[0][zl][1][0], m[0][zl][1][1]
				d0 := dst0[lo : lo+run : lo+run]
				d1 := dst1[lo+bit : lo+bit+run : lo+bit+run]
				if !wrap {
					for k, v0 := range s0 {
						v1 := s1[k]
						x0 := a00*v0 + a01*v1
						x1 := a10*v0 + a11*v1
						d0[k] = x0
						d1[k] = x1
						sum += x0 + x1
					}
					continue
				}
				c00, c01, c10, c11 := m[1][zl][0][0], m[1][zl][0][1], m[1][zl][1][0], m[1][zl][1][1]
				for k := 0; k+1 < len(s0); k += 2 {
					v0, v1 := s0[k], s1[k]
					w0, w1 := s0[k+1], s1[k+1]
					x0 := a00*v0 + a01*v1
					x1 := a10*v0 + a11*v1
					y0 := c00*w0 + c01*w1
					y1 := c10*w0 + c11*w1
					d0[k], d0[k+1] = x0, y0
					d1[k], d1[k+1] = x1, y1
					sum += (x0 + x1) + (y0 + y1)
				}
			}
		}
	}
	if p != nil {
		p[0] += p0
		p[1] += p1
	}
	return sum
}

// Result returns log Z, the marginals and the means. The caller must not
// modify it.
func (g *IsingGrid) Result() *Result { return g.res }

// Sample fills dst (length a multiple of rows·cols) with independent exact
// samples, row-major state indices (0 for −1, 1 for +1), drawing
// rows·cols − side + 1 uniforms from r per sample and nothing else.
func (g *IsingGrid) Sample(dst []int, r *rand.Rand) {
	_ = g.SampleContext(context.Background(), dst, r)
}

// SampleContext is Sample that stops with ctx's error when ctx is canceled
// (see Truth).
func (g *IsingGrid) SampleContext(ctx context.Context, dst []int, r *rand.Rand) error {
	d := g.rows * g.cols
	if len(dst)%d != 0 {
		panic(fmt.Sprintf("exact: sample buffer of length %d for dimension %d", len(dst), d))
	}
	w, n := g.w, g.n
	work := 0
	for o := 0; o < len(dst); o += d {
		if work += d; work >= pollDraws {
			work = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		out := dst[o : o+d]
		// Last frontier: first x with cdf[x] > u, which skips
		// zero-probability configurations.
		x := searchCDF(g.cdf, r.Float64(), g.lastPos)
		for t := d - w; t < d; t++ {
			out[g.site[t]] = x >> (t % w) & 1
		}
		// Going backwards, the upper neighbour of site t leaves the
		// frontier; draw it given the frontier after t.
		for t := d - 1; t >= w; t-- {
			b := t % w
			bit := 1 << b
			z := x >> b & 1
			x0 := x &^ bit
			a := g.alpha[(t-1)*n : t*n]
			gz := &g.steps[t].g[z]
			w0 := a[x0] * gz[0]
			w1 := a[x0|bit] * gz[1]
			s := 0
			if r.Float64()*(w0+w1) < w1 {
				s = 1
			}
			x = x0 | s<<b
			out[g.site[t-w]] = s
		}
	}
	return nil
}

// gridFields checks the fields of a rows×cols grid (zeros when nil): one
// finite number per spin.
func gridFields(rows, cols int, fields []float64) ([]float64, error) {
	d := rows * cols
	if fields == nil {
		return make([]float64, d), nil
	}
	if len(fields) != d {
		return nil, fmt.Errorf("exact: the %d×%d Ising grid has %d spins but %d fields", rows, cols, d, len(fields))
	}
	for i, h := range fields {
		if math.IsNaN(h) || math.IsInf(h, 0) {
			return nil, fmt.Errorf("exact: field of spin %d is %v; want a finite number", i, h)
		}
	}
	return fields, nil
}
