package bnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Net is a feed-forward network: a sequence of layers from an input shape to
// Classes logits. It keeps the activations of the last forward pass for the
// backward pass, so one Net is not safe for concurrent use.
type Net struct {
	arch    string
	in      Shape
	classes int
	layers  []layer
	params  []*Param
	bns     []*batchNorm
	acts    [][]float32 // acts[0] is the input, acts[i+1] the output of layer i
	grads   [][]float32 // gradients with respect to acts[i]
	p       pass
}

// builder assembles a network layer by layer; a dry builder only counts
// what the layers would hold (Measure).
type builder struct {
	n      *Net
	cur    Shape
	planar bool // the current data are planar (after a convolution)
	err    error
	dry    bool
	fp     Footprint
}

func (b *builder) add(l layer) {
	b.n.layers = append(b.n.layers, l)
	b.n.params = append(b.n.params, l.params()...)
	if bn, ok := l.(*batchNorm); ok {
		b.n.bns = append(b.n.bns, bn)
	}
	b.cur = l.out()
}

func (b *builder) conv(cout, k, stride, pad int) {
	if b.err != nil {
		return
	}
	if b.dry {
		out, err := convShape(b.cur, cout, k, stride, pad)
		if err != nil {
			b.err = err
			return
		}
		// Columns (k·k·cin per output position) and the output with its
		// gradient.
		b.fp.weights(k * k * b.cur.C * cout)
		b.fp.PerExample += k*k*b.cur.C*out.H*out.W + 2*out.Size()
		b.cur, b.planar = out, true
		return
	}
	l, err := newConv(b.cur, cout, k, stride, pad, true)
	if err != nil {
		b.err = err
		return
	}
	b.add(l)
	b.planar = true
}

func (b *builder) pool(k, stride int) {
	if b.err != nil {
		return
	}
	if b.dry {
		out, err := poolShape(b.cur, k, stride)
		if err != nil {
			b.err = err
			return
		}
		// The output, its gradient and the int32 index of each maximum.
		b.fp.PerExample += 3 * out.Size()
		b.cur = out
		return
	}
	l, err := newMaxPool(b.cur, k, stride)
	if err != nil {
		b.err = err
		return
	}
	b.add(l)
}

func (b *builder) dense(out int) {
	if b.err != nil {
		return
	}
	if b.dry {
		if b.planar {
			// flatten's output and gradient.
			b.fp.PerExample += 2 * b.cur.Size()
			b.planar = false
		}
		b.fp.weights(b.cur.Size() * out)
		b.fp.PerExample += 2 * out
		b.cur = Shape{1, 1, out}
		return
	}
	if b.planar {
		b.add(&flatten{s: b.cur})
		b.planar = false
	}
	b.add(newDense(b.cur.Size(), out, true))
}

func (b *builder) bn() {
	switch {
	case b.err != nil:
	case b.dry:
		// The output, its gradient and the normalised values x̂.
		b.fp.Params += 2 * b.cur.C
		b.fp.Channels += b.cur.C
		b.fp.Arrays += 4
		b.fp.PerExample += 3 * b.cur.Size()
	default:
		b.add(newBatchNorm(b.cur, b.planar))
	}
}

func (b *builder) sign() {
	switch {
	case b.err != nil:
	case b.dry:
		b.fp.PerExample += 2 * b.cur.Size()
	default:
		b.add(&signAct{s: b.cur})
	}
}

func (b *builder) dropout(rate float32) {
	switch {
	case b.err != nil:
	case b.dry:
		// The output, its gradient and the mask.
		b.fp.PerExample += 3 * b.cur.Size()
	default:
		b.add(&dropout{s: b.cur, rate: rate})
	}
}

// Arch returns the architecture's name.
func (n *Net) Arch() string { return n.arch }

// Input returns the shape of one input example.
func (n *Net) Input() Shape { return n.in }

// Classes returns the number of outputs.
func (n *Net) Classes() int { return n.classes }

// Params returns the trainable arrays in layer order.
func (n *Net) Params() []*Param { return n.params }

// NumBinary returns the number of binary weights.
func (n *Net) NumBinary() int {
	s := 0
	for _, p := range n.params {
		if p.Binary {
			s += len(p.W)
		}
	}
	return s
}

// Describe lists the layers, one per line.
func (n *Net) Describe() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: input %v, %d binary weights\n", n.arch, n.in, n.NumBinary())
	for i, l := range n.layers {
		fmt.Fprintf(&sb, "  %2d  %s\n", i+1, l.name())
	}
	return sb.String()
}

// Init draws the latent weights from U(−a, a) with Glorot's a =
// sqrt(6/(fan in + fan out)) and resets batch normalisation to γ = 1, β = 0
// and unit running statistics.
func (n *Net) Init(r *rand.Rand) {
	for _, l := range n.layers {
		var fan, out int
		var w *Param
		switch t := l.(type) {
		case *dense:
			fan, out, w = t.in, t.outN, t.w
		case *conv:
			fan, out, w = t.fanIn(), t.k*t.k*t.outS.C, t.w
		default:
			continue
		}
		a := math.Sqrt(6 / float64(fan+out))
		for i := range w.W {
			w.W[i] = float32(a * (2*r.Float64() - 1))
		}
	}
	for _, bn := range n.bns {
		for j := range bn.s.C {
			bn.gamma.W[j], bn.beta.W[j] = 1, 0
			bn.mean[j], bn.vr[j] = 0, 1
		}
	}
}

func (n *Net) ensure(batch int) {
	need := func(i int, s Shape) {
		if cap(n.acts[i]) < batch*s.Size() {
			n.acts[i] = make([]float32, batch*s.Size())
			n.grads[i] = make([]float32, batch*s.Size())
		}
		n.acts[i] = n.acts[i][:batch*s.Size()]
		n.grads[i] = n.grads[i][:batch*s.Size()]
	}
	if n.acts == nil {
		n.acts = make([][]float32, len(n.layers)+1)
		n.grads = make([][]float32, len(n.layers)+1)
	}
	need(0, n.in)
	for i, l := range n.layers {
		need(i+1, l.out())
	}
}

// PassOptions configure a forward pass.
type PassOptions struct {
	Mode Mode
	// Train uses batch statistics and dropout; otherwise running statistics
	// and no dropout.
	Train bool
	// KeepStats leaves the running statistics unchanged in a training pass.
	KeepStats bool
	// SwishBeta is the SignSwish slope (default DefaultSwishBeta).
	SwishBeta float32
	// Temperature τ of the relaxation σ(x/τ) in the Relaxed mode, for
	// weights and activations; default 1, the paper's σ.
	Temperature float32
	// Rand draws dropout masks; required when training a network with
	// dropout, unless ReuseMasks is set.
	Rand *rand.Rand
	// ReuseMasks makes every dropout layer of a training pass apply the
	// mask it drew in its last training pass instead of drawing a new one
	// (Rand is not used), whatever the modes of the two passes: a
	// binarized and a relaxed pass over the same batch then drop the same
	// units. The batch size must be that of the pass that drew the masks;
	// evaluation passes (Train false) neither draw nor forget masks. A
	// pass with ReuseMasks through a dropout layer that has drawn no mask
	// of that size panics.
	ReuseMasks bool
}

// Forward runs batch examples x (batch × Input().Size(), NHWC) through the
// network and returns the logits (batch × Classes), valid until the next
// pass.
func (n *Net) Forward(x []float32, batch int, o PassOptions) []float32 {
	n.ensure(batch)
	if o.SwishBeta == 0 {
		o.SwishBeta = DefaultSwishBeta
	}
	if o.Temperature == 0 {
		o.Temperature = 1
	}
	n.p = pass{batch: batch, mode: o.Mode, train: o.Train, beta: o.SwishBeta, tau: o.Temperature, r: o.Rand, reuse: o.ReuseMasks, noStats: o.KeepStats}
	if _, ok := n.layers[0].(*conv); ok {
		toPlanar(x, n.acts[0], batch, n.in)
	} else {
		copy(n.acts[0], x[:batch*n.in.Size()])
	}
	for i, l := range n.layers {
		l.forward(&n.p, n.acts[i], n.acts[i+1])
	}
	return n.acts[len(n.layers)]
}

// toPlanar copies batch NHWC examples into planar (C, B, H, W) order.
func toPlanar(x, dst []float32, batch int, s Shape) {
	hw := s.H * s.W
	if s.C == 1 {
		copy(dst, x[:batch*hw])
		return
	}
	for b := range batch {
		for p := range hw {
			for c := range s.C {
				dst[(c*batch+b)*hw+p] = x[(b*hw+p)*s.C+c]
			}
		}
	}
}

// Backward takes the gradient of an objective with respect to the logits of
// the last Forward and leaves the objective's gradient with respect to every
// parameter in Param.G (through the pass's mode).
func (n *Net) Backward(dlogits []float32) {
	last := len(n.layers)
	copy(n.grads[last], dlogits)
	for i := last - 1; i >= 0; i-- {
		var dx []float32
		if i > 0 {
			dx = n.grads[i]
		}
		n.layers[i].backward(&n.p, n.acts[i], n.acts[i+1], n.grads[i+1], dx)
	}
}

// LogLik returns Σ_b log softmax(logits_b)[labels_b] over the batch and,
// when dlogits is not nil, writes scale times its gradient with respect to
// the logits. It is computed in float64 with the log-sum-exp shift, so it is
// finite for finite logits.
func LogLik(logits []float32, labels []uint8, classes int, scale float64, dlogits []float32) float64 {
	var total float64
	for b, y := range labels {
		row := logits[b*classes : (b+1)*classes]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, float64(v))
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v) - mx)
		}
		lse := mx + math.Log(s)
		total += float64(row[y]) - lse
		if dlogits != nil {
			d := dlogits[b*classes : (b+1)*classes]
			for k, v := range row {
				pk := math.Exp(float64(v) - lse)
				g := -pk
				if k == int(y) {
					g += 1
				}
				d[k] = float32(scale * g)
			}
		}
	}
	return total
}

// Softmax writes the class probabilities of each row of logits into probs.
func Softmax(logits []float32, classes int, probs []float64) {
	for b := 0; b < len(logits)/classes; b++ {
		row := logits[b*classes : (b+1)*classes]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, float64(v))
		}
		var s float64
		pr := probs[b*classes : (b+1)*classes]
		for k, v := range row {
			pr[k] = math.Exp(float64(v) - mx)
			s += pr[k]
		}
		for k := range pr {
			pr[k] /= s
		}
	}
}

// BinaryVector copies the latent binary weights, in parameter order, into
// dst (length NumBinary) and returns it.
func (n *Net) BinaryVector(dst []float32) []float32 {
	dst = grow(dst, n.NumBinary())
	o := 0
	for _, p := range n.params {
		if p.Binary {
			o += copy(dst[o:], p.W)
		}
	}
	return dst
}

// SetBinaryVector sets the latent binary weights from src.
func (n *Net) SetBinaryVector(src []float32) {
	o := 0
	for _, p := range n.params {
		if p.Binary {
			o += copy(p.W, src[o:])
		}
	}
}

// BinaryGrad copies the gradient of the binary weights into dst.
func (n *Net) BinaryGrad(dst []float32) []float32 {
	dst = grow(dst, n.NumBinary())
	o := 0
	for _, p := range n.params {
		if p.Binary {
			o += copy(dst[o:], p.G)
		}
	}
	return dst
}

// State is everything a trained network holds besides its architecture:
// parameter values and the running statistics of batch normalisation.
type State struct {
	Params [][]float32
	Mean   [][]float64
	Var    [][]float64
}

// State returns a deep copy of the network's state.
func (n *Net) State() State {
	var s State
	for _, p := range n.params {
		s.Params = append(s.Params, append([]float32(nil), p.W...))
	}
	for _, bn := range n.bns {
		s.Mean = append(s.Mean, append([]float64(nil), bn.mean...))
		s.Var = append(s.Var, append([]float64(nil), bn.vr...))
	}
	return s
}

// StateView returns the network's state as views of its own arrays, not
// copies: what is written into them sets the network (a decoder that fills
// slices in place when they have the capacity can read a State straight
// into it).
func (n *Net) StateView() State {
	var s State
	for _, p := range n.params {
		s.Params = append(s.Params, p.W)
	}
	for _, bn := range n.bns {
		s.Mean = append(s.Mean, bn.mean)
		s.Var = append(s.Var, bn.vr)
	}
	return s
}

// SetState restores a state taken from a network of the same architecture.
func (n *Net) SetState(s State) error {
	if len(s.Params) != len(n.params) || len(s.Mean) != len(n.bns) || len(s.Var) != len(n.bns) {
		return fmt.Errorf("state has %d parameter arrays and %d normalisations; the %s network has %d and %d", len(s.Params), len(s.Mean), n.arch, len(n.params), len(n.bns))
	}
	for i, p := range n.params {
		if len(s.Params[i]) != len(p.W) {
			return fmt.Errorf("state's parameter %d (%s) has %d values, want %d", i, p.Name, len(s.Params[i]), len(p.W))
		}
	}
	for i, bn := range n.bns {
		if len(s.Mean[i]) != bn.s.C || len(s.Var[i]) != bn.s.C {
			return fmt.Errorf("state's normalisation %d has %d/%d statistics, want %d", i, len(s.Mean[i]), len(s.Var[i]), bn.s.C)
		}
	}
	for i, p := range n.params {
		copy(p.W, s.Params[i])
	}
	for i, bn := range n.bns {
		copy(bn.mean, s.Mean[i])
		copy(bn.vr, s.Var[i])
	}
	return nil
}
