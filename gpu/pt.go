package gpu

import (
	"context"
	"fmt"

	"github.com/dstein/dstein/internal/cuda"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/categorical"
	"github.com/dstein/dstein/model/rbm"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/sampler/pt"
)

func init() {
	registerPath(pt.Name, NewPT, func(p *sampler.Problem, set pt.Settings) error { return SupportsPT(p.Model, set) })
}

// SupportsPT says why parallel tempering of m with set cannot run on a
// GPU, or nil: Ising and Potts models whose Gibbs sweeps run there
// (SupportsGibbs) by the site kernel, and RBMs by the block kernel (block
// Gibbs of the tempered joint, as on the CPU), with a fixed or tuned
// ladder.
func SupportsPT(m model.Model, set pt.Settings) error {
	if err := set.Validate(); err != nil {
		return fmt.Errorf("pt: %w", err)
	}
	r := set.Resolved().(*pt.Settings)
	if r.Auto {
		return fmt.Errorf("pt on the GPU sweeps with a fixed or tuned ladder, not --auto-ladder; use --device cpu")
	}
	switch m.(type) {
	case *rbm.RBM:
		if r.Kernel != pt.Block && r.Kernel != pt.Best {
			return fmt.Errorf("pt on the GPU tempers an RBM by block Gibbs of the joint (--kernel block or best), not the %s kernel; use --device cpu", r.Kernel)
		}
		return hasHidden(pt.Name, m)
	case *categorical.Categorical:
		return fmt.Errorf("pt on the GPU tempers Ising and Potts models; independent categorical variables need no tempering (gibbs --device cuda draws them exactly every sweep)")
	}
	if err := SupportsGibbs(m, gibbs.Settings{}); err != nil {
		return fmt.Errorf("pt: %w", err)
	}
	if r.Kernel != pt.Site {
		return fmt.Errorf("pt on the GPU sweeps Ising and Potts models by the site kernel, not the %s kernel; use --device cpu", r.Kernel)
	}
	return nil
}

// NewPT starts parallel tempering on dev for p (SupportsPT): the n·K
// replicas are swept on the GPU, each at its temperature, by colour
// classes of an Ising or Potts model (see Gibbs) or by block Gibbs of an
// RBM's tempered joint; what the swaps compare (log p*, or the joint's
// L(z, h)) is computed there and copied to the host, where package pt
// swaps them, follows their round trips and tunes the ladder as on the
// CPU.
func NewPT(dev *Device, p *sampler.Problem, set pt.Settings) (*pt.Sampler, error) {
	if err := SupportsPT(p.Model, set); err != nil {
		return nil, err
	}
	return pt.NewOn(p, set, func(k int) (pt.Replicas, error) { return newReplicas(dev, p, k) })
}

// replicas are n chains' K replicas as n·K Gibbs chains on the GPU
// (replica j of chain c is chain c·K + j), with each one's inverse
// temperature and log p* in device buffers.
type replicas struct {
	g        *Gibbs
	n, k     int
	beta, ll cuda.Ptr
	sweeps   uint32
}

// newReplicas starts every replica of chain c at its state in p.Z.
func newReplicas(dev *Device, p *sampler.Problem, k int) (*replicas, error) {
	n, d := p.N, p.Model.Dim()
	z := make([]int, n*k*d)
	for c := range n {
		for j := range k {
			copy(z[(c*k+j)*d:(c*k+j+1)*d], p.Z[c*d:(c+1)*d])
		}
	}
	q := &sampler.Problem{Model: p.Model, Transform: p.Transform, N: n * k, Z: z, Key: p.Key}
	extra := 2 * 8 * uint64(n*k)
	if err := (&arena{ctx: dev.ctx}).check(GibbsMemory(p.Model, n*k, false)+extra, fmt.Sprintf("pt with %d chains of %d replicas of %d variables", n, k, d)); err != nil {
		return nil, err
	}
	g, err := NewGibbs(dev, q, gibbs.Settings{Device: sampler.CUDA})
	if err != nil {
		return nil, err
	}
	r := &replicas{g: g, n: n, k: k}
	if err := g.mem.allocAll([]buffer{{&r.beta, 8 * uint64(n*k)}, {&r.ll, 8 * uint64(n*k)}}); err != nil {
		g.Close()
		return nil, err
	}
	return r, nil
}

// Sweep sweeps every replica at its β and computes its log p*.
func (r *replicas) Sweep(ctx context.Context, beta, ll []float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g := r.g
	var err error
	if g.rbm != nil {
		err = firstErr(
			cuda.Upload(g.mem.ctx, r.beta, beta),
			g.blockSweep(r.sweeps, r.beta),
			g.joint(r.ll),
			cuda.Download(g.mem.ctx, ll, r.ll),
		)
	} else {
		grid, block := grid1(int64(g.n))
		err = firstErr(
			cuda.Upload(g.mem.ctx, r.beta, beta),
			g.colourSweep(r.sweeps, r.beta),
			g.k["energy"].Queue(grid, block, int32(g.n), int32(g.d), g.pair[0], g.pair[1], g.pair[2], g.pair[3],
				int32(g.q), int32(boolInt(g.ising)), g.states, r.ll),
			cuda.Download(g.mem.ctx, ll, r.ll),
		)
	}
	if err != nil {
		return fmt.Errorf("pt on %s: %w", g.dev, err)
	}
	r.sweeps++
	g.fresh = false
	return nil
}

// States copies replica rep[c] of each chain c into row c of dst.
func (r *replicas) States(rep []int, dst []int) error {
	all := r.g.Current()
	if err := r.g.Err(); err != nil {
		return err
	}
	d := r.g.d
	for c, j := range rep {
		copy(dst[c*d:(c+1)*d], all[(c*r.k+j)*d:(c*r.k+j+1)*d])
	}
	return nil
}

// Close frees the replicas' device memory.
func (r *replicas) Close() error { return r.g.Close() }

var _ pt.Replicas = (*replicas)(nil)
