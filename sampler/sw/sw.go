package sw

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// DefaultIters is the default number of iterations.
const DefaultIters = 200

// Name is the name of Swendsen–Wang in the sampler registry; pipelines name the method by it.
const Name = "sw"

func init() {
	sampler.Register(sampler.Method{
		Name:        Name,
		Description: "n independent chains of Swendsen–Wang cluster updates for ferromagnetic Ising and Potts models with fields",
		NewSettings: func() sampler.Settings { return new(Settings) },
		New: func(p *sampler.Problem, s sampler.Settings) (sampler.Sampler, error) {
			return New(p, *s.(*Settings))
		},
		Iters: DefaultIters,
		Unit:  "sweep",
		Needs: "a ferromagnetic Ising or Potts model (couplings ≥ 0)",
		Memory: func(m model.Model, n int, _ sampler.Settings) float64 {
			nf, d := float64(n), float64(m.Dim())
			if g, ok := m.(*potts.Potts); ok {
				q := float64(g.Q())
				return nf*(d+PottsWorkBytes(d, q)+128) + 8*nf*d + PottsKernelBytes(d, q, float64(len(g.Edges())), 1)
			}
			edges := 0.0
			if g, ok := m.(*ising.Ising); ok {
				edges = float64(len(g.Edges()))
			}
			// Per chain: spins and the update's scratch space; the
			// current states; the kernel.
			return nf*(d+WorkBytes(d)+128) + 8*nf*d + KernelBytes(d, edges, 1)
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

// Sampler is the state of n chains. It is not safe for concurrent use.
type Sampler struct {
	n, d   int
	kernel updater
	chains []chain
	cur    []int
	sweeps int
	ctx    context.Context // the context of the Step in progress
	err    error           // the context's error that stopped a step
}

type chain struct {
	r    *rand.Rand
	spin []uint8 // state indices (Ising: 0 for −1, 1 for +1)
	work *Work
}

var _ sampler.Sampler = (*Sampler)(nil)

// updater is a Swendsen–Wang kernel: Kernel (Ising) or PottsKernel.
type updater interface {
	Update(ctx context.Context, z []uint8, lvl int, r *rand.Rand, w *Work) bool
	NewWork() *Work
}

// newUpdater returns the kernel of m at β = 1.
func newUpdater(m model.Model) (updater, error) {
	const need = "sw needs a ferromagnetic Ising or Potts model (all couplings ≥ 0)"
	switch g := m.(type) {
	case *ising.Ising:
		k, err := NewKernel(g.Dim(), g.Edges(), g.Fields(), 1)
		if err != nil {
			return nil, fmt.Errorf("%s; %w", need, err)
		}
		return k, nil
	case *potts.Potts:
		k, err := NewPottsKernel(g.Dim(), g.Q(), g.Edges(), g.Fields(), 1)
		if err != nil {
			return nil, fmt.Errorf("%s; %w", need, err)
		}
		return k, nil
	}
	return nil, fmt.Errorf("%s; this model, %s, is neither", need, model.Kind(m))
}

// New starts n = p.N chains at the states p.Z; chain c draws from
// p.Key.ForIndex(rng.Sample, c). The model must be an *ising.Ising or a
// *potts.Potts with every coupling ≥ 0.
func New(p *sampler.Problem, _ Settings) (*Sampler, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("sw: %w", err)
	}
	k, err := newUpdater(p.Model)
	if err != nil {
		return nil, err
	}
	n, d := p.N, p.Model.Dim()
	s := &Sampler{n: n, d: d, kernel: k, chains: make([]chain, n), cur: make([]int, n*d), ctx: context.Background()}
	for c := range s.chains {
		ch := &s.chains[c]
		ch.r = p.Key.ForIndex(rng.Sample, c).Rand()
		ch.spin, ch.work = make([]uint8, d), k.NewWork()
		for i, v := range p.Z[c*d : (c+1)*d] {
			ch.spin[i] = uint8(v)
		}
	}
	return s, nil
}

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

// Do updates chains [lo, hi) (a parallel task).
func (s *Sampler) Do(lo, hi int) {
	for c := lo; c < hi; c++ {
		if s.ctx.Err() != nil {
			return
		}
		ch := &s.chains[c]
		s.kernel.Update(s.ctx, ch.spin, 0, ch.r, ch.work)
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
			mean += float64(s.d) / float64(ch.work.Clusters)
			largest += float64(ch.work.Largest) / float64(s.d)
		}
		mean /= float64(s.n)
		largest /= float64(s.n)
	}
	return sampler.Stats{Evaluations: int64(s.sweeps) * int64(s.n) * int64(s.d), Values: []sampler.Stat{
		{Name: "mean_cluster_size", Value: mean},
		{Name: "largest_cluster_fraction", Value: largest},
	}}
}
