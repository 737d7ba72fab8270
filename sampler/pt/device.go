package pt

import (
	"math/rand/v2"

	"context"
	"fmt"
	"io"

	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// Replicas sweeps the replicas of every chain on a device (package gpu
// implements it for CUDA): parallel tempering's swaps, round trips and
// ladder stay on the host, in Step, as on the CPU.
type Replicas interface {
	// Sweep sweeps every replica once, replica j of chain c (index
	// c·K + j) at inverse temperature beta[c·K + j], by the kernel the
	// settings chose, and writes what the swaps compare into ll at the
	// same index: with the site kernel, single-site Gibbs updates of p*^β
	// and log p*; with the block kernel (RBMs), block Gibbs of the tempered
	// joint and L(z, h) (see the CPU's rbmKernel).
	Sweep(ctx context.Context, beta, ll []float64) error
	// States writes the states of replica rep[c] of each chain c into
	// row c of dst (n×d).
	States(rep []int, dst []int) error
	io.Closer
}

// onDevice is a sampler's device: its replicas and the buffers of one
// iteration.
type onDevice struct {
	reps     Replicas
	beta, ll []float64 // n·K, by replica
	top      []int     // each chain's replica at β = 1, for States
	readErr  error     // a failed read of the states
}

// NewOn starts parallel tempering whose replicas open sweeps (the site
// kernel, or the block kernel for an RBM; no automatic sizing): open is
// given the number of replicas per chain and starts n·K replicas at the chains' states p.Z (replica j of chain c
// at c·K + j). The swaps draw from chain c's stream
// p.Key.ForIndex(rng.Sample, c), as on the CPU; the sweeps' uniforms are
// the device's.
func NewOn(p *sampler.Problem, set Settings, open func(k int) (Replicas, error)) (*Sampler, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("pt: %w", err)
	}
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("pt: %w", err)
	}
	set = *set.Resolved().(*Settings)
	kern, err := set.Kernel.choose(p.Model)
	if err != nil {
		return nil, fmt.Errorf("pt: %w", err)
	}
	if set.Auto || (kern != Site && kern != Block) {
		return nil, fmt.Errorf("pt on a device sweeps by the site or block kernel with a fixed or tuned ladder")
	}
	n, k := p.N, set.Ladder
	reps, err := open(k)
	if err != nil {
		return nil, err
	}
	s := &Sampler{
		m: p.Model, n: n, d: p.Model.Dim(), k: k,
		ladder:   evenLadder(k, set.BetaMin),
		chains:   make([]chain, n),
		cur:      make([]int, n*p.Model.Dim()),
		attempts: make([]int64, k-1),
		rate:     make([]float64, k-1),
		names:    make([]string, k-1),
		ctx:      context.Background(),
		dev:      &onDevice{reps: reps, beta: make([]float64, n*k), ll: make([]float64, n*k)},
	}
	if rm, ok := p.Model.(rbmModel); ok && kern == Block {
		s.hidden = rm.Hidden()
	}
	for j := range s.names {
		s.names[j] = fmt.Sprintf("swap_%d", j+1)
	}
	if set.Tune > 0 {
		s.tune = newTuner(set.Tune, k)
	}
	for c := range s.chains {
		ch := &s.chains[c]
		ch.src = p.Key.ForIndex(rng.Sample, c).Source()
		ch.r = rand.New(ch.src)
		ch.perm, ch.ll, ch.acc, ch.trip = make([]int, k), make([]float64, k), make([]float64, k-1), make([]int8, k)
		for j := range ch.perm {
			ch.perm[j] = j
		}
	}
	s.task.s = s
	return s, nil
}

// iterate sweeps every replica at its level's β on the device, then runs
// each chain's swap phase on the host.
func (d *onDevice) iterate(ctx context.Context, s *Sampler) error {
	k := s.k
	for c := range s.chains {
		for lvl, rep := range s.chains[c].perm {
			d.beta[c*k+rep] = s.ladder[lvl]
		}
	}
	if err := d.reps.Sweep(ctx, d.beta, d.ll); err != nil {
		return err
	}
	for c := range s.chains {
		ch := &s.chains[c]
		copy(ch.ll, d.ll[c*k:(c+1)*k])
		s.swap(ch)
	}
	return nil
}

// current reads the β = 1 replicas' states from the device.
func (d *onDevice) current(s *Sampler) []int {
	if d.top == nil {
		d.top = make([]int, s.n)
	}
	for c := range s.chains {
		d.top[c] = s.chains[c].perm[0]
	}
	if err := d.reps.States(d.top, s.cur); err != nil && d.readErr == nil {
		d.readErr = err
		s.err = err
	}
	return s.cur
}

// Close frees the replicas on the device (nothing on the CPU).
func (s *Sampler) Close() error {
	if s.dev == nil {
		return nil
	}
	return s.dev.reps.Close()
}

// Err returns a failed read of the states from the device, or nil.
func (s *Sampler) Err() error {
	if s.dev == nil {
		return nil
	}
	return s.dev.readErr
}

var (
	_ io.Closer      = (*Sampler)(nil)
	_ sampler.Failer = (*Sampler)(nil)
)
