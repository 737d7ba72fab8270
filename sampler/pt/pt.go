package pt

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/sampler/gibbs"
	"github.com/dstein/dstein/sampler/sw"
)

// Why one file of about 760 lines: the ladder, the chains, the swaps (non-reversible) and
// the adaptation of parallel tempering share the replica state; auto.go holds the ladder's
// sizing.

// Defaults of the settings.
const (
	// DefaultLadder is K when Settings.Ladder is 0. With the
	// non-reversible scheme the round-trip rate is 1/(2 + 2Σ_k r_k/(1−r_k))
	// (Syed et al.), within a factor of about 1.5 of its limit 1/(2 + 2Λ)
	// once K − 1 ≥ 2Λ; the small and moderate models of dstein have
	// barriers Λ of 1 to 3, and every replica costs one sweep per
	// iteration, so 8 replicas balance communication and cost.
	DefaultLadder = 8
	// DefaultTune is the number of tuning iterations when Settings.Tune is
	// 0: a quarter of the default run.
	DefaultTune = 50
	// DefaultIters is the default number of iterations.
	DefaultIters = 200
)

// Name is the name of parallel tempering in the sampler registry; pipelines name the method by it.
const Name = "pt"

func init() {
	sampler.Register(sampler.Method{
		Name:        Name,
		Description: "n chains of parallel tempering: K tempered replicas each, single-site Gibbs sweeps (block Gibbs for RBMs, Swendsen–Wang for ferromagnetic Ising models: kernel), non-reversible even/odd swaps, ladder tuned to equal swap rates",
		NewSettings: func() sampler.Settings { return new(Settings) },
		New: func(p *sampler.Problem, s sampler.Settings) (sampler.Sampler, error) {
			return New(p, *s.(*Settings))
		},
		Iters:    DefaultIters,
		Unit:     "round of K sweeps and a swap phase",
		Memory:   memory,
		Warnings: warnings,
	})
}

// warnings flags a ladder too short for the measured communication
// barrier Λ: with K temperatures the swaps are frequent (and the round
// trips near their best rate) once K − 1 ≥ 2Λ (Syed et al.); the warning
// fires below 1.5Λ, because Λ's estimate grows a little as the ladder
// refines.
func warnings(st sampler.Stats, _ int) []string {
	lambda, ok := st.Value("barrier")
	if !ok {
		return nil
	}
	k := 1
	for _, v := range st.Values {
		if strings.HasPrefix(v.Name, "swap_") && v.Name != "swap_rate" {
			k++
		}
	}
	if t, ok := st.Value("temperatures"); ok {
		if t == 1 {
			return nil // plain chains chosen by the sizing: no ladder to cross
		}
		k = int(t)
	}
	if float64(k-1) >= 1.5*lambda {
		return nil
	}
	rate, _ := st.Value("swap_rate")
	need := int(math.Ceil(2*lambda)) + 1
	return []string{fmt.Sprintf("pt: the measured barrier Λ = %.2g needs about 2Λ + 1 = %d temperatures; with %d the mean swap rate is %.2f and the replicas cross the ladder slowly (--ladder %d)", lambda, need, k, rate, need)}
}

// Settings configure parallel tempering. The zero value is valid.
type Settings struct {
	// Ladder is K, the number of temperatures per chain, at least 2
	// (default 8, DefaultLadder).
	Ladder int `json:"ladder" flag:"ladder,positive" help:"number of inverse temperatures in the ladder: replicas per chain (at least 2)"`
	// BetaMin is the smallest inverse temperature β_min in [0, 1)
	// (default 0: the hottest replica samples the uniform distribution on
	// the support, which a sweep explores freely).
	BetaMin float64 `json:"beta_min" flag:"beta-min" help:"smallest inverse temperature β_min, in [0, 1); 0 is the uniform distribution on the support"`
	// Tune is the number of iterations during which the ladder is adapted
	// (default 50, DefaultTune; −1: none, the ladder stays evenly spaced in
	// β). The adaptation needs at least 2 iterations to see every pair.
	Tune int `json:"tune" flag:"tune" help:"iterations during which the ladder is adapted to equal swap rates (default 50, 200 with --auto-ladder; -1: none, evenly spaced)"`
	// Kernel is the move that updates each replica between swap phases
	// (default Site; see Kernel and the package documentation). Site is
	// left out of the JSON, so that settings recorded before the kernels
	// had names (journals of published runs) still match.
	Kernel Kernel `json:"kernel,omitempty" flag:"kernel" help:"the move inside each temperature: site (single-site Gibbs sweeps of p*^β, any model), block (RBMs: block Gibbs of visible and hidden units on the tempered joint), cluster (ferromagnetic Ising and Potts models: a Swendsen–Wang update of p*^β) or best (block for RBMs, cluster for ferromagnetic Ising and Potts models, else site)"`
	// Auto sizes the ladder from the target at the end of tuning (see the
	// package documentation): Ladder temperatures and a plain chain at
	// β = 1 run as a pilot for Tune iterations (default 200 with Auto,
	// DefaultAutoTune), then the chains go on as plain chains (K = 1)
	// when those mix faster per sweep than tempering would, else with
	// K = ⌈2Λ⌉ + 1 temperatures for the measured barrier Λ, grown again
	// (up to twice, to at most MaxLadder) while K − 1 < 1.5Λ. false (the
	// default) keeps Ladder temperatures.
	Auto bool `json:"auto" flag:"auto-ladder" help:"size the ladder from the target after a pilot of --tune iterations: plain chains when they mix faster per sweep than tempering, else ⌈2Λ⌉+1 temperatures for the measured barrier Λ (--ladder is the pilot's size)"`
	// Device is where the replicas are swept: the CPU (the default) or an
	// NVIDIA GPU (package gpu: Ising and Potts models with the site
	// kernel, by colour classes; the swaps and the ladder stay on the
	// host). See device.go.
	Device sampler.Device `json:"device,omitempty" flag:"device" help:"where the replicas are swept: cpu, or cuda (an NVIDIA GPU; Ising and Potts models, kernel site; see dstein gpu)"`
}

// OnDevice returns the device the settings choose.
func (s *Settings) OnDevice() sampler.Device { return s.Device }

// Kernel selects the move that updates each replica between swaps.
type Kernel int

const (
	// Site sweeps every variable in order by its conditional under p*^β
	// (any model; the default).
	Site Kernel = iota
	// Block draws an RBM's hidden units given the visible ones, then the
	// visible ones given the hidden ones, on the tempered joint
	// distribution of both (RBMs only).
	Block
	// Cluster makes a Swendsen–Wang update of p*^β (ferromagnetic Ising
	// and Potts models only: every coupling ≥ 0).
	Cluster
	// Best chooses per model: Block for RBMs, Cluster for ferromagnetic
	// Ising and Potts models, else Site.
	Best
)

// String returns "site", "block", "cluster" or "best".
func (k Kernel) String() string {
	switch k {
	case Block:
		return "block"
	case Cluster:
		return "cluster"
	case Best:
		return "best"
	}
	return "site"
}

// MarshalText implements encoding.TextMarshaler.
func (k Kernel) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText parses "site", "block", "cluster" or "best".
func (k *Kernel) UnmarshalText(b []byte) error {
	switch string(b) {
	case "site":
		*k = Site
	case "block":
		*k = Block
	case "cluster":
		*k = Cluster
	case "best":
		*k = Best
	default:
		return fmt.Errorf("unknown kernel %q: want site, block, cluster or best", b)
	}
	return nil
}

// ferromagnetic reports whether every coupling of the spin graph is ≥ 0,
// or names the first that is not.
func ferromagnetic(g *gibbs.SpinGraph) error {
	for i := range len(g.Start) - 1 {
		for e := g.Start[i]; e < g.Start[i+1]; e++ {
			if !(g.Cpl[e] >= 0) {
				return fmt.Errorf("variable pair (%d,%d) has coupling %v", i, g.Nbr[e], g.Cpl[e])
			}
		}
	}
	return nil
}

// choose returns the kernel that New uses for model m: Best resolved, and
// an error when an explicit Block or Cluster does not apply to m.
func (k Kernel) choose(m model.Model) (Kernel, error) {
	_, rbm := m.(rbmModel)
	switch {
	case k == Site:
		return Site, nil
	case k == Block && !rbm:
		return k, fmt.Errorf("kernel block needs an RBM; the model is %s (kernel best chooses per model)", model.Kind(m))
	case k == Block || (k == Best && rbm):
		return Block, nil
	}
	// Cluster, or Best for a model that is not an RBM: the couplings'
	// signs decide.
	var ferro error = fmt.Errorf("the model, %s, is neither a pairwise ±1 model nor a Potts model", model.Kind(m))
	if pm, ok := m.(*potts.Potts); ok {
		ferro = nil
		for _, e := range pm.Edges() {
			if !(e.Coupling >= 0) {
				ferro = fmt.Errorf("variable pair (%d,%d) has coupling %v", e.I, e.J, e.Coupling)
				break
			}
		}
	} else if sm, ok := m.(gibbs.SpinModel); ok {
		g := gibbs.NewSpinGraph(sm)
		ferro = ferromagnetic(&g)
	}
	switch {
	case ferro == nil:
		return Cluster, nil
	case k == Cluster:
		return k, fmt.Errorf("kernel cluster needs a ferromagnetic Ising or Potts model (every coupling ≥ 0); %v (kernel best chooses per model)", ferro)
	}
	return Site, nil
}

// Validate reports a bad number of replicas, β_min, tuning length or
// kernel.
func (s *Settings) Validate() error {
	switch {
	case s.Kernel < Site || s.Kernel > Best:
		return fmt.Errorf("unknown kernel %d", int(s.Kernel))
	case s.Ladder < 0 || s.Ladder == 1:
		return fmt.Errorf("ladder is %d; want at least 2 (left out: %d)", s.Ladder, DefaultLadder)
	case math.IsNaN(s.BetaMin) || s.BetaMin < 0 || s.BetaMin >= 1:
		return fmt.Errorf("beta_min is %v; want a number in [0, 1)", s.BetaMin)
	case s.Tune < -1:
		return fmt.Errorf("tune is %d; want a number of iterations, 0 for %d or -1 for none", s.Tune, DefaultTune)
	case s.Auto && s.Tune == -1:
		return fmt.Errorf("auto sizes the ladder at the end of tuning; tune is -1 (none): want a number of iterations (left out: %d)", DefaultAutoTune)
	case s.Auto && s.Tune > 0 && s.Tune < 8:
		return fmt.Errorf("tune is %d; auto needs a pilot of at least 8 iterations (0 for %d)", s.Tune, DefaultAutoTune)
	case s.Device != sampler.CPU && s.Device != sampler.CUDA:
		return fmt.Errorf("unknown device %d", int(s.Device))
	case s.Device != sampler.CPU && (s.Auto || s.Kernel == Cluster):
		var asked []string
		if s.Kernel == Cluster {
			asked = append(asked, "kernel "+s.Kernel.String())
		}
		if s.Auto {
			asked = append(asked, "--auto-ladder")
		}
		why := ""
		if s.Auto {
			why = " (the default preset does)"
		}
		return fmt.Errorf("pt on the GPU has the site kernel (Ising and Potts models) and the block kernel (RBMs) with a fixed or tuned ladder only, and these settings ask for %s%s: give --method pt (--kernel site or block, without --auto-ladder), or --device cpu", strings.Join(asked, " and "), why)
	}
	return nil
}

// Resolved returns a copy with the defaults filled in.
func (s *Settings) Resolved() sampler.Settings {
	c := *s
	if c.Ladder == 0 {
		c.Ladder = DefaultLadder
	}
	if c.Tune == 0 {
		c.Tune = DefaultTune
		if c.Auto {
			c.Tune = DefaultAutoTune
		}
	}
	return &c
}

func memory(m model.Model, n int, s sampler.Settings) float64 {
	set := Settings{}
	if s != nil {
		set = *s.(*Settings)
	}
	set = *set.Resolved().(*Settings)
	nf, d, k := float64(n), float64(m.Dim()), float64(set.Ladder)
	if set.Auto {
		// The pilot's plain chain, and the largest ladder the sizing
		// may choose.
		k = float64(max(set.Ladder, MaxLadder) + 1)
	}
	perChain := 256 + 48*k // stream, ladder position, log p*, swap sums
	if set.Auto {
		// The pilot's series, a state per chain, the per-variable sums
		// of both sides; during the probation its own, and the pilot's
		// tempered sums kept to compare with.
		perChain += 56*d + 32*autoPilots*float64(set.Tune)
	}
	if rm, ok := m.(rbmModel); ok && (set.Kernel == Block || set.Kernel == Best) {
		// Visible, hidden and preactivations per replica, a scratch
		// row per chain, both layouts of W.
		// The uniform words of a sweep (prepare: a word per unit) and
		// the visible conditionals, per replica.
		h := float64(rm.Hidden())
		return 8*nf*d + nf*(8*k*(d+2*h+6)+8*k*(h+2*d)+8*d+perChain) + rbmKernelBytes(d, h)
	}
	if sm, ok := m.(model.SpinShape); ok {
		// One byte per spin and replica; the spin graph and tables of up
		// to 2^maxTableDegree thresholds per site and level.
		b := 8*nf*d + nf*(k*d+perChain) + gibbs.SpinKernelBytes(sm, maxTableDegree, k)
		if set.Kernel != Cluster {
			// The uniform words of a sweep, a word per site and
			// replica (prepare; 8·K·d bytes a chain, most of a spin
			// chain's memory: 83 MB of 13,000 chains on the 10×10
			// grid, which the estimate once left out).
			b += 8 * nf * k * d
		}
		if set.Kernel == Cluster || set.Kernel == Best {
			// The Swendsen–Wang kernel's thresholds, a chain's scratch.
			b += sw.KernelBytes(d, float64(sm.SpinEdges()), k) + nf*sw.WorkBytes(d)
		}
		return b
	}
	// A tracker per replica (states and local fields), the current states.
	b := 8*nf*d + nf*(k*(24*d+128)+perChain)
	perSweep := 0.0
	if bl := gibbs.NewBlocks(m); bl != nil {
		// Each replica's state copied for the block updates, a block's
		// conditional and a word per block a sweep.
		b += nf * k * (8*d + 8*float64(bl.BufLen()+bl.PerSweep()))
		perSweep = float64(bl.PerSweep())
	}
	if _, ok := m.(*potts.Potts); !ok || set.Kernel != Cluster {
		// The uniform words of a sweep, per replica (prepare), and a
		// conditional's buffer of up to the most states.
		q := 0
		for i := range m.Dim() {
			q = max(q, len(m.States(i)))
		}
		b += nf * k * (8*(d+perSweep) + 8*float64(q) + 24)
	}
	if pm, ok := m.(*potts.Potts); ok && (set.Kernel == Cluster || set.Kernel == Best) {
		// The Swendsen–Wang kernel's thresholds, a chain's scratch and
		// its states as bytes and ints.
		q := float64(pm.Q())
		b += sw.PottsKernelBytes(d, q, float64(len(pm.Edges())), k) + nf*(sw.PottsWorkBytes(d, q)+9*d)
	}
	return b
}

// Sampler is the state of n chains of K replicas. It is not safe for
// concurrent use.
type Sampler struct {
	m        model.Model
	spin     *spinKernel
	rbm      *rbmKernel
	cluster  *sw.Kernel      // Cluster: Swendsen–Wang updates of the spins
	pcluster *sw.PottsKernel // Cluster on a Potts model: updates of the trackers' states
	edges    []ising.Edge    // and the edges it was built from
	n, d     int
	k        int
	ladder   []float64     // β_0 = 1 > β_1 > … > β_{K−1} = β_min
	blocks   *gibbs.Blocks // the site kernel's joint updates after each sweep, or nil
	chains   []chain
	cur      []int
	task     iterTask

	iter     int // completed iterations
	tune     *tuner
	attempts []int64   // swap proposals per chain and pair since the ladder last changed
	rate     []float64 // last estimate of each pair's acceptance rate
	evals    int64
	names    []string        // swap_1 … swap_{K−1}
	ctx      context.Context // the context of the Step in progress
	err      error           // the context's error that stopped a step

	// Settings.Auto: the pilot's shadow replica (replica index k of every
	// chain, a plain chain at β = 1) while shadow is 1, its measurements,
	// the sizing's estimates and the tuning windows.
	auto          bool
	shadow        int
	pilot         *pilot
	plain, ptCost float64   // sweeps per effective draw: plain chains, tempering
	lambda        float64   // the barrier measured when the ladder was last sized
	probe         *pilot    // the plain chains' probation
	probeEnd      int       // the iteration that ends it
	fallback      []float64 // the ladder for chains that fail it
	late          []float64 // the same ladder once they passed it (Escalate)
	ref           side      // the pilot's tempered means, for the probation
	refTau        float64
	regrows       int
	tuneLen       int
	spinModel     gibbs.SpinModel

	// dev, when not nil, sweeps the replicas on a device (device.go).
	dev *onDevice
	// hidden is the RBM's hidden units under block Gibbs (counted in the
	// evaluations), else 0.
	hidden int
	// The replicas' sweeps in parallel (replicas.go); path (tests)
	// forces one way of sweeping.
	reps  replicaTask
	swaps swapTask
	fills fillTask
	path  sweepPath
}

type chain struct {
	r     *rand.Rand
	src   *rand.ChaCha8   // r's source, for the sweeps' words in bulk (chacha8.Fill)
	perm  []int           // perm[k]: the replica at level k
	ll    []float64       // log p* of each replica
	acc   []float64       // Σ acceptance probabilities of each pair since the ladder changed
	trip  []int8          // per replica: 0 start, 1 went to β_min, 2 then reached β = 1
	trips int64           // completed round trips since the ladder was fixed
	spins []uint8         // spin kernel: K×d spins, replica by replica
	reps  []rbmReplica    // RBM kernel: each replica's units
	u     []float64       // RBM kernel: scratch, d per replica
	draws []uint64        // the fixed-draw kernels' uniform words (see fixedDraws)
	tr    []model.Tracker // otherwise: one tracker per replica
	bufs  [][]float64     // the trackers' sweeps: each replica's conditionals
	work  *sw.Work        // Cluster: the update's scratch
	zb    []uint8         // Cluster on a Potts model: a replica's states as bytes
	zi    []int           // and back
	zs    []int           // site kernel with blocks: each replica's state, copied for the block updates
	bb    [][]float64     // and each replica's block conditional
	big   float64         // Cluster: the largest cluster's share of d in the last β = 1 update
}

var _ sampler.Sampler = (*Sampler)(nil)

// New starts n = p.N chains with all K replicas at the chain's state in
// p.Z; chain c draws from p.Key.ForIndex(rng.Sample, c).
func New(p *sampler.Problem, set Settings) (*Sampler, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("pt: %w", err)
	}
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("pt: %w", err)
	}
	set = *set.Resolved().(*Settings)
	m, n, d, k := p.Model, p.N, p.Model.Dim(), set.Ladder
	kern, err := set.Kernel.choose(m)
	if err != nil {
		return nil, fmt.Errorf("pt: %w", err)
	}
	s := &Sampler{
		m: m, n: n, d: d, k: k,
		ladder:   evenLadder(k, set.BetaMin),
		chains:   make([]chain, n),
		cur:      make([]int, n*d),
		attempts: make([]int64, k-1),
		rate:     make([]float64, k-1),
		names:    make([]string, k-1),
		ctx:      context.Background(),
	}
	for j := range s.names {
		s.names[j] = "swap_" + strconv.Itoa(j+1)
	}
	if set.Tune > 0 {
		s.tune = newTuner(set.Tune, k)
	}
	if set.Auto {
		s.auto, s.shadow, s.tuneLen = true, 1, set.Tune
		s.pilot = newPilot(n, d, autoPilots*set.Tune)
		s.pilot.m = m
	}
	reps := k + s.shadow
	if rm, ok := m.(rbmModel); ok && kern == Block {
		s.rbm, s.hidden = newRBMKernel(rm), rm.Hidden()
	} else if sm, ok := m.(gibbs.SpinModel); ok {
		s.spin, s.spinModel = newSpinKernel(sm, k), sm
		if kern == Cluster {
			s.edges = spinEdges(&s.spin.SpinGraph)
			if s.cluster, err = sw.NewKernel(d, s.edges, s.spin.H, k); err != nil {
				return nil, fmt.Errorf("pt: %w", err)
			}
		}
		s.fillKernels()
	} else if pm, ok := m.(*potts.Potts); ok && kern == Cluster {
		if s.pcluster, err = sw.NewPottsKernel(d, pm.Q(), pm.Edges(), pm.Fields(), k); err != nil {
			return nil, fmt.Errorf("pt: %w", err)
		}
		s.fillKernels()
	}
	if s.rbm == nil && s.spin == nil && s.pcluster == nil {
		s.blocks = gibbs.NewBlocks(m)
	}
	for c := range s.chains {
		ch := &s.chains[c]
		ch.src = p.Key.ForIndex(rng.Sample, c).Source()
		ch.r = rand.New(ch.src)
		ch.perm, ch.ll, ch.acc = make([]int, k), make([]float64, reps), make([]float64, k-1)
		ch.trip = make([]int8, reps)
		zc := p.Z[c*d : (c+1)*d]
		switch {
		case s.rbm != nil:
			ch.reps = make([]rbmReplica, reps)
		case s.spin != nil:
			ch.spins = make([]uint8, reps*d)
			if s.cluster != nil {
				ch.work = s.cluster.NewWork()
			}
		default:
			ch.tr = make([]model.Tracker, reps)
			if s.pcluster != nil {
				ch.work, ch.zb, ch.zi = s.pcluster.NewWork(), make([]uint8, d), make([]int, d)
			}
		}
		for j := range reps {
			if j < k {
				ch.perm[j] = j
			}
			if s.rbm != nil {
				ch.reps[j] = s.rbm.newReplica(zc)
				continue
			}
			if s.spin != nil {
				for i, v := range zc {
					ch.spins[j*d+i] = uint8(v)
				}
			} else {
				ch.tr[j] = model.NewTracker(m, zc)
			}
		}
	}
	if s.fixedDraws() > 0 {
		for c := range s.chains {
			s.prepare(&s.chains[c])
		}
	}
	s.task.s, s.reps.s, s.swaps.s, s.fills.s = s, s, s, s
	return s, nil
}

// spinEdges lists the edges of the spin graph, each once (i < j), in the
// order of the graph.
func spinEdges(g *gibbs.SpinGraph) []ising.Edge {
	var edges []ising.Edge
	for i := range len(g.Start) - 1 {
		for e := g.Start[i]; e < g.Start[i+1]; e++ {
			if j := g.Nbr[e]; j > i {
				edges = append(edges, ising.Edge{I: i, J: j, Coupling: g.Cpl[e]})
			}
		}
	}
	return edges
}

// fillKernels recomputes the spin and cluster kernels' thresholds for the
// current ladder.
func (s *Sampler) fillKernels() {
	if s.spin != nil {
		s.spin.fill(s.ladder)
	}
	if s.cluster != nil {
		s.cluster.Fill(s.ladder)
	}
	if s.pcluster != nil {
		s.pcluster.Fill(s.ladder)
	}
}

// Ladder returns the current inverse temperatures, β_0 = 1 first. The
// slice belongs to the sampler.
func (s *Sampler) Ladder() []float64 { return s.ladder }

// Iterations returns the number of completed iterations.
func (s *Sampler) Iterations() int { return s.iter }

// Tuning reports whether the ladder is still being adapted (or, with
// Auto, sized: during the pilot and the plain chains' probation).
func (s *Sampler) Tuning() bool {
	return s.pilot != nil || s.probe != nil || (s.tune != nil && s.iter < s.tune.end)
}

type iterTask struct{ s *Sampler }

// pollSites is the number of site updates between two looks at the
// context within one replica's sweep.
const pollSites = 1 << 12

// Do runs one iteration of chains [lo, hi): a sweep of every replica, then
// the swap phase of the iteration's parity. It looks at the step's context
// before each chain and each replica's sweep (and, in a sweep through
// trackers, every pollSites sites), and stops there when it is canceled:
// a replica stopped inside its sweep keeps a valid state (its log p*,
// which only a swap would use, is then stale).
func (t *iterTask) Do(lo, hi int) {
	s := t.s
	for c := lo; c < hi; c++ {
		ch := &s.chains[c]
		for lvl, rep := range ch.perm {
			if !s.sweep(ch, rep, lvl, s.drawOne(ch)) {
				return
			}
		}
		if s.shadow == 1 && !s.sweep(ch, s.k, 0, s.drawOne(ch)) { // the pilot's plain chain
			return
		}
		s.finish(c)
	}
}

// finish runs chain c's swap phase after its sweeps, then the pilot's or
// the probation's records.
func (s *Sampler) finish(c int) {
	s.swap(&s.chains[c])
	if s.pilot != nil {
		s.record(c)
	} else if s.probe != nil {
		s.recordProbe(c)
	}
}

// sweep sweeps replica rep of ch at level lvl of the ladder and reports
// false when the step's context was canceled before or during it. The
// kernels that take a fixed number of uniforms a sweep (fixedDraws) take
// them from draws; the others draw from the chain's stream.
func (s *Sampler) sweep(ch *chain, rep, lvl int, draws []uint64) bool {
	if s.ctx.Err() != nil {
		return false
	}
	beta := s.ladder[lvl]
	if s.rbm != nil {
		ch.ll[rep] = s.rbm.sweep(&ch.reps[rep], beta, ch.u[rep*s.d:(rep+1)*s.d], draws)
		return true
	}
	if s.spin != nil {
		b := ch.spins[rep*s.d : (rep+1)*s.d]
		if s.cluster == nil {
			s.spin.sweep(b, lvl, draws)
		} else if !s.cluster.Update(s.ctx, b, lvl, ch.r, ch.work) {
			return false
		} else if lvl == 0 && rep != s.k {
			ch.big = float64(ch.work.Largest) / float64(s.d)
		}
		ch.ll[rep] = s.spin.logProb(b)
		return true
	}
	tr := ch.tr[rep]
	if s.pcluster != nil {
		for i, v := range tr.State() {
			ch.zb[i] = uint8(v)
		}
		if !s.pcluster.Update(s.ctx, ch.zb, lvl, ch.r, ch.work) {
			return false
		}
		if lvl == 0 && rep != s.k {
			ch.big = float64(ch.work.Largest) / float64(s.d)
		}
		for i, v := range ch.zb {
			ch.zi[i] = int(v)
		}
		tr.Reset(ch.zi)
		ch.ll[rep] = s.m.LogProb(ch.zi)
		return true
	}
	for i := range s.d {
		if i&(pollSites-1) == pollSites-1 && s.ctx.Err() != nil {
			return false
		}
		buf := tr.LogConditional(ch.bufs[rep], i)
		ch.bufs[rep] = buf
		if beta != 1 {
			for q, v := range buf {
				if !math.IsInf(v, -1) {
					buf[q] = beta * v
				}
			}
		}
		tr.Set(i, gibbs.Draw(buf, unitFloat(draws[i])))
	}
	if s.blocks != nil && s.blocks.At(s.iter) > 0 {
		zs, bb := ch.zs[rep*s.d:(rep+1)*s.d], ch.bb[rep]
		copy(zs, tr.State())
		for q := range s.blocks.At(s.iter) {
			s.blocks.Update(tr, zs, beta, bb, s.blocks.Of(s.iter, q), unitFloat(draws[s.d+q]))
		}
	}
	ch.ll[rep] = s.m.LogProb(tr.State())
	return true
}

// JointBlocks reports whether the site kernel updates a factor graph's
// blocks jointly after each sweep (gibbs.Blocks).
func (s *Sampler) JointBlocks() bool { return s.blocks != nil }

// swap proposes the exchanges of the iteration's parity and follows the
// round trips of the replicas at both ends of the ladder.
func (s *Sampler) swap(ch *chain) {
	for lvl := s.iter & 1; lvl+1 < s.k; lvl += 2 {
		a, b := ch.perm[lvl], ch.perm[lvl+1]
		p := acceptProb(s.ladder[lvl]-s.ladder[lvl+1], ch.ll[a], ch.ll[b])
		ch.acc[lvl] += p
		if p >= 1 || ch.r.Float64() < p {
			ch.perm[lvl], ch.perm[lvl+1] = b, a
		}
	}
	if s.k == 1 {
		return // plain chains: no ladder to cross
	}
	if bottom := ch.perm[s.k-1]; ch.trip[bottom] == 2 {
		ch.trips++
		ch.trip[bottom] = 1
	} else {
		ch.trip[bottom] = 1
	}
	if top := ch.perm[0]; ch.trip[top] == 1 {
		ch.trip[top] = 2
	}
}

// acceptProb returns min(1, exp(dBeta·(lb − la))) for dBeta > 0, the
// probability of exchanging state a (log p* la, at the higher β) with state
// b (lb). A state of probability zero (−Inf) never moves to the higher β
// and always leaves it; two such states are exchanged (a choice between
// states the target never visits). The result is never NaN.
func acceptProb(dBeta, la, lb float64) float64 {
	if la == lb { // both −Inf too
		return 1
	}
	lr := dBeta * (lb - la)
	if lr >= 0 {
		return 1
	}
	return math.Exp(lr)
}

// Step runs one iteration: a sweep of every replica of every chain, then a
// swap phase; while tuning, the ladder moves at the end of each round.
// When ctx is canceled the chains stop between replica sweeps (or sites;
// see iterTask.Do), with no swap phase for those not done, and Step
// returns ctx.Err(), from then on (see sampler.Sampler).
func (s *Sampler) Step(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.dev != nil {
		if err := s.dev.iterate(ctx, s); err != nil {
			s.err = err
			return err
		}
	} else {
		s.ctx = ctx
		if s.byReplica() {
			s.stepReplicas()
		} else {
			parallel.For(s.n, 1, &s.task)
		}
		s.ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		s.err = err
		return err
	}
	pairs := 0
	for lvl := s.iter & 1; lvl+1 < s.k; lvl += 2 {
		s.attempts[lvl]++
		pairs++
		var sum float64
		for c := range s.chains {
			sum += s.chains[c].acc[lvl]
		}
		s.rate[lvl] = sum / (float64(s.n) * float64(s.attempts[lvl]))
	}
	sites := int64(s.d + s.hidden) // an RBM's hidden units are drawn too by block Gibbs
	if s.blocks != nil {
		sites += int64(s.blocks.At(s.iter)) // a factor graph's blocks jointly
	}
	s.evals += int64(s.n) * (int64(s.k+s.shadow)*sites + 2*int64(pairs))
	s.iter++
	if s.probe != nil && s.iter == s.probeEnd {
		s.endProbation()
		return nil
	}
	if s.tune != nil && s.iter <= s.tune.end && s.iter == s.tune.roundEnd {
		if s.auto && s.iter == s.tune.end && s.size() {
			return nil // a new ladder, and a new tuning window unless K = 1
		}
		if s.tune.adapt(s.ladder, s.rate, s.attempts) {
			s.fillKernels()
		}
		s.tune.next(s.iter)
		s.resetWindow(s.iter == s.tune.end)
	}
	return nil
}

// resetWindow starts new swap-rate sums after the ladder changed; frozen
// also restarts the round-trip counts.
func (s *Sampler) resetWindow(frozen bool) {
	clear(s.attempts)
	for c := range s.chains {
		ch := &s.chains[c]
		clear(ch.acc)
		if frozen {
			clear(ch.trip)
			ch.trips = 0
		}
	}
}

// Current returns the states of the β = 1 replicas.
func (s *Sampler) Current() []int {
	if s.dev != nil {
		return s.dev.current(s)
	}
	for c := range s.chains {
		ch := &s.chains[c]
		row := s.cur[c*s.d : (c+1)*s.d]
		rep := ch.perm[0]
		if s.rbm != nil {
			ch.reps[rep].states(row)
			continue
		}
		if s.spin != nil {
			for i, v := range ch.spins[rep*s.d : (rep+1)*s.d] {
				row[i] = int(v)
			}
			continue
		}
		copy(row, ch.tr[rep].State())
	}
	return s.cur
}

// Stats reports the swap statistics described in the package
// documentation; Evaluations counts conditionals and log p* evaluations.
func (s *Sampler) Stats() sampler.Stats {
	vals := make([]sampler.Stat, 0, 8+len(s.rate))
	mean, lo, barrier := 0.0, 1.0, 0.0
	for _, r := range s.rate {
		mean += r / float64(len(s.rate))
		lo = min(lo, r)
		barrier += 1 - r
	}
	if len(s.rate) == 0 {
		mean = 1 // one temperature: nothing is rejected
		barrier = s.lambda
	}
	var trips int64
	for c := range s.chains {
		trips += s.chains[c].trips
	}
	vals = append(vals,
		sampler.Stat{Name: "swap_rate", Value: mean},
		sampler.Stat{Name: "min_swap_rate", Value: lo},
		sampler.Stat{Name: "barrier", Value: barrier},
		sampler.Stat{Name: "beta_min", Value: s.ladder[s.k-1]},
		sampler.Stat{Name: "round_trips", Value: float64(trips) / float64(s.n)})
	if s.cluster != nil || s.pcluster != nil {
		var big float64
		for c := range s.chains {
			big += s.chains[c].big / float64(s.n)
		}
		vals = append(vals, sampler.Stat{Name: "largest_cluster_fraction", Value: big})
	}
	if s.auto {
		// The number of pairs changes with the ladder: the per-pair rates
		// are left out so that the names stay the same.
		return sampler.Stats{Evaluations: s.evals, Values: append(vals,
			sampler.Stat{Name: "temperatures", Value: float64(s.k)},
			sampler.Stat{Name: "plain_sweeps", Value: s.plain},
			sampler.Stat{Name: "pt_sweeps", Value: s.ptCost})}
	}
	for j, r := range s.rate {
		vals = append(vals, sampler.Stat{Name: s.names[j], Value: r})
	}
	return sampler.Stats{Evaluations: s.evals, Values: vals}
}
