// Package dmala implements the discrete Metropolis-adjusted Langevin
// algorithm (DMALA) of Zhang, Liu and Liu, "A Langevin-like sampler for
// discrete distributions" (ICML 2022), for models with a relaxed form: n
// independent Metropolis–Hastings chains whose proposals move every
// variable at once.
//
// # Proposal
//
// Let g be the model's proposal gradient at the one-hot memberships of the
// current state z (model.ProposalGrads): for the categorical model and the
// factor graph the gradient of their log-multilinear energy
// Σ_f Σ_a log φ_f(a) Π m, linear in each variable's memberships, whose
// block of variable i is log p*(z with z_i = s) up to a constant
// (model.ProposalGradient), as in the paper, where f is linear in each
// one-hot block; for the Ising model and the RBM the gradient of their
// relaxed log-probability (model.Relaxed; the Ising model's is linear in
// each spin). The multilinear relaxations of the categorical model and
// the factor graph have ratios of probabilities for gradients, with which
// the proposals were far off where log-ratios are large (issue 28: an
// acceptance rate of 0.0005 on 2000 categorical variables of 4 states).
// The proposal factorises over the variables; variable i moves to state s
// with probability
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
// whatever the step size and the quality of the gradient. A state that
// the gradient marks impossible given the others (g[i, s] = −Inf, a zero
// of p*) has proposal probability 0; a chain that starts in a state of
// probability zero accepts any proposal of positive probability.
//
// # Cost
//
// A Step is one proposal per chain, which moves any number of variables at
// once and is accepted or rejected as a whole; Stats reports
// acceptance_rate, the fraction of those proposals accepted (one per chain
// and step). A step costs one proposal gradient (at the proposed state) and
// one log p* evaluation, each about as costly as one sweep of single-site
// Gibbs updates on a sparse model, so a Step costs about as much as one
// Gibbs sweep (a Gibbs-with-Gradients sweep makes d proposals, each with a
// full gradient, and costs about d times more). The forward proposal of the
// current state is kept between steps, so a rejection costs nothing more.
//
// The acceptance ratio is a product over the variables that move of the
// ratios of their proposals' normalisers at z and z', so the acceptance
// rate falls as more variables move: on 200 categorical variables of 4
// states (logits N(0, 1.5²)) 4 chains of 250 steps estimate the state
// probabilities with about 6× the RMSE of as many exact draws at the
// default step size (about 3.7× at α = 0.4–0.5, the best), where
// Gibbs-with-Gradients' 250 sweeps reach 1.2× (TestMultiStateTargets).
//
// Chains run in parallel, each with its own random stream, so results do
// not depend on the number of cores.
package dmala
