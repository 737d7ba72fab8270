package gibbs

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/dstein/dstein/exact"
	"github.com/dstein/dstein/internal/chacha8"
	"github.com/dstein/dstein/internal/numeric"
	"github.com/dstein/dstein/internal/parallel"
	"github.com/dstein/dstein/internal/vec"
	"github.com/dstein/dstein/internal/vexp"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
)

// Why one file of about 610 lines: the scans (systematic, block, auto), stratified chains
// and the conditionals' buffers share one chain state.

// Name is the name of Gibbs sampling in the sampler registry; pipelines name the method by it.
const Name = "gibbs"

func init() {
	sampler.Register(sampler.Method{
		Name:        Name,
		Description: "n independent Gibbs chains: single-site systematic scans (any model), block Gibbs for RBMs; optionally with uniforms stratified across chains",
		NewSettings: func() sampler.Settings { return new(Settings) },
		New: func(p *sampler.Problem, s sampler.Settings) (sampler.Sampler, error) {
			return New(p, *s.(*Settings))
		},
		Iters: 500,
		Unit:  "sweep",
		Memory: func(m model.Model, n int, s sampler.Settings) float64 {
			set := Settings{}
			if s != nil {
				set = *s.(*Settings)
			}
			nf, d := float64(n), float64(m.Dim())
			cur := 8 * nf * d // the current states
			_, block := m.(BlockModel)
			// A model file's shape before the model is built is no
			// SpinModel but gives the same estimate.
			sm, spin := m.(model.SpinShape)
			switch {
			case set.MultiSpin && spin:
				// One bit per spin, a word of each site per 64 chains,
				// and a generator per 64 chains; the spin kernel.
				return cur + math.Ceil(nf/64)*(8*d+512) + SpinKernelBytes(sm, maxTableDegree, 1)
			case set.Stratified:
				// Trackers (states and local fields) and the conditionals.
				return cur + nf*(24*d+8*float64(sampler.States(m))+256)
			case block && set.Scan != Systematic:
				return cur + nf*(8*(d+float64(m.(BlockModel).Hidden()))+256)
			case spin:
				// One byte per spin; the spin kernel, shared.
				return cur + nf*(d+256) + SpinKernelBytes(sm, maxTableDegree, 1)
			}
			b := cur + nf*(24*d+256)
			if bl := NewBlocks(m); bl != nil {
				// A copy of each chain's state and a block's conditional.
				b += nf * (8*d + 8*float64(bl.BufLen()))
			}
			return b
		},
	})
}

// Scan selects the update schedule.
type Scan int

const (
	// Auto uses block Gibbs when the model supports it, else a systematic
	// single-site scan (the default).
	Auto Scan = iota
	// Systematic updates sites 0, 1, …, d−1 in order every sweep.
	Systematic
	// Block alternates all latent units given the visible ones and all
	// visible units given the latent ones; the model must support it.
	Block
)

// String returns "auto", "systematic" or "block".
func (s Scan) String() string {
	switch s {
	case Systematic:
		return "systematic"
	case Block:
		return "block"
	}
	return "auto"
}

// MarshalText implements encoding.TextMarshaler.
func (s Scan) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses "auto", "systematic" or "block".
func (s *Scan) UnmarshalText(b []byte) error {
	switch string(b) {
	case "auto":
		*s = Auto
	case "systematic":
		*s = Systematic
	case "block":
		*s = Block
	default:
		return fmt.Errorf("unknown scan %q: want auto, systematic or block", b)
	}
	return nil
}

// Settings configure Gibbs sampling. The zero value is valid.
type Settings struct {
	// Scan defaults to Auto.
	Scan Scan `json:"scan" flag:"scan" help:"update schedule: auto (block for RBMs, else systematic), systematic or block"`
	// Stratified couples the chains: single-site sweeps (variables 0..d−1
	// in order, exact conditionals) where the uniforms that update one
	// variable in all n chains form one systematic sample over the chains,
	// taken in a fresh random order. Each chain still makes an exact Gibbs
	// move, while the number of chains that land in the first state of
	// the draw (for two states, within one of it) is close to the sum of
	// their conditional probabilities. The chains are then not
	// independent. Not with Block.
	Stratified bool `json:"stratified" flag:"stratified" help:"couple the chains' uniforms by systematic sampling across chains (single-site sweeps; the chains are then not independent)"`
	// MultiSpin packs the chains of a ±1 pairwise model (a SpinModel:
	// the Ising model) 64 to a machine word and sweeps them together
	// (multi-spin coding): systematic single-site sweeps with the same
	// exact conditionals as without it (each chain's uniform 64-bit
	// integer is compared with its own threshold ⌊P(+1 | neighbours)·2^64⌋,
	// bit by bit from the most significant, drawing bits only until the
	// comparison is decided), and the chains stay independent. The draws
	// differ from those without it: chains 64b … 64b+63 share the stream
	// key.ForIndex(rng.Sample, b). Any number of chains (the last word
	// may be partly used). Off by default; New refuses it for models that
	// are not SpinModels, and Validate with Stratified or Block.
	MultiSpin bool `json:"multi_spin" flag:"multi-spin" help:"pack ±1 chains 64 to a word (multi-spin coding; Ising models only): exact conditionals, faster, different draws"`
	// Device is where the chains run: the CPU (the default) or an NVIDIA
	// GPU (package gpu: Ising and Potts models by the colour classes of
	// their graph, RBMs by blocks; other uniforms, so other draws).
	Device sampler.Device `json:"device,omitempty" flag:"device" help:"where the chains run: cpu, or cuda (an NVIDIA GPU; Ising and Potts models by colour classes, RBMs by blocks; see dstein gpu)"`
	// Precision is the GPU's number type for an RBM's products: float64
	// (the default) or float32.
	Precision sampler.Precision `json:"precision,omitempty" flag:"precision" help:"the GPU's numbers: float64 or float32 (with --device cuda)"`
}

// OnDevice returns the device the settings choose.
func (s *Settings) OnDevice() sampler.Device { return s.Device }

// Validate reports an unknown scan, and stratified or multi-spin sweeps
// combined with block updates or with each other.
func (s *Settings) Validate() error {
	switch {
	case s.Scan != Auto && s.Scan != Systematic && s.Scan != Block:
		return fmt.Errorf("unknown scan %d", int(s.Scan))
	case s.Stratified && s.Scan == Block:
		return fmt.Errorf("stratified sweeps are single-site; they cannot use block updates")
	case s.MultiSpin && s.Stratified:
		return fmt.Errorf("multi-spin sweeps draw independent uniforms; they cannot be stratified")
	case s.MultiSpin && s.Scan == Block:
		return fmt.Errorf("multi-spin sweeps are single-site; they cannot use block updates")
	case s.Device != sampler.CPU && s.Device != sampler.CUDA:
		return fmt.Errorf("unknown device %d", int(s.Device))
	case s.Precision != sampler.Float64 && s.Precision != sampler.Float32:
		return fmt.Errorf("unknown precision %d", int(s.Precision))
	case s.Precision == sampler.Float32 && s.Device != sampler.CUDA:
		return fmt.Errorf("float32 is the GPU's precision (with --device cuda); the CPU computes in float64")
	}
	return nil
}

// Resolved returns a copy (Gibbs has no defaults to fill in).
func (s *Settings) Resolved() sampler.Settings { c := *s; return &c }

// BlockModel is a model whose variables are conditionally independent
// given latent units, and vice versa (the RBM).
type BlockModel interface {
	model.Model
	// Hidden returns the number of latent units (each ±1).
	Hidden() int
	// SampleHidden draws the latent units given the visible ones.
	SampleHidden(h, z []int, r *rand.Rand)
	// SampleVisible draws the visible units given the latent ones.
	SampleVisible(z, h []int, r *rand.Rand)
}

// SpinModel is a pairwise model of ±1 spins, log p*(z) = Σ J_ij z_i z_j +
// Σ h_i z_i (the Ising model). Gibbs sweeps such models with a dedicated
// loop over flat arrays instead of going through a Tracker.
//
// The interface embeds model.SpinShape, which only ±1 pairwise models
// give: Neighbors and Fields alone are also the method set of a Potts
// model, whose fields are per state.
type SpinModel interface {
	model.SpinShape
	// Neighbors returns the neighbours of spin i and the couplings to them.
	Neighbors(i int) ([]int, []float64)
	// Fields returns h.
	Fields() []float64
}

// Sampler is the state of n Gibbs chains. It is not safe for concurrent
// use.
type Sampler struct {
	m      model.Model
	block  BlockModel
	spin   *spinKernel
	fixed  *fixedConditionals
	ms     *multiSpin
	strat  *stratified
	blocks *Blocks // joint updates after each generic sweep (blocks.go), or nil
	n, d   int
	chains []chain
	sweeps int
	evals  int64 // conditional evaluations (site updates or unit draws)
	cur    []int
	task   sweepTask
	ctx    context.Context // the context of the Step in progress
	err    error           // the context's error that stopped a step
}

type chain struct {
	tr  model.Tracker
	b   []uint8 // spins as 0/1 for the spin kernel
	r   *rand.Rand
	src chacha8.State // the stream's position, for the spin kernel and fixed conditionals (which do not use r)
	h   []int         // latent units for block Gibbs
	z   []int         // visible units for block Gibbs; the state with fixed conditionals
	zb  []uint8       // the state with fixed conditionals in the padded layout
	buf []float64
	zs  []int     // with blocks: a copy of the tracker's state
	bb  []float64 // with blocks: a block's conditional
}

var _ sampler.Sampler = (*Sampler)(nil)

// New starts n = p.N chains at the states p.Z. Chain c draws its
// transitions from p.Key.ForIndex(rng.Sample, c); stratified sweeps draw
// from the one stream p.Key.For(rng.Sample), multi-spin sweeps of chains
// 64b … 64b+63 from p.Key.ForIndex(rng.Sample, b).
func New(p *sampler.Problem, set Settings) (*Sampler, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("gibbs: %w", err)
	}
	if err := set.Validate(); err != nil {
		return nil, fmt.Errorf("gibbs: %w", err)
	}
	m, n, d := p.Model, p.N, p.Model.Dim()
	if set.MultiSpin {
		sm, ok := m.(SpinModel)
		if !ok {
			return nil, fmt.Errorf("gibbs: multi-spin coding needs a model of ±1 spins with pairwise couplings (the Ising model); this model is not one")
		}
		s := &Sampler{m: m, n: n, d: d, cur: make([]int, n*d), ms: newMultiSpin(newSpinKernel(sm), n), ctx: context.Background()}
		s.ms.set(p.Z)
		for b := range s.ms.src {
			s.ms.src[b] = chacha8.NewState(p.Key.ForIndex(rng.Sample, b).Source())
		}
		s.task.s = s
		return s, nil
	}
	s := &Sampler{m: m, n: n, d: d, chains: make([]chain, n), cur: make([]int, n*d), ctx: context.Background()}
	if set.Stratified {
		s.strat = newStratified(m, p.Z, n, p.Key.For(rng.Sample).Rand())
		return s, nil
	}
	switch set.Scan {
	case Auto, Block:
		if b, ok := m.(BlockModel); ok {
			s.block = b
		} else if set.Scan == Block {
			return nil, fmt.Errorf("gibbs: block Gibbs needs a model with latent units (an RBM)")
		}
	}
	if pm, ok := m.(exact.Product); ok && s.block == nil {
		s.fixed = newFixedConditionals(pm, p.Z[:d])
	}
	if s.block == nil && s.fixed == nil {
		s.blocks = NewBlocks(m)
	}
	var spins []uint8
	if sm, ok := m.(SpinModel); ok && s.block == nil {
		s.spin = newSpinKernel(sm)
		// Every chain's spins in one array, each row starting on its own
		// cache line, so that chains swept on different cores never
		// write to the same line.
		spins = make([]uint8, n*spinStride(d))
	}
	for c := range s.chains {
		ch := &s.chains[c]
		if src := p.Key.ForIndex(rng.Sample, c).Source(); s.spin != nil || s.fixed != nil {
			ch.src = chacha8.NewState(src)
		} else {
			ch.r = rand.New(src)
		}
		zc := p.Z[c*d : (c+1)*d]
		switch {
		case s.spin != nil:
			ch.b = spins[c*spinStride(d) : c*spinStride(d)+d : c*spinStride(d)+d]
			for i, v := range zc {
				ch.b[i] = uint8(v)
			}
		case s.block != nil:
			ch.z = append([]int(nil), zc...)
			ch.h = make([]int, s.block.Hidden())
		case s.fixed != nil && s.fixed.w > 0:
			ch.zb = make([]uint8, d)
			for i, v := range zc {
				ch.zb[i] = uint8(v)
			}
		case s.fixed != nil:
			ch.z = append([]int(nil), zc...)
		default:
			ch.tr = model.NewTracker(m, zc)
			if s.blocks != nil {
				ch.zs, ch.bb = make([]int, d), make([]float64, 0, s.blocks.BufLen())
			}
		}
	}
	s.task.s = s
	return s, nil
}

// spinStride is the bytes between two chains' spins: d rounded up to a
// cache line.
func spinStride(d int) int { return (d + 63) &^ 63 }

// chainWork is the number of site updates a chunk of chains should hold at
// least, so that handing it to another core (a few microseconds) pays.
const chainWork = 4096

// pollSites is the number of site updates (of one chain, or of a block of
// 64 chains in multi-spin sweeps) between two looks at the context.
const pollSites = 1 << 12

type sweepTask struct{ s *Sampler }

// Do sweeps chains (or blocks of 64 chains) [lo, hi). It looks at the
// step's context before each chain and every pollSites site updates within
// one, and stops there when it is canceled: a chain stopped inside its
// sweep keeps a valid state, part of its sites updated.
func (t *sweepTask) Do(lo, hi int) {
	s := t.s
	if s.ms != nil {
		for b := lo; b < hi; b++ {
			if !s.ms.sweep(s.ctx, b) {
				return
			}
		}
		return
	}
	var src chacha8.Stream // a chain's numbers, while it is swept
	for c := lo; c < hi; c++ {
		if s.ctx.Err() != nil {
			return
		}
		ch := &s.chains[c]
		if s.spin != nil {
			src.Begin(&ch.src)
			for a := 0; a < s.d; a += pollSites {
				if a > 0 && s.ctx.Err() != nil {
					break
				}
				s.spin.sweep(ch.b, a, min(a+pollSites, s.d), &src)
			}
			src.End()
			continue
		}
		if s.block != nil {
			s.block.SampleHidden(ch.h, ch.z, ch.r)
			s.block.SampleVisible(ch.z, ch.h, ch.r)
			continue
		}
		if f := s.fixed; f != nil {
			src.Begin(&ch.src)
			for a := 0; a < s.d; a += pollSites {
				if a > 0 && s.ctx.Err() != nil {
					break
				}
				f.sweep(ch.z, ch.zb, a, min(a+pollSites, s.d), &src)
			}
			src.End()
			continue
		}
		if !s.sweepGeneric(ch) {
			return
		}
	}
}

// sweepGeneric sweeps one chain through its tracker's conditionals, then
// draws the sweep's blocks (Blocks) jointly, one after another. It
// reports false when the step's context was canceled (the chain stopped
// between two site updates).
func (s *Sampler) sweepGeneric(ch *chain) bool {
	for i := range s.d {
		if i&(pollSites-1) == pollSites-1 && s.ctx.Err() != nil {
			return false
		}
		ch.buf = ch.tr.LogConditional(ch.buf, i)
		ch.tr.Set(i, Draw(ch.buf, ch.r.Float64()))
	}
	if s.blocks != nil && s.blocks.At(s.sweeps) > 0 {
		copy(ch.zs, ch.tr.State())
		for q := range s.blocks.At(s.sweeps) {
			s.blocks.Update(ch.tr, ch.zs, 1, ch.bb, s.blocks.Of(s.sweeps, q), ch.r.Float64())
		}
	}
	return true
}

// Draw returns the state drawn from probabilities ∝ exp(lp) by the uniform
// u ∈ [0, 1): the states' intervals are laid out from 0 to 1 in the order
// of FirstState first (for two states, state 1 then state 0; otherwise
// 0, 1, …), and u picks one. When every entry is −Inf (the other variables
// are in an impossible configuration) it picks an index uniformly. It
// takes each exponential once (up to drawStack states, together, with
// vexp; more take them twice, the same numbers) and does not allocate.
func Draw(lp []float64, u float64) int {
	m := math.Inf(-1)
	for _, v := range lp {
		m = max(m, v)
	}
	if math.IsInf(m, -1) {
		return min(int(u*float64(len(lp))), len(lp)-1)
	}
	if len(lp) == 2 {
		if u < numeric.Sigmoid(lp[1]-lp[0]) {
			return 1
		}
		return 0
	}
	if len(lp) > drawStack {
		return drawTwice(lp, m, u)
	}
	var buf [drawStack]float64
	e := buf[:len(lp)]
	for k, v := range lp {
		e[k] = v - m
	}
	vexp.Exp(e, e) // math.Exp's bits, four or eight at a time
	var tot float64
	for _, x := range e {
		tot += x
	}
	// The first state whose exponential leaves u·Σe negative; an
	// impossible state's exponential is 0 and cannot be that state.
	c := remaindersAtLeastZero(u*tot, e)
	if c < len(lp) {
		return c
	}
	// None did (rounding): the last possible state.
	for k := len(lp) - 1; k > 0; k-- {
		if !math.IsInf(lp[k], -1) {
			return k
		}
	}
	return 0
}

// fixedConditionals holds the conditionals of a model of independent
// variables (exact.Product: model/categorical), which are their marginals
// whatever the other variables are. Draw's state is a non-decreasing step
// function of its uniform's 53 bits m (u = m·2⁻⁵³: every operation Draw
// applies to u rounds monotonically), so each conditional is kept as the
// values of m where Draw's state changes, found once by bisection with
// Draw's own arithmetic: a site update is then a count of the thresholds
// at or below m, without a branch, and draws the state Draw draws from
// the same uniform.
type fixedConditionals struct {
	// Variable i draws st[off[i]+c], c the number of thresholds
	// thr[off[i]+1 : off[i+1]] at or below m (thr[off[i]] is unused);
	// nil in the padded layout (off then serves only for d).
	off []int
	thr []uint64
	st  []int
	// The padded layout, taken when every variable has at most w ≤
	// maxPadded intervals, its states are below 256 and padding costs
	// little memory: variable i's thresholds are pthr[w·i : w·(i+1)],
	// those past its own 2⁵³ (never reached), so that a sweep counts a
	// fixed number of them, and its states pst[w·i : w·(i+1)] as bytes;
	// the chains keep their states as bytes too. tt holds the thresholds
	// again by rank (variable i's j-th at tt[(j−1)·d+i], for
	// vec.CountAtLeastBytes), and ident says whether every variable's
	// count is its state (pst[w·i+c] = c for its intervals c).
	w     int // the padded width, or 0 for the ragged layout
	pthr  []uint64
	pst   []uint8
	tt    []uint64
	ident bool
}

// uniformBits is the number of a 64-bit draw's bits that
// rand.Rand.Float64 keeps: u = (x mod 2⁵³)·2⁻⁵³.
const uniformBits = 53

func newFixedConditionals(m exact.Product, z []int) *fixedConditionals {
	d := m.Dim()
	f := &fixedConditionals{off: make([]int, d+1)}
	tr := model.NewTracker(m, z)
	var lp []float64
	w := 1
	for i := range d {
		lp = tr.LogConditional(lp, i)
		pick := func(bits uint64) int { return Draw(lp, float64(bits)/(1<<uniformBits)) }
		// The states Draw can pick, in the order of its intervals, and
		// where each begins (the first m that picks it).
		a := len(f.st)
		f.thr, f.st = append(f.thr, 0), append(f.st, pick(0))
		lse := numeric.LogSumExp(lp)
		for lo := uint64(0); ; {
			cur := pick(lo)
			// The first m above lo whose state is not cur (2⁵³ if none),
			// by bisection: within guessWindow of where cur's probability
			// puts it when the window holds it (Draw's arithmetic differs
			// from the probability's by a few rounding errors, far below
			// the window), else over all of (lo, 2⁵³].
			const one = uint64(1) << uniformBits
			l, hi := lo, one
			p := 1 / float64(len(lp))
			if !math.IsInf(lse, -1) {
				p = math.Exp(lp[cur] - lse)
			}
			if g := lo + uint64(p*float64(one)); g > lo+guessWindow && g+guessWindow < one &&
				pick(g-guessWindow) == cur && pick(g+guessWindow) != cur {
				l, hi = g-guessWindow, g+guessWindow
			}
			for hi-l > 1 {
				mid := l + (hi-l)/2
				if pick(mid) == cur {
					l = mid
				} else {
					hi = mid
				}
			}
			if hi == one {
				break
			}
			f.thr, f.st = append(f.thr, hi), append(f.st, pick(hi))
			lo = hi
		}
		if len(f.st)-a > len(lp) {
			// Draw's state is not monotone in u: impossible unless its
			// arithmetic changed; refuse rather than draw wrongly.
			panic(fmt.Sprintf("gibbs: variable %d's draw changes state %d times over %d states", i, len(f.st)-a-1, len(lp)))
		}
		f.off[i+1] = len(f.st)
		w = max(w, len(f.st)-a)
	}
	if w <= maxPadded && d*w <= 2*len(f.st) && slices.Max(f.st) < 256 {
		f.w, f.pthr, f.pst = w, make([]uint64, d*w), make([]uint8, d*w)
		f.tt, f.ident = make([]uint64, (w-1)*d), true
		for i := range d {
			a, b := f.off[i], f.off[i+1]
			for j := range w {
				t, st := uint64(1)<<uniformBits, f.st[b-1]
				if j < b-a {
					t, st = f.thr[a+j], f.st[a+j]
					f.ident = f.ident && st == j
				}
				f.pthr[w*i+j], f.pst[w*i+j] = t, uint8(st)
				if j > 0 {
					f.tt[(j-1)*d+i] = t
				}
			}
		}
		f.thr, f.st = nil, nil // the padded layout holds them now
	}
	return f
}

// thresholds returns variable i's thresholds, the first (0) included and
// the padding left out.
func (f *fixedConditionals) thresholds(i int) []uint64 {
	if f.w == 0 {
		return f.thr[f.off[i]:f.off[i+1]]
	}
	t := f.pthr[f.w*i : f.w*(i+1)]
	for len(t) > 1 && t[len(t)-1] == 1<<uniformBits {
		t = t[:len(t)-1]
	}
	return t
}

// guessWindow is the half-width of the bracket newFixedConditionals tries
// first around a boundary between states.
const guessWindow = 1 << 12

// maxPadded is the widest padded layout, in intervals per variable.
const maxPadded = 8

// atLeast is 1 when m ≥ t, else 0 (both below 2⁶³), without a branch.
func atLeast(m, t uint64) int { return int(^uint64(int64(m)-int64(t)) >> 63) }

// draw is Draw(lp_i, m·2⁻⁵³) for variable i's fixed conditional lp_i and
// m < 2⁵³: the state of the last threshold at or below m. It takes the
// sweeps' paths for the layout (but vec.CountAtLeastBytes's).
func (f *fixedConditionals) draw(i int, m uint64) int {
	switch f.w {
	case 0:
		return pickAny(f.off, f.thr, f.st, i, m)
	case 2:
		return int(pick2(f.pthr, f.pst, i, m))
	case 4:
		return int(pick4(f.pthr, f.pst, i, m))
	}
	return int(pickPadded(f.pthr, f.pst, f.w, i, m))
}

// pick2 is draw for variables padded to two intervals.
func pick2(thr []uint64, st []uint8, i int, m uint64) uint8 {
	return st[2*i+atLeast(m, thr[2*i+1])]
}

// pick4 is draw for variables padded to four intervals.
func pick4(thr []uint64, st []uint8, i int, m uint64) uint8 {
	t := thr[4*i : 4*i+4 : 4*i+4]
	return st[4*i+atLeast(m, t[1])+atLeast(m, t[2])+atLeast(m, t[3])]
}

// pickPadded is draw for variables padded to w intervals.
func pickPadded(thr []uint64, st []uint8, w, i int, m uint64) uint8 {
	c := 0
	for _, t := range thr[w*i+1 : w*(i+1)] {
		c += atLeast(m, t)
	}
	return st[w*i+c]
}

// pickAny is draw for the ragged layout.
func pickAny(off []int, thr []uint64, st []int, i int, m uint64) int {
	a, b := off[i], off[i+1]
	c := a
	for _, t := range thr[a+1 : b] {
		c += atLeast(m, t)
	}
	return st[c]
}

// sweep draws the variables [lo, hi) of one chain's state (z in the
// ragged layout, zb in the padded one) from the uniforms of src, m the
// low 53 bits of each 64-bit draw (as rand.Rand.Float64 takes them).
func (f *fixedConditionals) sweep(z []int, zb []uint8, lo, hi int, src *chacha8.Stream) {
	const mask = 1<<uniformBits - 1
	if f.w == 0 {
		for i := lo; i < hi; i++ {
			z[i] = pickAny(f.off, f.thr, f.st, i, src.Uint64()&mask)
		}
		return
	}
	w, d := f.w, len(f.off)-1
	for lo < hi {
		u := src.Take(hi - lo)
		zu := zb[lo : lo+len(u)]
		thr, st := f.pthr[w*lo:w*(lo+len(u))], f.pst[w*lo:w*(lo+len(u))]
		switch {
		case vec.Wide():
			vec.CountAtLeastBytes(zu, u, mask, f.tt[lo:], d, w-1)
			if !f.ident {
				for i, c := range zu {
					zu[i] = st[w*i+int(c)]
				}
			}
		case w == 2:
			for i, x := range u {
				zu[i] = pick2(thr, st, i, x&mask)
			}
		case w == 4:
			for i, x := range u {
				zu[i] = pick4(thr, st, i, x&mask)
			}
		default:
			for i, x := range u {
				zu[i] = pickPadded(thr, st, w, i, x&mask)
			}
		}
		lo += len(u)
	}
}

// remaindersAtLeastZero subtracts the values e (each ≥ 0) from v ≥ +0 in
// turn and counts the remainders that are ≥ 0, by their sign bits (none is
// −0), without a branch. The remainders never increase, so the count is
// the index of the first negative one (len(e) when none is): the state
// Draw's inverse CDF picks.
func remaindersAtLeastZero(v float64, e []float64) int {
	c := 0
	for _, x := range e {
		v -= x
		c += int(^math.Float64bits(v) >> 63)
	}
	return c
}

// drawStack is the most states whose exponentials Draw keeps on the stack.
const drawStack = 16

// drawTwice is Draw for more than drawStack states (m the largest entry,
// finite): it takes every exponential twice rather than allocate.
func drawTwice(lp []float64, m, u float64) int {
	var tot float64
	for _, v := range lp {
		tot += math.Exp(v - m)
	}
	u *= tot
	last := 0
	for k, v := range lp {
		if math.IsInf(v, -1) {
			continue
		}
		u -= math.Exp(v - m)
		last = k
		if u < 0 {
			return k
		}
	}
	return last
}

// firstProb returns the probability of the state whose interval comes
// first in Draw (state 1 of two, else state 0), and 1/K when every entry
// is −Inf.
func firstProb(lp []float64) float64 {
	m := math.Inf(-1)
	for _, v := range lp {
		m = max(m, v)
	}
	if math.IsInf(m, -1) {
		return 1 / float64(len(lp))
	}
	if len(lp) == 2 {
		return numeric.Sigmoid(lp[1] - lp[0])
	}
	var tot float64
	for _, v := range lp {
		tot += math.Exp(v - m)
	}
	return math.Exp(lp[0]-m) / tot
}

// Step runs one sweep of every chain: d single-site updates, or one block
// update of the latent and then the visible units. When ctx is canceled
// the chains stop between site updates (see sweepTask.Do; stratified
// sweeps between variables) and Step returns ctx.Err(), from then on (see
// sampler.Sampler).
func (s *Sampler) Step(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.ctx = ctx
	err := s.step()
	s.ctx = context.Background()
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		s.err = err
		return err
	}
	s.sweeps++
	return nil
}

func (s *Sampler) step() error {
	switch {
	case s.strat != nil:
		if err := s.strat.sweep(s.ctx); err != nil {
			return err
		}
		s.evals += int64(s.n) * int64(s.d)
	case s.ms != nil:
		// Contiguous runs of blocks of 64 chains, each at least
		// msBlockWork site words; each block draws from its own stream.
		parallel.For(s.ms.blocks, parallel.Grain(s.ms.blocks, msBlockWork/max(1, s.d)), &s.task)
		s.evals += int64(s.n) * int64(s.d)
	default:
		// Contiguous blocks of chains (about 4 per core; for the spin
		// kernel, whose site update takes nanoseconds, at least chainWork
		// site updates): each chain's draws depend only on its own
		// stream, so the split never changes them.
		minGrain := 1
		if s.spin != nil {
			minGrain = chainWork / max(1, s.d)
		}
		parallel.For(s.n, parallel.Grain(s.n, minGrain), &s.task)
		if s.block != nil {
			s.evals += int64(s.n) * int64(s.block.Hidden()+s.d)
		} else {
			s.evals += int64(s.n) * int64(s.d)
			if s.blocks != nil {
				s.evals += int64(s.n) * int64(s.blocks.At(s.sweeps))
			}
		}
	}
	return nil
}

// Sweeps returns the number of completed sweeps.
func (s *Sampler) Sweeps() int { return s.sweeps }

// JointBlocks reports whether the chains update a factor graph's blocks
// jointly after each sweep (Blocks).
func (s *Sampler) JointBlocks() bool { return s.blocks != nil }

// Blocked reports whether the chains use block Gibbs.
func (s *Sampler) Blocked() bool { return s.block != nil }

// Stats reports the conditional distributions evaluated so far: one per
// site update, one per unit of an RBM's block update, and one per joint
// update of a factor graph's block (Blocks).
func (s *Sampler) Stats() sampler.Stats { return sampler.Stats{Evaluations: s.evals} }

// Current returns the chains' current states.
func (s *Sampler) Current() []int {
	if s.strat != nil {
		return s.strat.current(s.cur)
	}
	if s.ms != nil {
		s.ms.get(s.cur)
		return s.cur
	}
	for c := range s.chains {
		row := s.cur[c*s.d : (c+1)*s.d]
		switch {
		case s.spin != nil:
			for i, v := range s.chains[c].b {
				row[i] = int(v)
			}
		case s.block != nil, s.fixed != nil && s.fixed.w == 0:
			copy(row, s.chains[c].z)
		case s.fixed != nil:
			for i, v := range s.chains[c].zb {
				row[i] = int(v)
			}
		default:
			copy(row, s.chains[c].tr.State())
		}
	}
	return s.cur
}

// spinKernel sweeps ±1 spins of a pairwise model: spin i becomes +1 with
// probability p_i = 1/(1+exp(−2 L_i)), L_i = h_i + Σ_j J_ij z_j, when a
// uniform 64-bit integer u satisfies u < ⌊p_i·2^64⌋ (so the probability is
// p_i to within 2^−64). For sites of degree ≤ maxTableDegree the 2^degree
// possible thresholds are tabulated once (with the same arithmetic as the
// direct formula, so the draws are identical), which removes the
// exponential from the sweep.
type spinKernel struct {
	SpinGraph
	// table[tstart[i] + pattern] is the threshold of site i for the
	// neighbour pattern (bit k set when neighbour k is +1); tstart[i] < 0
	// for sites without a table.
	tstart []int
	table  []uint64
}

// SpinGraph is a pairwise ±1 model in flat arrays, for samplers' inner
// loops: site i's neighbours are Nbr[Start[i]:Start[i+1]], with couplings
// Cpl at the same positions, and H holds the fields.
type SpinGraph struct {
	Start []int
	Nbr   []int
	Cpl   []float64
	H     []float64
}

// SpinGraphBytes is the memory of NewSpinGraph(m): the offsets, the
// fields, the neighbours and the couplings.
func SpinGraphBytes(m model.SpinShape) float64 {
	return 16*float64(m.Dim()+1) + 32*float64(m.SpinEdges())
}

// SpinKernelBytes estimates the memory of a spin kernel with tables of
// sites of degree ≤ maxDeg over levels temperatures (the graph included):
// the threshold tables (2^degree entries per site and level) and their
// offsets.
func SpinKernelBytes(m model.SpinShape, maxDeg int, levels float64) float64 {
	return SpinGraphBytes(m) + 8*float64(m.Dim()) + 8*levels*m.SpinTableEntries(maxDeg)
}

// NewSpinGraph lays out m's neighbours and fields, each array allocated
// once at its size.
func NewSpinGraph(m SpinModel) SpinGraph {
	d := m.Dim()
	g := SpinGraph{Start: make([]int, d+1), H: append([]float64(nil), m.Fields()...)}
	for i := range d {
		nb, _ := m.Neighbors(i)
		g.Start[i+1] = g.Start[i] + len(nb)
	}
	g.Nbr, g.Cpl = make([]int, g.Start[d]), make([]float64, g.Start[d])
	for i := range d {
		nb, cp := m.Neighbors(i)
		copy(g.Nbr[g.Start[i]:], nb)
		copy(g.Cpl[g.Start[i]:], cp)
	}
	return g
}

// Degree returns the number of neighbours of site i.
func (g *SpinGraph) Degree(i int) int { return g.Start[i+1] - g.Start[i] }

// PatternField returns L_i = h_i + Σ_j J_ij z_j for the neighbour pattern
// pat (bit e set when site i's e-th neighbour is +1), summed in neighbour
// order as the sweeps sum it.
func (g *SpinGraph) PatternField(i, pat int) float64 {
	l := g.H[i]
	for e := g.Start[i]; e < g.Start[i+1]; e++ {
		l += g.Cpl[e] * float64(2*((pat>>(e-g.Start[i]))&1)-1)
	}
	return l
}

// Threshold returns ⌊p·2^64⌋ for p = 1/(1+exp(−2l)), saturating at 2^64−1:
// a spin becomes +1 when a uniform 64-bit integer falls below it.
func Threshold(l float64) uint64 { return ThresholdFromExp(math.Exp(-2 * l)) }

// ThresholdFromExp is Threshold(l) given e = math.Exp(−2l), for callers
// that take many exponentials together (vexp.Exp, the same bits); it is
// vec.SpinThreshold, which vec.Spins compares eight words at a time.
func ThresholdFromExp(e float64) uint64 { return vec.SpinThreshold(e) }

const maxTableDegree = 10

func newSpinKernel(m SpinModel) *spinKernel {
	k := &spinKernel{SpinGraph: NewSpinGraph(m), tstart: make([]int, m.Dim())}
	size := 0
	for i := range k.tstart {
		if deg := k.Degree(i); deg <= maxTableDegree {
			size += 1 << deg
		}
	}
	k.table = make([]uint64, 0, size)
	for i := range k.tstart {
		deg := k.Degree(i)
		if deg > maxTableDegree {
			k.tstart[i] = -1
			continue
		}
		k.tstart[i] = len(k.table)
		for pat := range 1 << deg {
			k.table = append(k.table, Threshold(k.PatternField(i, pat)))
		}
	}
	return k
}

// sweep updates the spins b[lo:hi] (0 for −1, 1 for +1) in order.
func (k *spinKernel) sweep(b []uint8, lo, hi int, r *chacha8.Stream) {
	for i := lo; i < hi; i++ {
		lo, hi := k.Start[i], k.Start[i+1]
		var th uint64
		if t := k.tstart[i]; t >= 0 {
			pat := 0
			for j, nb := range k.Nbr[lo:hi] {
				pat |= int(b[nb]) << j
			}
			th = k.table[t+pat]
		} else {
			l := k.H[i]
			for e := lo; e < hi; e++ {
				l += k.Cpl[e] * float64(2*int(b[k.Nbr[e]])-1)
			}
			th = Threshold(l)
		}
		// The borrow of u − th is 1 exactly when u < th: a branch-free
		// draw (the branch would be mispredicted half the time).
		_, borrow := bits.Sub64(r.Uint64(), th, 0)
		b[i] = uint8(borrow)
	}
}
