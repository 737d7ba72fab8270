package bnn

import (
	"math/rand/v2"
	"testing"
)

// scratch counts the 4-byte values a network's passes left in its buffers.
func scratch(n *Net) int {
	s := 0
	for i := range n.acts {
		s += cap(n.acts[i]) + cap(n.grads[i])
	}
	for _, l := range n.layers {
		switch t := l.(type) {
		case *conv:
			s += cap(t.colT)
		case *batchNorm:
			s += cap(t.xhat)
		case *maxPool:
			s += cap(t.arg)
		case *dropout:
			s += cap(t.mask)
		}
	}
	return s
}

// TestMeasureLayers: a dry builder counts what every kind of layer leaves
// in its buffers (smallNet has them all, dropout and a strided, padded
// convolution among them).
func TestMeasureLayers(t *testing.T) {
	n := smallNet(t)
	in := n.Input()
	d := &builder{n: &Net{}, cur: in, dry: true}
	smallLayers(d)
	if d.err != nil {
		t.Fatal(d.err)
	}
	f := d.fp
	f.PerExample += 2 * in.Size()
	const batch = 4
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, batch*in.Size())
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	logits := n.Forward(x, batch, PassOptions{Mode: Relaxed, Train: true, Rand: r})
	n.Backward(make([]float32, len(logits)))
	if got := scratch(n); got != batch*f.PerExample {
		t.Errorf("passes of %d examples hold %d values; the dry builder counts %d per example", batch, got, f.PerExample)
	}
	params := 0
	for _, p := range n.Params() {
		params += len(p.W)
	}
	if f.Params != params || f.Binary != n.NumBinary() {
		t.Errorf("dry builder %+v; the network has %d parameters, %d binary", f, params, n.NumBinary())
	}
}

// TestMeasure: Measure counts what New builds, and what a training pass
// and an evaluation pass leave in the network's buffers, per example.
func TestMeasure(t *testing.T) {
	for _, c := range []struct {
		arch string
		in   Shape
	}{{"mlp", Shape{28, 28, 1}}, {"cnn", Shape{28, 28, 1}}, {"alexnet", Shape{32, 32, 3}}, {"mlp", Shape{5, 3, 2}}} {
		f, err := Measure(c.arch, c.in, 10)
		if err != nil {
			t.Fatal(err)
		}
		n, err := New(c.arch, c.in, 10)
		if err != nil {
			t.Fatal(err)
		}
		params, arrays := 0, len(n.State().Params)+2*len(n.bns)
		for _, p := range n.Params() {
			params += len(p.W)
		}
		largest := 0
		for _, p := range n.Params() {
			if p.Binary {
				largest = max(largest, len(p.W))
			}
		}
		channels := 0
		for _, bn := range n.bns {
			channels += bn.s.C
		}
		if f.Params != params || f.Binary != n.NumBinary() || f.Channels != channels || f.Arrays != arrays || f.LargestBinary != largest {
			t.Errorf("%s on %v: Measure %+v; the network has %d parameters, %d binary (largest array %d), %d channels, %d arrays",
				c.arch, c.in, f, params, n.NumBinary(), largest, channels, arrays)
		}
		if c.arch == "alexnet" {
			continue // its passes take seconds
		}
		const batch = 3
		r := rand.New(rand.NewPCG(1, 2))
		n.Init(r)
		x := make([]float32, batch*c.in.Size())
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		logits := n.Forward(x, batch, PassOptions{Mode: STE, Train: true, Rand: r})
		n.Backward(make([]float32, len(logits)))
		n.Forward(x, batch, PassOptions{Mode: STE})
		if got := scratch(n); got != batch*f.PerExample {
			t.Errorf("%s on %v: passes of %d examples hold %d values; Measure says %d per example", c.arch, c.in, batch, got, f.PerExample)
		}
	}
}
