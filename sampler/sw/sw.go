package sw

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// DefaultIters is the default number of iterations.
const DefaultIters = 200

func init() {
	sampler.Register(sampler.Method{
		Name:        "sw",
		Description: "n independent chains of Swendsen–Wang cluster updates for ferromagnetic Ising models with fields",
		NewSettings: func() sampler.Settings { return new(Settings) },
		New: func(p *sampler.Problem, s sampler.Settings) (sampler.Sampler, error) {
			return New(p, *s.(*Settings))
		},
		Iters: DefaultIters,
		Unit:  "sweep",
		Needs: "a ferromagnetic Ising model (couplings ≥ 0)",
		Memory: func(m model.Model, n int, _ sampler.Settings) float64 {
			nf, d := float64(n), float64(m.Dim())
			edges := 0.0
			if g, ok := m.(*ising.Ising); ok {
				edges = float64(len(g.Edges()))
			}
			// Per chain: spins, new cluster spins, parents, sizes and
			// cluster fields; the current states; the edges' thresholds.
			return nf*(d*(1+1+4+4+8)+256) + 8*nf*d + 16*edges
		},
	})
}

// Settings of Swendsen–Wang: there are none; the type is there for the
// registry and for settings to come.
type Settings struct{}

// Validate accepts every value.
func (*Settings) Validate() error { return nil }

// Resolved returns a copy.
func (s *Settings) Resolved() sampler.Settings { c := *s; return &c }

// bond is an edge with a positive coupling and its bonding threshold
// ⌊(1 − e^{−2J})·2^64⌋.
type bond struct {
	i, j int32
	th   uint64
}

// Sampler is the state of n chains. It is not safe for concurrent use.
type Sampler struct {
	n, d   int
	bonds  []bond
	h      []float64
	single []uint64 // ⌊σ(2h_i)·2^64⌋: the threshold of a cluster of site i alone
	chains []chain
	cur    []int
	sweeps int
	ctx    context.Context // the context of the Step in progress
	err    error           // the context's error that stopped a step
}

type chain struct {
	r        *rand.Rand
	spin     []uint8   // 0 for −1, 1 for +1
	newSpin  []uint8   // the spin drawn for each cluster, at its root
	parent   []int32   // union–find forest
	size     []int32   // cluster sizes, at the roots
	hsum     []float64 // cluster fields h_C, at the roots
	clusters int       // at the last iteration
	largest  int
}

var _ sampler.Sampler = (*Sampler)(nil)

// New starts n = p.N chains at the states p.Z; chain c draws from
// p.Key.ForIndex(rng.Sample, c). The model must be an *ising.Ising with
// every coupling ≥ 0.
func New(p *sampler.Problem, _ Settings) (*Sampler, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("sw: %w", err)
	}
	g, ok := p.Model.(*ising.Ising)
	if !ok {
		return nil, fmt.Errorf("sw needs a ferromagnetic Ising model (all couplings ≥ 0); this model (%T) is not an Ising model", p.Model)
	}
	for _, e := range g.Edges() {
		if e.Coupling < 0 {
			return nil, fmt.Errorf("sw needs a ferromagnetic Ising model (all couplings ≥ 0); variable pair (%d,%d) has coupling %v", e.I, e.J, e.Coupling)
		}
	}
	n, d := p.N, g.Dim()
	if d > math.MaxInt32 {
		return nil, fmt.Errorf("sw: %d spins; at most %d", d, math.MaxInt32)
	}
	s := &Sampler{n: n, d: d, h: g.Fields(), chains: make([]chain, n), cur: make([]int, n*d), ctx: context.Background()}
	s.single = make([]uint64, d)
	for i, h := range s.h {
		s.single[i] = spinThreshold(h)
	}
	for _, e := range g.Edges() {
		if e.Coupling > 0 {
			s.bonds = append(s.bonds, bond{i: int32(e.I), j: int32(e.J), th: probThreshold(-math.Expm1(-2 * e.Coupling))})
		}
	}
	for c := range s.chains {
		ch := &s.chains[c]
		ch.r = p.Key.ForIndex(rng.Sample, c).Rand()
		ch.spin, ch.newSpin = make([]uint8, d), make([]uint8, d)
		ch.parent, ch.size, ch.hsum = make([]int32, d), make([]int32, d), make([]float64, d)
		for i, v := range p.Z[c*d : (c+1)*d] {
			ch.spin[i] = uint8(v)
		}
	}
	return s, nil
}

// probThreshold returns ⌊p·2^64⌋ for p ∈ [0, 1], saturating at 2^64 − 1, so
// that a uniform 64-bit integer u satisfies u < threshold with probability
// p to within 2^−64.
func probThreshold(p float64) uint64 {
	if p >= 1 {
		return math.MaxUint64
	}
	if p <= 0 {
		return 0
	}
	return uint64(p * (1 << 64))
}

// spinThreshold returns the threshold of P(+1) = σ(2h) = 1/(1 + e^{−2h})
// for a cluster of field h.
func spinThreshold(h float64) uint64 { return probThreshold(1 / (1 + math.Exp(-2*h))) }

// Step runs one Swendsen–Wang update of every chain. Each chain looks at
// ctx before its update and every pollBonds bonds while it draws them;
// when ctx is canceled the chains stop, each with its update made or
// abandoned (the spins change only at its end), and Step returns
// ctx.Err(), from then on (see sampler.Sampler).
func (s *Sampler) Step(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.ctx = ctx
	parallel.For(s.n, 1, s)
	s.ctx = context.Background()
	if err := ctx.Err(); err != nil {
		s.err = err
		return err
	}
	s.sweeps++
	return nil
}

// pollBonds is the number of bonds drawn between two looks at the context.
const pollBonds = 1 << 16

// Do updates chains [lo, hi) (a parallel task).
func (s *Sampler) Do(lo, hi int) {
	for c := lo; c < hi; c++ {
		if s.ctx.Err() != nil {
			return
		}
		s.update(&s.chains[c])
	}
}

// find returns the root of i's cluster, halving the path on the way.
func find(parent []int32, i int32) int32 {
	for parent[i] != i {
		parent[i] = parent[parent[i]]
		i = parent[i]
	}
	return i
}

// update draws bonds given the spins, then a spin per cluster given the
// bonds. The draws come in a fixed order (edges, then roots by index). It
// abandons the update, spins unchanged, when the step's context is
// canceled while it draws the bonds.
func (s *Sampler) update(ch *chain) {
	for i := range ch.parent {
		ch.parent[i] = int32(i)
		ch.size[i] = 1
	}
	for lo := 0; lo < len(s.bonds); lo += pollBonds {
		if lo > 0 && s.ctx.Err() != nil {
			return
		}
		for _, b := range s.bonds[lo:min(lo+pollBonds, len(s.bonds))] {
			if ch.spin[b.i] != ch.spin[b.j] || ch.r.Uint64() >= b.th {
				continue
			}
			ri, rj := find(ch.parent, b.i), find(ch.parent, b.j)
			if ri == rj {
				continue
			}
			if ch.size[ri] < ch.size[rj] {
				ri, rj = rj, ri
			}
			ch.parent[rj] = ri
			ch.size[ri] += ch.size[rj]
		}
	}
	clear(ch.hsum)
	for i := range ch.parent {
		r := find(ch.parent, int32(i))
		ch.parent[i] = r // every site now points at its root
		ch.hsum[r] += s.h[i]
	}
	ch.clusters, ch.largest = 0, 0
	for i, p := range ch.parent {
		if p != int32(i) {
			continue
		}
		ch.clusters++
		ch.largest = max(ch.largest, int(ch.size[i]))
		th := s.single[i]
		if ch.size[i] > 1 {
			th = spinThreshold(ch.hsum[i])
		}
		if ch.r.Uint64() < th {
			ch.newSpin[i] = 1
		} else {
			ch.newSpin[i] = 0
		}
	}
	for i := range ch.spin {
		ch.spin[i] = ch.newSpin[ch.parent[i]]
	}
}

// Current returns the chains' current states.
func (s *Sampler) Current() []int {
	for c := range s.chains {
		row := s.cur[c*s.d : (c+1)*s.d]
		for i, v := range s.chains[c].spin {
			row[i] = int(v)
		}
	}
	return s.cur
}

// Sweeps returns the number of completed updates.
func (s *Sampler) Sweeps() int { return s.sweeps }

// Stats reports mean_cluster_size and largest_cluster_fraction, averaged
// over the chains at the last update (0 before any); Evaluations count one
// per site and update.
func (s *Sampler) Stats() sampler.Stats {
	var mean, largest float64
	if s.sweeps > 0 {
		for c := range s.chains {
			ch := &s.chains[c]
			mean += float64(s.d) / float64(ch.clusters)
			largest += float64(ch.largest) / float64(s.d)
		}
		mean /= float64(s.n)
		largest /= float64(s.n)
	}
	return sampler.Stats{Evaluations: int64(s.sweeps) * int64(s.n) * int64(s.d), Values: []sampler.Stat{
		{Name: "mean_cluster_size", Value: mean},
		{Name: "largest_cluster_fraction", Value: largest},
	}}
}
