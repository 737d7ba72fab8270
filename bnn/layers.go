package bnn

import (
	"fmt"
	"math"
)

// effectiveWeights writes the forward weights of a parameter: sign (or its
// relaxation) for binary ones, the values themselves otherwise.
func effectiveWeights(p *pass, w *Param, wb []float32) {
	if w.Binary {
		binarize(p.mode, p.tau, w.W, wb)
	} else {
		copy(wb, w.W)
	}
}

// latentGrad turns the gradient with respect to the forward weights into
// the gradient with respect to the latent ones.
func latentGrad(p *pass, w *Param, wb, gb []float32) {
	if w.Binary {
		binarizeGrad(p.mode, p.beta, p.tau, w.W, wb, gb, w.G)
	} else {
		copy(w.G, gb)
	}
}

// dense is a fully connected layer without bias (a batch normalisation
// follows every one): y = x·B(W) with W of size in×out.
type dense struct {
	in, outN int
	w        *Param
	wb, gb   []float32
	g        gemm
}

func newDense(in, out int, binary bool) *dense {
	return &dense{in: in, outN: out, w: &Param{Name: fmt.Sprintf("dense %d→%d", in, out), W: make([]float32, in*out), G: make([]float32, in*out), Binary: binary},
		wb: make([]float32, in*out), gb: make([]float32, in*out)}
}

func (l *dense) name() string        { return l.w.Name }
func (l *dense) out() Shape          { return Shape{1, 1, l.outN} }
func (l *dense) params() []*Param    { return []*Param{l.w} }
func (l *dense) fanIn() int          { return l.in }
func (l *dense) weightParam() *Param { return l.w }

func (l *dense) forward(p *pass, x, y []float32) {
	effectiveWeights(p, l.w, l.wb)
	l.g.run(false, false, p.batch, l.outN, l.in, x, l.wb, 0, y)
}

func (l *dense) backward(p *pass, x, y, dy, dx []float32) {
	l.g.run(true, false, l.in, l.outN, p.batch, x, dy, 0, l.gb)
	latentGrad(p, l.w, l.wb, l.gb)
	if dx != nil {
		l.g.run(false, true, p.batch, l.in, l.outN, dy, l.wb, 0, dx)
	}
}

// batchNorm normalises each channel over the batch (and positions) and
// applies a real affine map γ·x̂ + β. In evaluation it uses running means and
// variances, updated with momentum BNMomentum during training passes. Its
// data are planar (channel-major) after convolutions and example-major rows
// after dense layers.
type batchNorm struct {
	s             Shape
	planar        bool
	gamma, beta   *Param
	mean, vr      []float64 // running statistics
	bmean, invstd []float64 // of the last training batch
	xhat          []float32
	sum1, sum2    []float64
}

// BNMomentum is the weight of the newest batch in the running statistics.
const BNMomentum = 0.1

// bnEps is added to variances.
const bnEps = 1e-5

func newBatchNorm(s Shape, planar bool) *batchNorm {
	c := s.C
	l := &batchNorm{s: s, planar: planar,
		gamma: &Param{Name: fmt.Sprintf("batch-norm γ (%d)", c), W: make([]float32, c), G: make([]float32, c)},
		beta:  &Param{Name: fmt.Sprintf("batch-norm β (%d)", c), W: make([]float32, c), G: make([]float32, c)},
		mean:  make([]float64, c), vr: make([]float64, c), bmean: make([]float64, c), invstd: make([]float64, c),
		sum1: make([]float64, c), sum2: make([]float64, c)}
	for i := range c {
		l.gamma.W[i] = 1
		l.vr[i] = 1
	}
	return l
}

func (l *batchNorm) name() string     { return fmt.Sprintf("batch-norm (%d channels)", l.s.C) }
func (l *batchNorm) out() Shape       { return l.s }
func (l *batchNorm) params() []*Param { return []*Param{l.gamma, l.beta} }

// strides returns the number of rows (values per channel) and the distance
// between consecutive channels and between consecutive rows.
func (l *batchNorm) strides(batch int) (rows, cs, rs int) {
	rows = batch * l.s.H * l.s.W
	if l.planar {
		return rows, rows, 1
	}
	return rows, 1, l.s.C
}

func (l *batchNorm) forward(p *pass, x, y []float32) {
	rows, cs, rs := l.strides(p.batch)
	g, bt := l.gamma.W, l.beta.W
	if !p.train {
		for j := range l.s.C {
			inv := 1 / math.Sqrt(l.vr[j]+bnEps)
			a := float32(float64(g[j]) * inv)
			b := bt[j] - float32(l.mean[j]*inv*float64(g[j]))
			for r := range rows {
				e := j*cs + r*rs
				y[e] = a*x[e] + b
			}
		}
		return
	}
	l.xhat = grow(l.xhat, rows*l.s.C)
	for j := range l.s.C {
		var s1 float64
		for r := range rows {
			s1 += float64(x[j*cs+r*rs])
		}
		m := s1 / float64(rows)
		var s2 float64
		for r := range rows {
			d := float64(x[j*cs+r*rs]) - m
			s2 += d * d
		}
		v := s2 / float64(rows)
		inv := 1 / math.Sqrt(v+bnEps)
		l.bmean[j], l.invstd[j] = m, inv
		if !p.noStats {
			unbiased := v
			if rows > 1 {
				unbiased = v * float64(rows) / float64(rows-1)
			}
			l.mean[j] = (1-BNMomentum)*l.mean[j] + BNMomentum*m
			l.vr[j] = (1-BNMomentum)*l.vr[j] + BNMomentum*unbiased
		}
		mf, invf := float32(m), float32(inv)
		for r := range rows {
			e := j*cs + r*rs
			h := (x[e] - mf) * invf
			l.xhat[e] = h
			y[e] = g[j]*h + bt[j]
		}
	}
}

func (l *batchNorm) backward(p *pass, x, y, dy, dx []float32) {
	rows, cs, rs := l.strides(p.batch)
	nr := float64(rows)
	for j := range l.s.C {
		var s1, s2 float64 // Σ dy and Σ dy·x̂
		for r := range rows {
			e := j*cs + r*rs
			s1 += float64(dy[e])
			s2 += float64(dy[e]) * float64(l.xhat[e])
		}
		l.beta.G[j] = float32(s1)
		l.gamma.G[j] = float32(s2)
		if dx == nil {
			continue
		}
		k := float32(float64(l.gamma.W[j]) * l.invstd[j])
		m1, m2 := float32(s1/nr), float32(s2/nr)
		for r := range rows {
			e := j*cs + r*rs
			dx[e] = k * (dy[e] - m1 - l.xhat[e]*m2)
		}
	}
}

// signAct is the binary activation: sign in the forward pass (σ when
// relaxed), with the mode's derivative backward.
type signAct struct{ s Shape }

func (l *signAct) name() string     { return "sign activation" }
func (l *signAct) out() Shape       { return l.s }
func (l *signAct) params() []*Param { return nil }
func (l *signAct) forward(p *pass, x, y []float32) {
	mode := p.mode
	binarize(mode, p.tau, x[:p.batch*l.s.Size()], y)
}
func (l *signAct) backward(p *pass, x, y, dy, dx []float32) {
	if dx != nil {
		n := p.batch * l.s.Size()
		binarizeGrad(p.mode, p.beta, p.tau, x[:n], y[:n], dy[:n], dx[:n])
	}
}

// dropout zeroes each activation with probability Rate during training and
// scales the others by 1/(1−Rate). The mask of a training pass is kept for
// its backward pass and for later passes with PassOptions.ReuseMasks.
type dropout struct {
	s    Shape
	rate float32
	mask []float32
	// drawn is the number of activations the kept mask covers (0: none
	// drawn yet).
	drawn int
}

func (l *dropout) name() string     { return fmt.Sprintf("dropout p = %g", l.rate) }
func (l *dropout) out() Shape       { return l.s }
func (l *dropout) params() []*Param { return nil }
func (l *dropout) forward(p *pass, x, y []float32) {
	n := p.batch * l.s.Size()
	if !p.train || l.rate == 0 {
		copy(y[:n], x[:n])
		return
	}
	if p.reuse {
		if l.drawn != n {
			panic(fmt.Sprintf("bnn: ReuseMasks in a pass of %d activations through %s, whose last mask covers %d", n, l.name(), l.drawn))
		}
	} else {
		if p.r == nil {
			panic(fmt.Sprintf("bnn: a training pass through %s needs PassOptions.Rand or ReuseMasks", l.name()))
		}
		l.mask = grow(l.mask, n)
		keep := 1 / (1 - l.rate)
		for i := range n {
			if p.r.Float32() < l.rate {
				l.mask[i] = 0
			} else {
				l.mask[i] = keep
			}
		}
		l.drawn = n
	}
	for i := range n {
		y[i] = x[i] * l.mask[i]
	}
}
func (l *dropout) backward(p *pass, x, y, dy, dx []float32) {
	if dx == nil {
		return
	}
	n := p.batch * l.s.Size()
	if !p.train || l.rate == 0 {
		copy(dx[:n], dy[:n])
		return
	}
	for i := range n {
		dx[i] = dy[i] * l.mask[i]
	}
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

func growInt32(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}
