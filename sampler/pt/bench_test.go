package pt

import (
	"testing"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/samplertest"
	"github.com/dstein/dstein/transform"
)

// One iteration (K = 8 sweeps and a swap phase) of 100 chains; the first
// 50 iterations adapt the ladder.
func BenchmarkIteration(b *testing.B) {
	samplertest.BenchSteps(b, func(m model.Model, t *transform.Transform) (sampler.Sampler, error) {
		return New(sampler.NewProblem(m, t, 100, sampler.Init{}, rng.NewKey(1)), Settings{})
	})
}

// One iteration of 100 chains with Kernel Best: the kit's RBM swept by
// block Gibbs of both layers (BenchmarkIterationBlock before the kernels
// had names), the Ising grid by Swendsen–Wang updates.
func BenchmarkIterationBest(b *testing.B) {
	samplertest.BenchSteps(b, func(m model.Model, t *transform.Transform) (sampler.Sampler, error) {
		return New(sampler.NewProblem(m, t, 100, sampler.Init{}, rng.NewKey(1)), Settings{Kernel: Best})
	})
}

// One pilot iteration of Auto (K = 8 sweeps, the shadow's sweep, a swap
// phase and the pilot's statistics) of 100 chains: the pilot lasts 200 to
// 800 iterations; with a tune of 5000 every timed iteration is one.
func BenchmarkIterationAutoPilot(b *testing.B) {
	samplertest.BenchSteps(b, func(m model.Model, t *transform.Transform) (sampler.Sampler, error) {
		return New(sampler.NewProblem(m, t, 100, sampler.Init{}, rng.NewKey(1)), Settings{Auto: true, Tune: 5000})
	})
}

// One iteration of 4 chains × 8 temperatures (the default's shape): block
// Gibbs on the kit's RBM, site sweeps on the grid; the replicas' 32 sweeps
// run in parallel (replicas.go), so this is the benchmark of issue 30's
// "4 chains on 16 cores".
func BenchmarkIterationFourChains(b *testing.B) {
	samplertest.BenchSteps(b, func(m model.Model, t *transform.Transform) (sampler.Sampler, error) {
		return New(sampler.NewProblem(m, t, 4, sampler.Init{}, rng.NewKey(1)), Settings{Kernel: fourChainsKernel(m)})
	})
}

// The same round with each way of spreading the sweeps forced: chain by
// chain, or replica by replica (which BenchmarkIterationFourChains takes
// when the chains are fewer than two per core); on one core the
// difference is the replica path's cost (drawing every word of the round
// first), on many its gain.
func BenchmarkIterationFourChainsPaths(b *testing.B) {
	for _, p := range []struct {
		name string
		path sweepPath
	}{{"by-chain", byChain}, {"by-replica", byReplicaAlways}} {
		b.Run(p.name, func(b *testing.B) {
			samplertest.BenchSteps(b, func(m model.Model, t *transform.Transform) (sampler.Sampler, error) {
				s, err := New(sampler.NewProblem(m, t, 4, sampler.Init{}, rng.NewKey(1)), Settings{Kernel: fourChainsKernel(m)})
				if err == nil {
					s.path = p.path
				}
				return s, err
			})
		})
	}
}

// fourChainsKernel is block Gibbs for the RBM, site sweeps otherwise.
func fourChainsKernel(m model.Model) Kernel {
	if _, ok := m.(rbmModel); ok {
		return Block
	}
	return Site
}
