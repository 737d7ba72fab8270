// Package gfsvgd implements gradient-free SVGD on the continuous
// parameterization of a discrete model (the paper's Algorithm 1).
//
// n particles x_j ∈ R^d move along
//
//	Δx_i = Σ_j w_j [∇log ρ(x_j) k(x_j, x_i) + ∇_{x_j} k(x_j, x_i)]
//
// where ρ is a differentiable surrogate of p_c(x) ∝ p0(x) p*(Γ(x)), the
// weights w_j ∝ ρ(x_j)/p_c(x_j) are computed in log space and normalised to
// sum to one, and k is the RBF kernel with a median-heuristic bandwidth. The
// discrete samples are z_i = Γ(x_i).
//
// # Zero-probability states
//
// Models may give states probability zero. Two mechanisms keep GF-SVGD
// defined there, and neither ever produces a NaN:
//
//   - States that are impossible whatever the other variables are (unary
//     zeros, reported through model.Support) get no bin in the transform,
//     so no particle can reach them.
//   - For joint zeros, a move that would take a particle from a possible
//     state into an impossible one is undone: the particle keeps its
//     previous position for that iteration and forgets its Adam momentum
//     (Diagnostics.Rejected counts these). A particle that starts in an
//     impossible state has weight ρ/p_c = +Inf; following the limit
//     p* → 0, the impossible particles share all the weight equally (under
//     either weighting) until none is left, moving along the surrogate's
//     score while the others are pushed away from them. Once in the support
//     a particle stays there.
//
// Where ρ(x_j) = 0 the weight is 0, whatever p_c is. Step returns an error
// if the model or the surrogate returns NaN (or +Inf), if the surrogate's
// score is not finite at a particle that carries weight, if the surrogate
// is zero at every particle, or if a particle leaves the finite reals; the
// sampler then keeps the error and returns it from every later Step.
// Diagnostics.Impossible and Result.Impossible count the particles in
// impossible states.
//
// The rank weights of the paper's BNN appendix are a heuristic: they are not
// consistent importance weights, and on small models they bias the samples
// (on one spin with field 0.5, E[z] comes out near 0.9 instead of 0.46).
//
// # Settings and presets
//
// Settings are valid at their zero value; Preset returns named settings so
// that experiments can name the settings they use. The "paper" preset holds
// the paper's choices as written, except its step size (see Preset).
package gfsvgd
