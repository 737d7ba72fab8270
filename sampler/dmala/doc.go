// Package dmala implements the discrete Metropolis-adjusted Langevin
// algorithm (DMALA) of Zhang, Liu and Liu, "A Langevin-like sampler for
// discrete distributions" (ICML 2022), for models with a relaxed form: n
// independent Metropolis–Hastings chains whose proposals move every
// variable at once.
//
// # Proposal
//
// Let g be the gradient of the model's relaxed log-probability with respect
// to the one-hot memberships at the current state z (model.Relaxed). The
// proposal factorises over the variables; variable i moves to state s with
// probability
//
//	q_i(s | z) ∝ exp( ½ (g[i, s] − g[i, z_i]) − [s ≠ z_i] / α ),
//
// independently of the others. This is the paper's Langevin-like proposal
// exp(½ ∇f(x)ᵀ(x' − x) − ‖x' − x‖² / (2α)) written in one-hot coding:
// the first-order term is the gradient's inner product with the change of
// memberships, and moving a one-hot vector to another state changes it by a
// vector of squared length 2, so the distance term is 2/(2α) = 1/α for a
// move and 0 for staying. For a binary variable this is the paper's
// proposal in {0, 1} coding with its step size α_paper = α/2 (there
// ‖x' − x‖² = 1, here 2, and the gradient terms agree). Variables may have
// any number of states (model.Offsets gives the layout); for ±1 variables
// the proposal flips spin i with probability σ(½(g[i, −z_i] − g[i, z_i]) −
// 1/α).
//
// The proposal is accepted with probability
//
//	min(1, p*(z') q(z | z') / (p*(z) q(z' | z))),
//
// where log p*(z') − log p*(z) comes from model.LogProb of both states (a
// proposal into a state of probability zero is rejected) and q(z | z') uses
// the gradient at the proposed state, so the chains leave p* invariant
// whatever the step size and the quality of the relaxation.
//
// # Cost
//
// A Step is one proposal per chain: one relaxed log-probability with its
// gradient (at the proposed state) and one log p* evaluation, each about as
// costly as one sweep of single-site Gibbs updates on a sparse model, so a
// Step costs about as much as one Gibbs sweep (a Gibbs-with-Gradients sweep
// makes d proposals, each with a full gradient, and costs about d times
// more). The forward proposal of the current state is kept between steps,
// so a rejection costs nothing more.
//
// Chains run in parallel, each with its own random stream, so results do
// not depend on the number of cores.
package dmala
