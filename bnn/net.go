package bnn

import (
	"fmt"
	"math/rand/v2"
)

// Shape is the shape of one example's activations: height, width and
// channels (a flat vector is 1×1×C).
type Shape struct{ H, W, C int }

// Size returns H·W·C.
func (s Shape) Size() int { return s.H * s.W * s.C }

func (s Shape) String() string { return fmt.Sprintf("%d×%d×%d", s.H, s.W, s.C) }

// Param is a trainable array: its values and the gradient of the last
// backward pass.
type Param struct {
	Name string
	// W holds the values: latent real weights when Binary.
	W []float32
	// G holds ∂loss/∂W after Backward (overwritten, not accumulated).
	G []float32
	// Binary says the forward pass uses sign(W) (or its relaxation). Binary
	// parameters form the discrete weight vector of the network.
	Binary bool
}

// pass carries the settings of one forward or backward pass.
type pass struct {
	batch int
	mode  Mode
	train bool    // batch statistics and dropout
	beta  float32 // SignSwish slope
	tau   float32 // temperature of the relaxation
	r     *rand.Rand
	// reuse makes dropout apply the masks of its last training pass.
	reuse bool
	// noStats leaves the running statistics of batch normalisation alone.
	noStats bool
}

// layer is one stage of a network. Buffers are sized for the batch of the
// pass by the network.
type layer interface {
	// name describes the layer in one line.
	name() string
	out() Shape
	// forward computes y from x.
	forward(p *pass, x, y []float32)
	// backward computes parameter gradients and, when dx is not nil, dx
	// from dy, with x and y the forward pass's input and output.
	backward(p *pass, x, y, dy, dx []float32)
	params() []*Param
}
