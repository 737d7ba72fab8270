package iid

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/memlimit"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// Name is the name of exact sampling in the sampler registry; pipelines name the method by it.
const Name = "exact"

func init() {
	sampler.Register(sampler.Method{
		Name:        Name,
		Description: "n independent exact samples (enumeration, transfer over Ising grids, hidden-unit enumeration for RBMs, variable elimination for UAI networks)",
		NewSettings: func() sampler.Settings { return new(Settings) },
		New: func(p *sampler.Problem, s sampler.Settings) (sampler.Sampler, error) {
			return New(p, *s.(*Settings))
		},
		Iters:   1,
		Unit:    "draw of all n samples",
		OneShot: true,
		Needs:   "an exact sampler (small or structured models)",
		Memory: func(m model.Model, n int, _ sampler.Settings) float64 {
			return exact.Memory(m) - memlimit.Base + 8*float64(n)*float64(m.Dim())
		},
	})
}

// Settings of exact sampling: there are none.
type Settings struct{}

// Validate accepts every value.
func (*Settings) Validate() error { return nil }

// Resolved returns a copy.
func (s *Settings) Resolved() sampler.Settings { c := *s; return &c }

// Sampler draws n exact samples in its one step. Before it, its states
// are the problem's starting states.
type Sampler struct {
	m     model.Model
	truth sampler.Truth
	key   rng.Key
	cur   []int
	err   error // the context's error that stopped the step
}

var _ sampler.Sampler = (*Sampler)(nil)

// New returns the sampler of p; it uses p.Truth, or builds an exact sampler
// of the model in its step. The samples come from p.Key.For(rng.Sample).
func New(p *sampler.Problem, _ Settings) (*Sampler, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("exact: %w", err)
	}
	return &Sampler{m: p.Model, truth: p.Truth, key: p.Key, cur: append([]int(nil), p.Z...)}, nil
}

// Step builds the exact sampler when needed and draws the n samples. It
// stops with ctx's error when ctx is canceled while it builds the exact
// sampler (package exact looks at ctx as it goes) or while it draws, when
// the exact sampler is a sampler.ContextTruth (every exact one is): some
// samples are then drawn and the others still the starting states, and
// every later Step returns the error (see sampler.Sampler).
func (s *Sampler) Step(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.truth == nil {
		t, err := exact.ForContext(ctx, s.m)
		if err != nil {
			if ctx.Err() != nil {
				s.err = ctx.Err()
			}
			return err
		}
		s.truth = t
	}
	r := s.key.For(rng.Sample).Rand()
	if ct, ok := s.truth.(sampler.ContextTruth); ok {
		if err := ct.SampleContext(ctx, s.cur, r); err != nil {
			s.err = err
			return err
		}
		return nil
	}
	s.truth.Sample(s.cur, r)
	return nil
}

// Current returns the samples (the starting states before the step).
func (s *Sampler) Current() []int { return s.cur }

// Stats has no statistics; exact sampling evaluates the model only while
// building its tables, which is not counted.
func (s *Sampler) Stats() sampler.Stats { return sampler.Stats{} }
