// Package gwg implements Gibbs-with-Gradients (Grathwohl et al. 2021) for
// any discrete model (its proposal gradient, model.NewProposalTracker: a
// ProposalGradient, a relaxation's gradient or the log conditionals): n
// independent Metropolis–Hastings
// chains whose single-site proposals are drawn in proportion to
// exp(Δ̃/2), where Δ̃ estimates the change of log p* of every move from a
// gradient of the model at the current one-hot memberships.
//
// A move sets variable i to another state s'. With g the model's proposal
// gradient at the current state z (model.NewProposalTracker),
// Δ̃(i, s') = g[i, s'] − g[i, z_i]. The papers take g as the gradient of an
// energy that is linear in each variable's one-hot block (for categorical
// logits θ, Σ_i x_iᵀθ_i; for a Potts model Σ x_iᵀWx_j + bᵀx). The
// categorical model and the factor graph give that gradient themselves
// (model.ProposalGradient: the log-multilinear energy
// Σ_f Σ_a log φ_f(a) Π m, whose block of variable i is log p*(z with
// z_i = s) up to a constant), so there Δ̃ is the exact change; their
// relaxations, multilinear extensions of the probabilities, have ratios
// p*(z')/p*(z) for gradients, and proposals from those barely move the
// chains where log-ratios are large (issue 28). The other models use
// their relaxation's gradient: the Ising model's relaxation is linear in
// each spin, so Δ̃ is exact there too; the RBM's (its free energy at soft
// spins) gives the first-order estimate of the paper. Where Δ̃ is exact the
// proposal is a locally balanced one (Zanella 2020). A move into a state of
// probability zero has Δ̃ = −Inf and is never proposed. The acceptance
// probability uses the exact change of log p* (model.Delta) and the
// reverse proposal at the proposed state, so the chains leave p* invariant
// whatever the estimate's quality; a chain that starts in a state of
// probability zero accepts any move out of it.
//
// Nothing is recomputed for the whole state per proposal unless the model
// makes it necessary. Each chain keeps a model.GradientTracker of the
// proposal gradient (the model's own where it has one: Ising, RBM,
// categorical, factor graph),
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
// changed block from scratch (their gradients equal a fresh RelaxedLogProb
// or ProposalGrad bit for bit), and the RBM's tracker recomputes its in-place preactivations every d
// accepted moves. ref moves to the largest logit when a logit would exceed
// it by more than 300 or the total falls below 1e-100, so that no weight
// overflows and none that matters underflows, however large the parameters.
// The draws are those of recomputing everything per proposal except when a
// uniform falls within rounding (about 1e-15) of a boundary.
//
// A Step is one sweep: d proposals per chain (single-site moves; a move may
// be rejected), so that a step costs about as many moves as one Gibbs
// sweep. Stats reports acceptance_rate, the fraction of all proposals so
// far that were accepted (d per chain and step). Chains run in parallel,
// each with its own random stream, so results do not depend on the number
// of cores.
//
// # Multi-flip proposals
//
// The package also registers "gwg-multi" (NewMulti): Gibbs-with-Gradients
// whose proposals move several variables at once, K drawn with
// replacement from the variables' move weights, as the DISCS benchmark's
// multi-flip and adaptive GWG do for binary variables, extended to
// variables of more states; K is fixed or adapted during the warm-up to
// an acceptance rate. It recomputes the weights of every variable at each
// proposed state instead of keeping sum trees. See MultiSampler.
package gwg
