// Package svgd computes the direction of (gradient-free) Stein variational
// gradient descent for n particles in R^d, as one matrix-level operation
// shared by the GF-SVGD sampler (float64 particles) and the ensembles of
// binarized networks (float32 latent weights):
//
//	Δx_i = Σ_j w_j [k(x_j, x_i) s_j + ∇_{x_j} k(x_j, x_i)],
//
// where s_j is the score of the surrogate at x_j, w_j the normalised
// importance weight of particle j (Weights turns log ρ/p_c into them, self-
// normalised or by rank), and k an RBF kernel whose bandwidth follows a
// kernel.Bandwidth rule (or one Gaussian kernel per coordinate).
//
// A Direction is a workspace for fixed n and d: it allocates once and its
// Compute allocates nothing. The arithmetic runs in float64 whatever the
// particles' type, in a fixed order, so results are bit-identical on any
// number of cores.
package svgd
