// Package bnn implements binarized neural networks in float32: latent real
// weights binarized by sign in the forward pass, ±1 activations, and the
// layers the paper's experiments need (dense, 2-D convolution, max-pool,
// batch normalisation, dropout, softmax cross-entropy).
//
// A network runs in one of three modes, chosen per pass:
//
//   - STE: weights and activations are sign(·) (with sign(0) = +1) in the
//     forward pass; the backward pass uses the straight-through estimator of
//     Hubara et al. (2016), d sign(x)/dx ≈ 1{|x| ≤ 1}.
//   - SignSwish: the same forward pass; the backward pass uses the derivative
//     of the SignSwish function of BNN+ (Darabi et al. 2018) with slope β.
//   - Relaxed: sign is replaced by σ(x/τ) with σ(x) = 2/(1+e^(−x)) − 1 in
//     weights and activations — the paper's relaxation at temperature τ = 1
//     — and the backward pass is the exact gradient of that smooth network
//     (checked against finite differences).
//
// Every layer with weights (dense, convolution) has binary weights, including
// the first and the last; the input of the first layer (pixels) and the output
// of the last (logits, after a real-valued batch normalisation) are real.
// Batch normalisation parameters are real and are not part of the discrete
// weight vector.
//
// Dropout draws its masks from PassOptions.Rand in training passes. A pass
// with PassOptions.ReuseMasks applies the masks of the last training pass
// instead, so that two passes over one batch (GF-SVGD's binarized and
// relaxed passes) drop the same units without re-seeding a generator.
//
// Inputs are batch-major NHWC (example, row, column, channel). Inside the
// network, convolutional stages keep their activations planar (channel,
// example, row, column), so that the three products of a convolution run
// along the long example·position axis; dense stages use one row per
// example. Matrix products go through gonum's blas32 on blocks whose
// boundaries depend only on the shapes, run in parallel, so results are
// bit-identical on any number of cores.
package bnn
