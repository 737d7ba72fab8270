package bnn

import "fmt"

// BNEpsilon is the ε that batch normalisation adds to variances:
// y = γ·(x − mean)/sqrt(var + ε) + β in evaluation.
const BNEpsilon = bnEps

// LayerInfo describes one layer of a network for export: its kind, its
// geometry and its arrays (views of the network's values, not copies).
type LayerInfo struct {
	// Index numbers the layers from 1, as Describe does.
	Index int
	// Kind is "conv", "max-pool", "batch-norm", "sign", "flatten", "dense"
	// or "dropout".
	Kind string
	// Description is Describe's line for the layer.
	Description string
	In, Out     Shape
	// Kernel, Stride and Pad are a convolution's or a max-pool's (square
	// kernels; no padding for max-pools), Rate a dropout's.
	Kernel, Stride, Pad int
	Rate                float64
	// Arrays are the layer's parameters and statistics in the layouts
	// LayerArray describes.
	Arrays []LayerArray
}

// LayerArray is one array of a layer, row-major (C order):
//
//   - a convolution's "weight": shape (out channels, in channels, k, k),
//     the latent real weights; the forward pass uses their signs
//     (sign(0) = +1), y[o] = Σ_{c,ky,kx} sign(W[o,c,ky,kx])·x[c, y·s−p+ky,
//     x·s−p+kx];
//   - a dense layer's "weight": shape (in, out), latent, y = x·sign(W), x
//     flattened in (c, h, w) order after a convolution and in the input's
//     (h, w, c) order otherwise;
//   - a batch normalisation's "gamma" and "beta" (float32) and
//     "running_mean" and "running_var" (float64), each one value per
//     channel: in evaluation y = beta + gamma·(x − running_mean)/
//     sqrt(running_var + BNEpsilon).
type LayerArray struct {
	Name  string
	Shape []int
	// F32 holds float32 values (weights, gamma, beta), F64 float64 ones
	// (running statistics); the other is nil.
	F32 []float32
	F64 []float64
	// Binary marks latent weights whose signs the forward pass uses.
	Binary bool
}

// Layers describes every layer of the network in order.
func (n *Net) Layers() []LayerInfo {
	in := n.in
	out := make([]LayerInfo, 0, len(n.layers))
	for i, l := range n.layers {
		li := LayerInfo{Index: i + 1, Description: l.name(), In: in, Out: l.out()}
		switch t := l.(type) {
		case *conv:
			li.Kind, li.Kernel, li.Stride, li.Pad = "conv", t.k, t.stride, t.pd
			li.Arrays = []LayerArray{{Name: "weight", Shape: []int{t.outS.C, t.inS.C, t.k, t.k}, F32: t.w.W, Binary: t.w.Binary}}
		case *maxPool:
			li.Kind, li.Kernel, li.Stride = "max-pool", t.k, t.stride
		case *batchNorm:
			c := t.s.C
			li.Kind = "batch-norm"
			li.Arrays = []LayerArray{
				{Name: "gamma", Shape: []int{c}, F32: t.gamma.W},
				{Name: "beta", Shape: []int{c}, F32: t.beta.W},
				{Name: "running_mean", Shape: []int{c}, F64: t.mean},
				{Name: "running_var", Shape: []int{c}, F64: t.vr},
			}
		case *signAct:
			li.Kind = "sign"
		case *flatten:
			li.Kind = "flatten"
		case *dense:
			li.Kind = "dense"
			li.Arrays = []LayerArray{{Name: "weight", Shape: []int{t.in, t.outN}, F32: t.w.W, Binary: t.w.Binary}}
		case *dropout:
			li.Kind, li.Rate = "dropout", float64(t.rate)
		default:
			panic(fmt.Sprintf("bnn: no description of layer %T", l))
		}
		out = append(out, li)
		in = l.out()
	}
	return out
}
