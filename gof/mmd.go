package gof

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/metrics"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/transform"
)

// DefaultSweeps is the number of Gibbs sweeps behind MMD's reference sample
// when the model has no exact sampler.
const DefaultSweeps = 1000

// MMDForModel is the MMD test of s against len(s) draws of m (Reference,
// with sweeps Gibbs sweeps where m has no exact sampler); Result.Reference
// names them. Samples in states that m gives probability zero reject at
// once (p-value 0, no draws), as in the Stein tests: a two-sample test
// would weigh such a sample like any other.
func MMDForModel(ctx context.Context, m model.Model, s *sampler.Samples, sweeps int, o Options) (*Result, error) {
	od, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := checkSamples(m, s, 2); err != nil {
		return nil, fmt.Errorf("mmd: %w", err)
	}
	if bad := sampler.Impossible(m, s); bad > 0 {
		return rejectImpossible("mmd", s.N, bad, od), nil
	}
	ref, src, err := Reference(ctx, m, s.N, sweeps, o.Key)
	if err != nil {
		return nil, err
	}
	res, err := MMD(ctx, s, ref, o)
	if res != nil {
		res.Reference = src
	}
	return res, err
}

// Reference draws n samples from m for the MMD test: exact i.i.d. draws when
// dstein has an exact sampler for m (exact.For: enumeration, the Ising
// transfers, the RBM's hidden enumeration, variable elimination), otherwise the final states of n independent
// Gibbs chains after the given number of sweeps, started from Γ of N(0, I)
// draws. Exact draws come from key.ForIndex(rng.Test, 1), the Gibbs chains
// run on the key key.ForIndex(rng.Test, 2). It also describes where the
// sample came from.
func Reference(ctx context.Context, m model.Model, n, sweeps int, key rng.Key) (*sampler.Samples, string, error) {
	if n < 1 {
		return nil, "", fmt.Errorf("reference size %d: want at least 1", n)
	}
	if truth, err := exact.For(m); err == nil {
		s := sampler.NewSamples(n, m.Dim())
		truth.Sample(s.Z, key.ForIndex(rng.Test, 1).Rand())
		return s, "exact", nil
	}
	if sweeps < 1 {
		return nil, "", fmt.Errorf("this model has no exact sampler and Gibbs sweeps is %d; want at least 1", sweeps)
	}
	t, err := transform.ForModel(transform.Normal{}, m)
	if err != nil {
		return nil, "", err
	}
	g, err := gibbs.New(sampler.NewProblem(m, t, n, sampler.Init{}, key.ForIndex(rng.Test, 2)), gibbs.Settings{})
	if err != nil {
		return nil, "", err
	}
	if out := sampler.Run(ctx, g, sampler.RunOptions{Iters: sweeps}); out.Status != sampler.Completed {
		return nil, "", out.Err
	}
	s := sampler.NewSamples(n, m.Dim())
	copy(s.Z, g.Current())
	return s, fmt.Sprintf("gibbs (%d sweeps)", sweeps), nil
}

// MMD runs the two-sample test of s against the reference sample ref with
// the kernel exp(−H(z, z')/d): the unbiased MMD² and a null from o.B random
// relabellings of the pooled samples.
func MMD(ctx context.Context, s, ref *sampler.Samples, o Options) (*Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if s == nil || ref == nil || s.N < 2 || ref.N < 2 {
		return nil, fmt.Errorf("mmd needs at least 2 samples and 2 reference samples")
	}
	if s.D != ref.D {
		return nil, fmt.Errorf("samples have %d variables, the reference %d", s.D, ref.D)
	}
	for _, x := range []struct {
		name string
		s    *sampler.Samples
	}{{"samples", s}, {"reference", ref}} {
		if len(x.s.Z) != x.s.N*x.s.D {
			return nil, fmt.Errorf("mmd: the %s hold %d states, want %d×%d", x.name, len(x.s.Z), x.s.N, x.s.D)
		}
		for i, z := range x.s.Z {
			if z < 0 {
				return nil, fmt.Errorf("mmd: %s %d, variable %d: state index %d, want 0 or more", x.name, i/x.s.D, i%x.s.D, z)
			}
		}
	}
	n, m, d := s.N, ref.N, s.D
	pool := sampler.NewSamples(n+m, d)
	copy(pool.Z, s.Z)
	copy(pool.Z[n*d:], ref.Z)
	N := n + m
	k := hammingMatrix(metrics.Pack(pool), d)
	// Row sums and the total of the off-diagonal kernel.
	rows := make([]float64, N)
	var total float64
	for i := range N {
		var r float64
		for j, v := range k[i*N : (i+1)*N] {
			if j != i {
				r += v
			}
		}
		rows[i] = r
		total += r
	}
	fn, fm := float64(n), float64(m)
	// With a the indicator of the first group: Σ_XX = aᵀK'a, Σ_XY = a·r − aᵀK'a,
	// Σ_YY = T − 2a·r + aᵀK'a (K' the kernel without its diagonal).
	stat := func(quad, ar float64) float64 {
		return quad/(fn*(fn-1)) + (total-2*ar+quad)/(fm*(fm-1)) - 2*(ar-quad)/(fn*fm)
	}
	q := newQuadBatch(k, N)
	// The observed labelling.
	a := q.v[:N]
	var ar float64
	for i := range N {
		a[i] = 0
		if i < n {
			a[i] = 1
			ar += rows[i]
		}
	}
	observed := stat(q.eval(1)[0], ar)
	r := newTestRand(o.Key)
	perm := make([]int, N)
	boot := make([]float64, 0, o.B)
	arb := make([]float64, blockRows)
	for len(boot) < o.B {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		nb := min(blockRows, o.B-len(boot))
		for b := range nb {
			v := q.v[b*N : (b+1)*N]
			clear(v)
			for i := range perm {
				perm[i] = i
			}
			// The first n entries of a partial Fisher–Yates shuffle.
			arb[b] = 0
			for i := range n {
				j := i + r.IntN(N-i)
				perm[i], perm[j] = perm[j], perm[i]
				v[perm[i]] = 1
				arb[b] += rows[perm[i]]
			}
		}
		for b, quad := range q.eval(nb) {
			boot = append(boot, stat(quad, arb[b]))
		}
	}
	p, crit, rej := decide(observed, boot, o.Alpha)
	return &Result{Test: "mmd", N: n, LevelChecked: true, Statistic: observed, PValue: p, CriticalValue: crit, Alpha: o.Alpha,
		Reject: rej, Bootstrap: o.B, BootstrapKind: "permutation", Bandwidth: float64(d)}, nil
}

// hammingMatrix returns the N×N matrix exp(−H(z_i, z_j)/d).
func hammingMatrix(p *metrics.Packed, d int) []float64 {
	N := p.N
	table := make([]float64, d+1)
	for h := range table {
		table[h] = math.Exp(-float64(h) / float64(d))
	}
	k := make([]float64, N*N)
	parallel.For(N, 16, parallel.Func(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for j := 0; j <= i; j++ {
				v := table[metrics.Hamming(p, i, p, j)]
				k[i*N+j] = v
				k[j*N+i] = v
			}
		}
	}))
	return k
}
