package pt

import (
	"runtime"

	"github.com/dstein/dstein/internal/chacha8"
	"github.com/dstein/dstein/internal/parallel"
)

// The replicas of an iteration are swept in parallel, every replica of
// every chain a task of its own, where the kernel takes a fixed number
// of uniform words a sweep: block Gibbs of an RBM (m + d), the spin
// kernel's site sweeps (d) and the trackers' site sweeps (d, each turned
// into the float64 the stream's Float64 would have made: unitFloat). Each chain first draws the words of all its
// sweeps from its stream, in the order its sweeps would draw them one
// after another (level 0, 1, …, K − 1, then the pilot's shadow), so the
// draws are those of the chain-by-chain path whatever the number of
// cores; the swaps then run chain by chain. With 4 chains of 8
// temperatures that is 32 tasks an iteration instead of 4 (used when the
// chains are fewer than two per core: byReplica). The other
// kernels (Swendsen–Wang's clusters) draw from the stream as they go
// and run chain by chain.

// sweepPath chooses how an iteration's sweeps are spread over the cores;
// both ways draw the same.
type sweepPath int

const (
	// byWork sweeps replica by replica when there are fewer chains than
	// two per core and the kernel allows it, else chain by chain.
	byWork sweepPath = iota
	byChain
	byReplicaAlways
)

// byReplica says whether this iteration sweeps replica by replica. With
// many chains the chains alone keep every core busy, and drawing every
// word of an iteration first costs memory traffic (100 chains of 8
// replicas on the 10×10 grid: 640 KB), so they go chain by chain.
func (s *Sampler) byReplica() bool {
	if s.fixedDraws() == 0 || s.path == byChain {
		return false
	}
	return s.path == byReplicaAlways || s.n < 2*runtime.GOMAXPROCS(0)
}

// fixedDraws is the number of uniform words one replica's sweep takes
// when that number is fixed, else 0.
func (s *Sampler) fixedDraws() int {
	switch {
	case s.rbm != nil:
		return s.rbm.m + s.d
	case s.spin != nil && s.cluster == nil:
		return s.d
	case s.spin == nil && s.pcluster == nil:
		return s.d + s.blocks.PerSweep() // a word per site, then per block
	}
	return 0
}

// unitFloat is the float64 in [0, 1) that math/rand/v2's Rand.Float64
// makes of the word w: its low 53 bits over 2⁵³ (TestUnitFloat holds it to
// Float64).
func unitFloat(w uint64) float64 { return float64(w<<11>>11) / (1 << 53) }

// replicas is the number of replicas swept an iteration: the ladder's
// and the pilot's shadow.
func (s *Sampler) replicas() int { return s.k + s.shadow }

// prepare sizes ch's buffers for an iteration: the words of every sweep
// and each replica's scratch (an RBM's units; the site kernel's
// conditionals and, with blocks, its state's copy and block
// conditionals).
func (s *Sampler) prepare(ch *chain) {
	r, per := s.replicas(), s.fixedDraws()
	if len(ch.draws) < r*per {
		ch.draws = make([]uint64, r*per)
	}
	if s.rbm != nil && len(ch.u) < r*s.d {
		ch.u = make([]float64, r*s.d)
	}
	if ch.tr != nil && len(ch.bufs) < r {
		q := 0
		for i := range s.d {
			q = max(q, len(s.m.States(i)))
		}
		for len(ch.bufs) < r {
			ch.bufs = append(ch.bufs, make([]float64, 0, q))
		}
	}
	if ch.tr != nil && s.blocks != nil && len(ch.bb) < r {
		ch.zs = make([]int, r*s.d)
		for len(ch.bb) < r {
			ch.bb = append(ch.bb, make([]float64, 0, s.blocks.BufLen()))
		}
	}
}

// drawOne returns the words of ch's next sweep, drawn from its stream
// now (the chain-by-chain path), or nil where the kernel draws as it
// goes.
func (s *Sampler) drawOne(ch *chain) []uint64 {
	per := s.fixedDraws()
	if per == 0 {
		return nil
	}
	s.prepare(ch)
	w := ch.draws[:per]
	chacha8.Fill(ch.src, w) // ch.r.Uint64()'s numbers, in bulk
	return w
}

// stepReplicas runs one iteration's sweeps replica by replica in
// parallel, then the swaps chain by chain (see the file's comment).
func (s *Sampler) stepReplicas() {
	parallel.For(s.n, 1, &s.fills)
	r := s.replicas()
	per := float64(s.d) * 8 // a spin sweep: a few operations per neighbour
	if s.rbm != nil {
		per = 4 * float64(s.d) * float64(s.rbm.m) // two products of d × m
	}
	parallel.For(s.n*r, parallel.GrainWork(s.n*r, per), &s.reps)
	if s.ctx.Err() != nil {
		return // no swaps after a canceled sweep: Step returns the error
	}
	parallel.For(s.n, 1, &s.swaps)
}

// fillTask draws every chain's words of the iteration.
type fillTask struct{ s *Sampler }

func (t *fillTask) Do(lo, hi int) {
	s := t.s
	for c := lo; c < hi; c++ {
		ch := &s.chains[c]
		s.prepare(ch)
		w := ch.draws[:s.replicas()*s.fixedDraws()]
		chacha8.Fill(ch.src, w) // ch.r.Uint64()'s numbers, in bulk
	}
}

// replicaTask sweeps replicas [lo, hi) of the iteration: item c·R + j is
// chain c's sweep j (level j, or the shadow for j = K).
type replicaTask struct{ s *Sampler }

func (t *replicaTask) Do(lo, hi int) {
	s := t.s
	r, per := s.replicas(), s.fixedDraws()
	for it := lo; it < hi; it++ {
		c, j := it/r, it%r
		ch := &s.chains[c]
		rep, lvl := s.k, 0 // the shadow: a plain chain at β = 1
		if j < s.k {
			rep, lvl = ch.perm[j], j
		}
		if !s.sweep(ch, rep, lvl, ch.draws[j*per:(j+1)*per]) {
			return
		}
	}
}

// swapTask runs the swap phase of chains [lo, hi) and the pilot's or the
// probation's records, as the chain-by-chain path does after its sweeps.
type swapTask struct{ s *Sampler }

func (t *swapTask) Do(lo, hi int) {
	for c := lo; c < hi; c++ {
		t.s.finish(c)
	}
}
