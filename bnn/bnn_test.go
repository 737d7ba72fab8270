package bnn

import (
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
)

// smallLayers adds smallNet's layers to b.
func smallLayers(b *builder) {
	b.conv(4, 3, 2, 1) // 4×4×4, padded and strided
	b.bn()
	b.sign()
	b.conv(3, 3, 1, 1) // 4×4×3: its input gradient goes through col2im
	b.pool(2, 2)       // 2×2×3
	b.bn()
	b.sign()
	b.dropout(0.3)
	b.dense(5)
	b.bn()
	b.sign()
	b.dense(3)
	b.bn()
}

// smallNet has every layer type: padded and strided convolutions, max-pool,
// batch normalisation on planar data and on rows, sign, flatten, dropout and
// dense layers, with two input channels.
func smallNet(t *testing.T) *Net {
	t.Helper()
	in := Shape{7, 7, 2}
	b := &builder{n: &Net{arch: "test", in: in, classes: 3}, cur: in}
	smallLayers(b)
	if b.err != nil {
		t.Fatal(b.err)
	}
	n := b.n
	n.Init(rand.New(rand.NewPCG(1, 2)))
	// Latent weights of order one, so that σ is not nearly linear, and
	// non-trivial batch-normalisation parameters.
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range n.Params() {
		for i := range p.W {
			if p.Binary {
				p.W[i] = float32(r.NormFloat64())
			} else {
				p.W[i] += float32(0.3 * r.NormFloat64())
			}
		}
	}
	return n
}

func randomBatch(batch int, in Shape, classes int, seed uint64) ([]float32, []uint8) {
	r := rand.New(rand.NewPCG(seed, 9))
	x := make([]float32, batch*in.Size())
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	y := make([]uint8, batch)
	for i := range y {
		y[i] = uint8(r.IntN(classes))
	}
	return x, y
}

// TestRelaxedGradient checks the relaxed network's backward pass against
// central finite differences of the log-likelihood, for every parameter of
// every layer type. The pass runs in float32: with step 1e-2 the rounding
// error of a difference quotient of a sum of order 10 is about
// 10·6e-8/1e-2 ≈ 6e-5 and the truncation error O(1e-4·f”'), so the
// tolerance is 2e-3 absolute plus 2% relative. Every pass must drop the same
// units: either each re-seeds its generator, or (reuse) the first pass draws
// the masks from a generator and every later pass applies them with
// ReuseMasks.
func TestRelaxedGradient(t *testing.T) {
	for _, tau := range []float32{1, 0.5} {
		for _, reuse := range []bool{false, true} {
			testRelaxedGradient(t, tau, reuse)
		}
	}
}

func testRelaxedGradient(t *testing.T, tau float32, reuse bool) {
	n := smallNet(t)
	const batch = 6
	x, y := randomBatch(batch, n.Input(), n.Classes(), 5)
	opt := func() PassOptions {
		if reuse {
			return PassOptions{Mode: Relaxed, Temperature: tau, Train: true, KeepStats: true, ReuseMasks: true}
		}
		return PassOptions{Mode: Relaxed, Temperature: tau, Train: true, KeepStats: true, Rand: rand.New(rand.NewPCG(7, 7))}
	}
	if reuse {
		// Draw the masks once, in a binarized pass.
		n.Forward(x, batch, PassOptions{Mode: STE, Train: true, KeepStats: true, Rand: rand.New(rand.NewPCG(8, 8))})
	}
	f := func() float64 {
		return LogLik(n.Forward(x, batch, opt()), y, n.Classes(), 1, nil)
	}
	d := make([]float32, batch*n.Classes())
	LogLik(n.Forward(x, batch, opt()), y, n.Classes(), 1, d)
	n.Backward(d)
	checked := 0
	for _, p := range n.Params() {
		g := append([]float32(nil), p.G...)
		for i := range p.W {
			old := p.W[i]
			const h = 1e-2
			p.W[i] = old + h
			fp := f()
			p.W[i] = old - h
			fm := f()
			p.W[i] = old
			num := (fp - fm) / (2 * h)
			if diff := math.Abs(num - float64(g[i])); diff > 2e-3+0.02*math.Abs(num) {
				t.Errorf("τ = %g, reuse %v: %s[%d]: backward %.6g, finite difference %.6g", tau, reuse, p.Name, i, g[i], num)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d parameters", checked)
	}
}

// dropoutMasks returns copies of the masks of the network's dropout layers.
func dropoutMasks(n *Net) [][]float32 {
	var m [][]float32
	for _, l := range n.layers {
		if d, ok := l.(*dropout); ok {
			m = append(m, append([]float32(nil), d.mask[:d.drawn]...))
		}
	}
	return m
}

// TestReuseMasks checks that a pass with ReuseMasks applies the masks of the
// last training pass, in another mode and with evaluation passes between,
// and does not touch its generator; and that a pass without it draws new
// masks.
func TestReuseMasks(t *testing.T) {
	n := smallNet(t)
	const batch = 8
	x, _ := randomBatch(batch, n.Input(), n.Classes(), 11)
	r := rand.New(rand.NewPCG(1, 1))
	first := append([]float32(nil), n.Forward(x, batch, PassOptions{Mode: STE, Train: true, KeepStats: true, Rand: r})...)
	m1 := dropoutMasks(n)
	if len(m1) != 1 || len(m1[0]) == 0 {
		t.Fatalf("masks %v: the test network has one dropout layer", m1)
	}
	zeros := 0
	for _, v := range m1[0] {
		if v == 0 {
			zeros++
		}
	}
	if zeros == 0 || zeros == len(m1[0]) {
		t.Fatalf("%d of %d units dropped at rate 0.3", zeros, len(m1[0]))
	}
	n.Forward(x, batch, PassOptions{Mode: STE}) // evaluation: no masks
	// A generator the reusing passes must not draw from.
	r = rand.New(rand.NewPCG(1, 1))
	for _, mode := range []Mode{Relaxed, STE} {
		out := n.Forward(x, batch, PassOptions{Mode: mode, Temperature: 0.5, Train: true, KeepStats: true, Rand: r, ReuseMasks: true})
		if !reflect.DeepEqual(dropoutMasks(n), m1) {
			t.Fatalf("%v pass with ReuseMasks changed the masks", mode)
		}
		if mode == STE && !reflect.DeepEqual(out, first) {
			t.Fatal("a binarized pass with ReuseMasks differs from the pass that drew the masks")
		}
	}
	if got, want := r.Uint64(), rand.New(rand.NewPCG(1, 1)).Uint64(); got != want {
		t.Fatal("a pass with ReuseMasks drew from its generator")
	}
	n.Forward(x, batch, PassOptions{Mode: STE, Train: true, KeepStats: true, Rand: rand.New(rand.NewPCG(2, 2))})
	if reflect.DeepEqual(dropoutMasks(n), m1) {
		t.Fatal("a pass without ReuseMasks kept the old masks")
	}
	// Another batch size cannot reuse the masks.
	defer func() {
		if recover() == nil {
			t.Fatal("ReuseMasks with another batch size did not panic")
		}
	}()
	n.Forward(x[:4*n.Input().Size()], 4, PassOptions{Mode: STE, Train: true, ReuseMasks: true})
}

// TestSurrogateDerivatives checks the STE and SignSwish derivatives against
// their definitions.
func TestSurrogateDerivatives(t *testing.T) {
	xs := []float32{-3, -1, -0.5, 0, 0.2, 1, 2.5}
	dy := make([]float32, len(xs))
	for i := range dy {
		dy[i] = 1
	}
	y := make([]float32, len(xs))
	dx := make([]float32, len(xs))
	binarize(STE, 1, xs, y)
	for i, v := range y {
		if v != sign(xs[i]) || (v != 1 && v != -1) {
			t.Fatalf("sign(%v) = %v", xs[i], v)
		}
	}
	binarizeGrad(STE, 0, 1, xs, y, dy, dx)
	for i, v := range xs {
		want := float32(0)
		if v >= -1 && v <= 1 {
			want = 1
		}
		if dx[i] != want {
			t.Errorf("STE derivative at %v = %v, want %v", v, dx[i], want)
		}
	}
	// SignSwish: SS(x) = 2σ(βx)(1 + βx(1 − σ(βx))) − 1 with σ the logistic
	// function; compare with its central difference.
	const beta = 5
	ss := func(x float64) float64 {
		s := 1 / (1 + math.Exp(-beta*x))
		return 2*s*(1+beta*x*(1-s)) - 1
	}
	binarizeGrad(SignSwish, beta, 1, xs, y, dy, dx)
	for i, v := range xs {
		num := (ss(float64(v)+1e-5) - ss(float64(v)-1e-5)) / 2e-5
		if math.Abs(num-float64(dx[i])) > 1e-4*(1+math.Abs(num)) {
			t.Errorf("SignSwish derivative at %v = %v, finite difference %v", v, dx[i], num)
		}
	}
}

func TestArchitectureShapes(t *testing.T) {
	cases := []struct {
		arch    string
		in      Shape
		binary  int
		outSize int
	}{
		{"mlp", Shape{28, 28, 1}, 784*256 + 256*256 + 256*10, 10},
		{"cnn", Shape{28, 28, 1}, 25*16 + 9*16*32 + 800*128 + 128*10, 10},
		{"alexnet", Shape{32, 32, 3}, 25*3*96 + 25*96*256 + 9*256*384 + 9*384*384 + 9*384*256 + 2304*4096 + 4096*4096 + 4096*10, 10},
	}
	for _, c := range cases {
		n, err := New(c.arch, c.in, 10)
		if err != nil {
			t.Fatalf("%s: %v", c.arch, err)
		}
		if got := n.NumBinary(); got != c.binary {
			t.Errorf("%s: %d binary weights, want %d\n%s", c.arch, got, c.binary, n.Describe())
		}
		if c.arch == "alexnet" {
			// The shapes of the adapted network, as documented.
			var shapes []Shape
			for _, l := range n.layers {
				if _, ok := l.(*maxPool); ok {
					shapes = append(shapes, l.out())
				}
			}
			want := []Shape{{15, 15, 96}, {7, 7, 256}, {3, 3, 256}}
			for i := range want {
				if i >= len(shapes) || shapes[i] != want[i] {
					t.Fatalf("alexnet pool outputs %v, want %v", shapes, want)
				}
			}
			// One forward pass of two CIFAR-sized examples.
			n.Init(rand.New(rand.NewPCG(1, 1)))
			x, _ := randomBatch(2, c.in, 10, 1)
			out := n.Forward(x, 2, PassOptions{Mode: STE})
			if len(out) != 20 {
				t.Fatalf("alexnet logits have length %d, want 20", len(out))
			}
			for _, v := range out {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("alexnet logit %v", v)
				}
			}
		}
	}
	if _, err := New("alexnet", Shape{8, 8, 3}, 10); err == nil {
		t.Error("alexnet on 8×8 inputs was accepted")
	}
	if _, err := New("resnet", Shape{28, 28, 1}, 10); err == nil {
		t.Error("unknown architecture accepted")
	}
}

// TestBinaryForward checks that in STE mode the network computes with ±1
// weights and activations: a dense layer's output equals the product with
// sign(W) computed by hand.
func TestBinaryForward(t *testing.T) {
	l := newDense(3, 2, true)
	copy(l.w.W, []float32{0.3, -0.2, 0, -0.9, 0.01, 0.5})
	x := []float32{1, 2, 3}
	y := make([]float32, 2)
	l.forward(&pass{batch: 1, mode: STE}, x, y)
	// sign(W) = [[1, −1], [1, −1], [1, 1]]
	if y[0] != 6 || y[1] != 0 {
		t.Fatalf("binary dense output %v, want [6 0]", y)
	}
	l.forward(&pass{batch: 1, mode: Relaxed, tau: 1}, x, y)
	want0 := float64(sigma(0.3) + 2*sigma(0) + 3*sigma(0.01))
	if math.Abs(float64(y[0])-want0) > 1e-6 {
		t.Fatalf("relaxed dense output %v, want %v", y[0], want0)
	}
}

// TestGemmBlocks compares the blocked parallel product with a naive one for
// every transpose combination and shapes that split by rows and by columns.
func TestGemmBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sh := range [][3]int{{300, 20, 40}, {16, 900, 30}, {7, 5, 3}, {64, 64, 64}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				a := make([]float32, m*k)
				b := make([]float32, k*n)
				c := make([]float32, m*n)
				for i := range a {
					a[i] = float32(r.NormFloat64())
				}
				for i := range b {
					b[i] = float32(r.NormFloat64())
				}
				for i := range c {
					c[i] = float32(r.NormFloat64())
				}
				want := make([]float64, m*n)
				for i := range m {
					for j := range n {
						s := 0.5 * float64(c[i*n+j])
						for l := range k {
							av := a[i*k+l]
							if ta {
								av = a[l*m+i]
							}
							bv := b[l*n+j]
							if tb {
								bv = b[j*k+l]
							}
							s += float64(av) * float64(bv)
						}
						want[i*n+j] = s
					}
				}
				var g gemm
				g.run(ta, tb, m, n, k, a, b, 0.5, c)
				for i := range c {
					if math.Abs(float64(c[i])-want[i]) > 1e-4*float64(k) {
						t.Fatalf("%dx%dx%d ta=%v tb=%v: C[%d] = %v, want %v", m, n, k, ta, tb, i, c[i], want[i])
					}
				}
			}
		}
	}
}

// TestCoresDoNotChangeGradients runs a training pass of the small CNN on a
// batch of 64 MNIST-sized examples with 1 and 2 cores: the products split
// into parallel blocks, and the logits and gradients must be bit-identical.
func TestCoresDoNotChangeGradients(t *testing.T) {
	run := func(procs int) [][]float32 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		n, err := New("cnn", Shape{28, 28, 1}, 10)
		if err != nil {
			t.Fatal(err)
		}
		n.Init(rand.New(rand.NewPCG(3, 3)))
		x, y := randomBatch(64, n.Input(), 10, 4)
		d := make([]float32, 64*10)
		logits := n.Forward(x, 64, PassOptions{Mode: Relaxed, Train: true})
		out := [][]float32{append([]float32(nil), logits...)}
		LogLik(logits, y, 10, 1, d)
		n.Backward(d)
		for _, p := range n.Params() {
			out = append(out, append([]float32(nil), p.G...))
		}
		return out
	}
	a := run(1)
	for _, procs := range []int{2, 16} {
		if !reflect.DeepEqual(a, run(procs)) {
			t.Fatalf("logits or gradients differ between GOMAXPROCS 1 and %d", procs)
		}
	}
}

// TestConvAndPoolAgainstDirect compares the convolution (im2col, both the
// stride-1 fast path and the general one) and max-pooling (the 2×2 fast
// path and the general one, with ties) with direct loops.
func TestConvAndPoolAgainstDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	in := Shape{7, 6, 3}
	const batch = 2
	x := make([]float32, batch*in.Size()) // planar (C, B, H, W)
	for i := range x {
		x[i] = float32(r.IntN(5)) - 2 // small integers: exact sums, many ties
	}
	at := func(c, b, h, w int) float32 {
		if h < 0 || h >= in.H || w < 0 || w >= in.W {
			return 0
		}
		return x[((c*batch+b)*in.H+h)*in.W+w]
	}
	for _, cs := range [][3]int{{3, 1, 1}, {3, 2, 1}, {2, 1, 0}, {5, 1, 2}} {
		k, stride, pad := cs[0], cs[1], cs[2]
		l, err := newConv(in, 4, k, stride, pad, false)
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.w.W {
			l.w.W[i] = float32(r.IntN(3)) - 1
		}
		o := l.out()
		y := make([]float32, batch*o.Size())
		l.forward(&pass{batch: batch, mode: STE}, x, y)
		for co := range o.C {
			for b := range batch {
				for oy := range o.H {
					for ox := range o.W {
						var want float32
						for ci := range in.C {
							for ky := range k {
								for kx := range k {
									w := l.w.W[co*k*k*in.C+(ci*k+ky)*k+kx]
									want += w * at(ci, b, oy*stride-pad+ky, ox*stride-pad+kx)
								}
							}
						}
						if got := y[((co*batch+b)*o.H+oy)*o.W+ox]; got != want {
							t.Fatalf("conv k=%d stride=%d pad=%d: out[%d,%d,%d,%d] = %v, want %v", k, stride, pad, co, b, oy, ox, got, want)
						}
					}
				}
			}
		}
	}
	for _, ps := range [][2]int{{2, 2}, {3, 2}, {2, 1}} {
		k, stride := ps[0], ps[1]
		l, err := newMaxPool(in, k, stride)
		if err != nil {
			t.Fatal(err)
		}
		o := l.out()
		y := make([]float32, batch*o.Size())
		l.forward(&pass{batch: batch}, x, y)
		for pl := range in.C * batch {
			for oy := range o.H {
				for ox := range o.W {
					best, arg := float32(math.Inf(-1)), -1
					for ky := range k {
						for kx := range k {
							idx := (oy*stride+ky)*in.W + ox*stride + kx
							if v := x[pl*in.H*in.W+idx]; v > best {
								best, arg = v, idx
							}
						}
					}
					i := pl*o.Size()/in.C + oy*o.W + ox
					if y[i] != best || int(l.arg[i]) != arg {
						t.Fatalf("pool %d/%d: plane %d (%d,%d) = %v at %d, want %v at %d", k, stride, pl, oy, ox, y[i], l.arg[i], best, arg)
					}
				}
			}
		}
	}
}
