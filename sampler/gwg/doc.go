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
// Nothing is recomputed for the whole state per proposal unless the model
// makes it necessary. Each chain keeps a model.GradientTracker (the
// model's own where it has one: Ising, RBM, categorical, factor graph),
// the logits Δ̃/2 of every move, their weights exp(Δ̃/2 − ref) relative to
// a reference ref, and a sum tree over the variables' weights. A proposal
// draws a variable by descending the tree (O(log d)) and a state within its
// block; the tracker's Try gives the gradient at the proposed state and
// names the variables whose blocks changed (the flipped variable and its
// neighbours in a pairwise model; every variable in an RBM, whose tanh of
// every hidden unit changes); only those logits, weights and tree paths are
// updated, which gives the reverse proposal's normaliser; a rejection
// recomputes them from the tracker's current gradient. For the Ising grid a
// proposal costs O(degree² + degree·log d); for an RBM with M hidden units
// O(dM) for the gradient plus d exponentials, as the reverse move's
// normaliser needs every entry of the gradient at the proposed state.
//
// The tree's nodes are sums of their children, so the totals are functions
// of the weights, not of the order of updates, and carry no accumulated
// rounding; the Ising, categorical and factor-graph trackers recompute every
// changed block from scratch (their gradients equal RelaxedLogProb's bit for
// bit), and the RBM's tracker recomputes its in-place preactivations every d
// accepted moves. ref moves to the largest logit when a logit would exceed
// it by more than 300 or the total falls below 1e-100, so that no weight
// overflows and none that matters underflows, however large the parameters.
// The draws are those of recomputing everything per proposal except when a
// uniform falls within rounding (about 1e-15) of a boundary.
//
// A Step is one sweep: d proposals per chain, so that a step costs about as
// many moves as one Gibbs sweep. Chains run in parallel, each with its own
// random stream, so results do not depend on the number of cores.
package gwg
