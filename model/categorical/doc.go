// Package categorical implements the product categorical model: d independent
// variables, each with its own state values and probabilities.
//
// It is the paper's simplest target (its appendix samples one variable with
// states {−1, −0.5, 0, 0.5, 1} and probabilities {0.1, 0.2, 0.3, 0.1, 0.3}),
// and a useful check for samplers because every marginal is known in closed
// form. States may have probability zero.
//
// Its relaxation (model.Relaxed) is the multilinear extension
// Σ_i log Σ_s m_is p_i(s), which GF-SVGD's relaxed surrogate uses; its
// gradient at a one-hot state is a ratio of probabilities, a poor guide for
// proposals. Gradient-guided samplers (Gibbs-with-Gradients, DMALA) take
// instead the proposal gradient (model.ProposalGradient) of the energy
// Σ_i Σ_s m_is log p_i(s), linear in each variable's memberships: block i is
// log p_i, so their estimate of a move's change of log p* is exact.
package categorical
