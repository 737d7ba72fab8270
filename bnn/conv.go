package bnn

import (
	"fmt"
	"math"

	"github.com/dstein/dstein/internal/parallel"
)

// Convolutional stages keep their activations planar, channel-major over the
// whole batch (C, B, H, W), so that each of the three products of a
// convolution runs along the long batch·positions axis, and batch
// normalisation reads one contiguous block per channel. A flatten stage
// turns planar data into the example-major rows that dense layers read.

// conv is a 2-D convolution without bias (batch normalisation follows).
// With colT the patches as columns — row (ci, ky, kx), column (b, oy, ox) —
// the output is y = B(W)·colT for W of size cout × (k·k·cin).
type conv struct {
	inS, outS     Shape
	k, stride, pd int
	w             *Param
	wb, gb        []float32
	colT          []float32
	g             gemm
	task          convTask
}

func newConv(in Shape, cout, k, stride, pad int, binary bool) (*conv, error) {
	outS, err := convShape(in, cout, k, stride, pad)
	if err != nil {
		return nil, err
	}
	n := k * k * in.C * cout
	l := &conv{inS: in, outS: outS, k: k, stride: stride, pd: pad,
		w:  &Param{Name: fmt.Sprintf("conv %d×%d %d→%d", k, k, in.C, cout), W: make([]float32, n), G: make([]float32, n), Binary: binary},
		wb: make([]float32, n), gb: make([]float32, n)}
	l.task.l = l
	return l, nil
}

// convShape returns the output shape of a convolution of input in.
func convShape(in Shape, cout, k, stride, pad int) (Shape, error) {
	if k < 1 || stride < 1 || pad < 0 {
		return Shape{}, fmt.Errorf("convolution %d×%d stride %d pad %d is not valid", k, k, stride, pad)
	}
	oh := (in.H+2*pad-k)/stride + 1
	ow := (in.W+2*pad-k)/stride + 1
	if oh < 1 || ow < 1 || in.H+2*pad < k || in.W+2*pad < k {
		return Shape{}, fmt.Errorf("convolution %d×%d stride %d pad %d does not fit input %v", k, k, stride, pad, in)
	}
	return Shape{oh, ow, cout}, nil
}

func (l *conv) name() string {
	return fmt.Sprintf("%s stride %d pad %d (%v → %v)", l.w.Name, l.stride, l.pd, l.inS, l.outS)
}
func (l *conv) out() Shape       { return l.outS }
func (l *conv) params() []*Param { return []*Param{l.w} }
func (l *conv) fanIn() int       { return l.k * l.k * l.inS.C }
func (l *conv) planar() bool     { return true }

func (l *conv) forward(p *pass, x, y []float32) {
	effectiveWeights(p, l.w, l.wb)
	kk := l.fanIn()
	r := p.batch * l.outS.H * l.outS.W
	l.colT = grow(l.colT, kk*r)
	l.task.x, l.task.batch, l.task.back = x, p.batch, false
	parallel.For(kk, 1, &l.task)
	l.g.run(false, false, l.outS.C, r, kk, l.wb, l.colT, 0, y)
}

func (l *conv) backward(p *pass, x, y, dy, dx []float32) {
	kk := l.fanIn()
	r := p.batch * l.outS.H * l.outS.W
	// ∂/∂B(W) = dy·colTᵀ: dot products along the batch·positions axis.
	l.g.run(false, true, l.outS.C, kk, r, dy, l.colT, 0, l.gb)
	latentGrad(p, l.w, l.wb, l.gb)
	if dx == nil {
		return
	}
	// dcolT = B(W)ᵀ·dy, into colT (the patches are no longer needed).
	l.g.run(true, false, kk, r, l.outS.C, l.wb, dy, 0, l.colT)
	l.task.x, l.task.batch, l.task.back = dx, p.batch, true
	parallel.For(l.inS.C, 1, &l.task)
}

// convTask fills colT from the planar input, one row (ci, ky, kx) per index
// (forward), or sums colT back into the planar dx, one input channel per
// index (backward).
type convTask struct {
	l     *conv
	x     []float32
	batch int
	back  bool
}

func (t *convTask) Do(lo, hi int) {
	l := t.l
	in, o := l.inS, l.outS
	plane := in.H * in.W
	r := t.batch * o.H * o.W
	for idx := lo; idx < hi; idx++ {
		if t.back {
			clear(t.x[idx*t.batch*plane : (idx+1)*t.batch*plane])
			for ky := range l.k {
				for kx := range l.k {
					t.row(idx, ky, kx, t.l.colT[((idx*l.k+ky)*l.k+kx)*r:][:r])
				}
			}
			continue
		}
		ci, rest := idx/(l.k*l.k), idx%(l.k*l.k)
		t.row(ci, rest/l.k, rest%l.k, t.l.colT[idx*r:][:r])
	}
}

// row copies (forward) or adds back (backward) the column-matrix row of
// input channel ci and kernel offset (ky, kx).
func (t *convTask) row(ci, ky, kx int, row []float32) {
	l := t.l
	in, o := l.inS, l.outS
	plane := in.H * in.W
	if l.stride == 1 {
		t.row1(ci, ky, kx, row)
		return
	}
	j := 0
	for b := range t.batch {
		img := t.x[(ci*t.batch+b)*plane:][:plane]
		for oy := range o.H {
			iy := oy*l.stride - l.pd + ky
			out := row[j : j+o.W]
			j += o.W
			if iy < 0 || iy >= in.H {
				if !t.back {
					clear(out)
				}
				continue
			}
			line := img[iy*in.W : (iy+1)*in.W]
			for ox := range o.W {
				ix := ox*l.stride - l.pd + kx
				if ix < 0 || ix >= in.W {
					if !t.back {
						out[ox] = 0
					}
					continue
				}
				if t.back {
					line[ix] += out[ox]
				} else {
					out[ox] = line[ix]
				}
			}
		}
	}
}

// row1 is row for stride 1, where each output line is one contiguous run
// of an input line: a copy (or an add) between zero borders.
func (t *convTask) row1(ci, ky, kx int, row []float32) {
	l := t.l
	in, o := l.inS, l.outS
	plane := in.H * in.W
	shift := kx - l.pd // ix = ox + shift
	lo, hi := max(0, -shift), min(o.W, in.W-shift)
	j := 0
	for b := range t.batch {
		img := t.x[(ci*t.batch+b)*plane:][:plane]
		for oy := range o.H {
			iy := oy - l.pd + ky
			out := row[j : j+o.W]
			j += o.W
			if iy < 0 || iy >= in.H || lo >= hi {
				if !t.back {
					clear(out)
				}
				continue
			}
			src := img[iy*in.W+lo+shift : iy*in.W+hi+shift]
			if t.back {
				for k, v := range out[lo:hi] {
					src[k] += v
				}
				continue
			}
			clear(out[:lo])
			copy(out[lo:hi], src)
			clear(out[hi:])
		}
	}
}

// maxPool takes the maximum over k×k windows with the given stride (no
// padding), on planar data.
type maxPool struct {
	inS, outS Shape
	k, stride int
	arg       []int32
	task      poolTask
}

func newMaxPool(in Shape, k, stride int) (*maxPool, error) {
	outS, err := poolShape(in, k, stride)
	if err != nil {
		return nil, err
	}
	l := &maxPool{inS: in, outS: outS, k: k, stride: stride}
	l.task.l = l
	return l, nil
}

// poolShape returns the output shape of a max-pool of input in.
func poolShape(in Shape, k, stride int) (Shape, error) {
	if k < 1 || stride < 1 || in.H < k || in.W < k {
		return Shape{}, fmt.Errorf("max-pool %d×%d stride %d does not fit input %v", k, k, stride, in)
	}
	return Shape{(in.H-k)/stride + 1, (in.W-k)/stride + 1, in.C}, nil
}

func (l *maxPool) name() string {
	return fmt.Sprintf("max-pool %d×%d stride %d (%v → %v)", l.k, l.k, l.stride, l.inS, l.outS)
}
func (l *maxPool) out() Shape       { return l.outS }
func (l *maxPool) params() []*Param { return nil }
func (l *maxPool) planar() bool     { return true }

func (l *maxPool) forward(p *pass, x, y []float32) {
	l.arg = growInt32(l.arg, p.batch*l.outS.Size())
	l.task.x, l.task.y, l.task.back = x, y, false
	parallel.For(p.batch*l.inS.C, 8, &l.task)
}

func (l *maxPool) backward(p *pass, x, y, dy, dx []float32) {
	if dx == nil {
		return
	}
	l.task.x, l.task.y, l.task.back = dx, dy, true
	parallel.For(p.batch*l.inS.C, 8, &l.task)
}

// poolTask pools one (channel, example) plane per index.
type poolTask struct {
	l    *maxPool
	x, y []float32 // input and output (forward) or dx and dy (backward)
	back bool
}

func (t *poolTask) Do(lo, hi int) {
	l := t.l
	in, o := l.inS, l.outS
	ip, op := in.H*in.W, o.H*o.W
	for pl := lo; pl < hi; pl++ {
		xb := t.x[pl*ip : (pl+1)*ip]
		yb := t.y[pl*op : (pl+1)*op]
		ab := l.arg[pl*op : (pl+1)*op]
		if t.back {
			clear(xb)
			for i, a := range ab {
				xb[a] += yb[i]
			}
			continue
		}
		if l.k == 2 && l.stride == 2 {
			pool2(xb, yb, ab, in.W, o.H, o.W)
			continue
		}
		for oy := range o.H {
			for ox := range o.W {
				best := float32(math.Inf(-1))
				arg := int32(-1)
				for ky := range l.k {
					base := (oy*l.stride+ky)*in.W + ox*l.stride
					for kx, v := range xb[base : base+l.k] {
						if v > best || arg < 0 {
							best, arg = v, int32(base+kx)
						}
					}
				}
				yb[oy*o.W+ox], ab[oy*o.W+ox] = best, arg
			}
		}
	}
}

// pool2 is the 2×2, stride-2 max-pool of one plane of width w: the same
// result as the general loop (the first maximum in row-major window order
// wins).
func pool2(x, y []float32, arg []int32, w, oh, ow int) {
	for oy := range oh {
		r0 := (2 * oy) * w
		r1 := r0 + w
		for ox := range ow {
			i := r0 + 2*ox
			best, a := x[i], i
			if v := x[i+1]; v > best {
				best, a = v, i+1
			}
			if v := x[r1+2*ox]; v > best {
				best, a = v, r1+2*ox
			}
			if v := x[r1+2*ox+1]; v > best {
				best, a = v, r1+2*ox+1
			}
			y[oy*ow+ox], arg[oy*ow+ox] = best, int32(a)
		}
	}
}

// flatten turns planar (C, B, H, W) data into example-major rows of C·H·W
// features in (c, h, w) order.
type flatten struct{ s Shape }

func (l *flatten) name() string     { return fmt.Sprintf("flatten %v → %d", l.s, l.s.Size()) }
func (l *flatten) out() Shape       { return Shape{1, 1, l.s.Size()} }
func (l *flatten) params() []*Param { return nil }

func (l *flatten) forward(p *pass, x, y []float32) { l.move(p.batch, x, y, false) }

func (l *flatten) backward(p *pass, x, y, dy, dx []float32) {
	if dx != nil {
		l.move(p.batch, dx, dy, true)
	}
}

// move copies planar x into rows y, or back when back is true.
func (l *flatten) move(batch int, planar, rows []float32, back bool) {
	hw := l.s.H * l.s.W
	f := l.s.Size()
	for c := range l.s.C {
		for b := range batch {
			src := planar[(c*batch+b)*hw:][:hw]
			dst := rows[b*f+c*hw:][:hw]
			if back {
				copy(src, dst)
			} else {
				copy(dst, src)
			}
		}
	}
}
