// Package gwg implements Gibbs-with-Gradients (Grathwohl et al. 2021) for
// discrete models with a relaxed form: n independent Metropolis–Hastings
// chains whose single-site proposals are drawn in proportion to
// exp(Δ̃/2), where Δ̃ estimates the change of log p* of every move from the
// gradient of the model's relaxation at the current one-hot memberships.
//
// A move sets variable i to another state s'. With g the gradient of the
// relaxed log-probability with respect to the memberships at the current
// state z, Δ̃(i, s') = g[i, s'] − g[i, z_i]. The Ising model's relaxation is
// linear in each variable's memberships, so there Δ̃ is the exact change and
// the proposal is a locally balanced one (Zanella 2020); for the other models
// it is a first-order estimate. The acceptance probability uses the exact change of log p* (model.Delta) and
// the reverse proposal at the proposed state, so the chains leave p*
// invariant whatever the estimate's quality.
//
// A Step is one sweep: d proposals per chain, so that a step costs about as
// many moves as one Gibbs sweep. Chains run in parallel, each with its own
// random stream, so results do not depend on the number of cores.
package gwg
