// Package pas implements the path auxiliary sampler (PAS) of Sun, Song,
// Dai and Schuurmans, "Path auxiliary proposal for MCMC in discrete
// space" (ICLR 2022), as the DISCS benchmark (google-research/discs,
// discs/samplers/path_auxiliary.py, its PAFSNoReplacement "fast path")
// implements it, for any model (its proposal gradient, model.ProposalGrads:
// a ProposalGradient, a relaxation's gradient or the log conditionals): n
// independent chains
// whose proposals change a path of several variables at once, followed by
// a Metropolis–Hastings test. It registers the method "pas" (New).
//
// # Proposal
//
// Let g be the model's proposal gradient at the one-hot memberships of the
// current state z (model.ProposalGrads, as for DMALA and DLMC): δ_i(s) =
// g[i, s] − g[i, z_i] estimates log p*(z with z_i = s) − log p*(z),
// exactly for models whose proposal gradient is linear in each variable's
// memberships (the categorical model, factor graphs, Ising and Potts
// models), to first order for the RBM. Every single-variable move (i, s),
// s ≠ z_i, gets the weight
//
//	q_z(i, s) ∝ f(e^δ_i(s)),
//
// normalised over all moves, where f is a locally balanced function
// (Settings.Balance: Sqrt, f(t) = √t, DISCS's default, or Ratio,
// f(t) = t/(1+t)); a variable's weight is the sum of its moves' weights,
// w_i = Σ_s q_z(i, s). A proposal of length L draws L distinct variables
// i_1, …, i_L in order without replacement, each with probability
// proportional to its weight among the variables not yet drawn, and gives
// each its new state s_k with probability q_z(i_k, s_k)/w_{i_k}; all the
// weights are those at z (the "fast path": they are not recomputed along
// the path, which costs one gradient per proposal rather than one per
// variable). The path's probability is
//
//	Q(z → z') = Π_k q_z(i_k, s_k) / (1 − Σ_{j<k} w_{i_j}).
//
// Its reverse from the proposed state z' draws the same variables in the
// reverse order, i_L, …, i_1, from the weights at z', each returning to
// its state in z; the proposal is accepted with probability
//
//	min(1, p*(z') Q(z' → z) / (p*(z) Q(z → z'))).
//
// The order of the path is an auxiliary variable that its reversal maps
// one-to-one onto the orders of the reverse paths, so the kernel on
// states satisfies detailed balance with respect to p* whatever the
// quality of the gradient (TestDetailedBalance checks it exactly on
// enumerated kernels, to 1e-12). The variables are drawn from a sum tree
// of their weights, in O(log d) each, and the sums 1 − Σ_{j<k} w_{i_j} are
// the tree's totals over the variables that remain, sums of positive
// terms free of cancellation. A move that the gradient marks impossible
// (g[i, s] = −Inf), or whose weight underflows (f(e^δ) more than e^745
// below the largest), has weight zero and is never drawn; a variable
// whose every move has weight zero never moves. With fewer than L
// variables of positive weight at z there is no path: the chain stays, and
// the proposal counts as rejected. A proposal into a state of probability
// zero is rejected, and a chain that starts in one accepts any proposal
// of positive probability. DISCS leaves the new states' probabilities out
// of the forward path's probability for many-state variables when it
// does not adapt (its default configuration adapts, where it includes
// them); this package includes them always.
//
// # Path length
//
// The length L of each proposal is drawn anew, for each chain and step,
// uniformly from 1, …, min(2R − 1, D), where R is the mean path length
// (Settings.PathLength; the mean is R unless D clips the range) and D the
// number of variables of more than one state; R itself is at most D. This
// is how the paper's own code draws its path lengths; DISCS instead uses
// L = R, the nearest integer to its adapted r, for every proposal. A
// fixed length would make the chains reducible: a path of exactly L
// binary variables changes the parity of the number of ones by L, so with
// an even L the chain never leaves the parity class of its start (it
// samples p* conditioned on that class: 2000 chains started at all zeros
// on the 3×3 Ising grid of samplertest.SmallModels had, after 400 steps of
// L = 2, a marginal 5.3 standard errors off), and with L = D every
// variable changes at every step. With L drawn independently of the
// state, the kernel is a mixture of Metropolis–Hastings kernels that each
// satisfy detailed balance, so it does too; and since it makes paths of
// one variable with positive probability, it is irreducible wherever the
// kernel of single-variable paths (R = 1) is
// (TestFixedEvenLengthIsReducible shows both on an enumerated kernel).
// With R = 1 every path is one variable, as at DISCS's starting point
// (num_flips = 1), and with Sqrt the proposal is that of
// Gibbs-with-Gradients.
//
// # Cost
//
// A Step is one proposal per chain; Stats reports acceptance_rate (one
// proposal per chain and step), and with Settings.Adapt also path_length
// (R in use) and tuned_acceptance_rate (the fraction accepted since the
// adaptation ended). A step costs one proposal gradient and one log p* at
// the proposed state, like DMALA's and DLMC's, plus one exponential per
// state of every variable (one per binary variable) to weigh the moves
// there, and O(L log d) to draw and score the paths. BenchmarkStep (100
// chains at the default R, on a loaded machine of 2 cores) took 1.1–1.5 ms
// per step on the 10×10 Ising grid and 2.7–3.4 ms on the d = 100 RBM,
// about what DMALA's steps took in the same run (1.2–1.4 and 3.0–3.6 ms)
// and 0.5–0.8 of DLMC's, without allocating; on 200 categorical variables
// of 4 states 1.2–1.3 ms (DLMC's exact transition matrices: 40 ms). The
// local distribution of the current state is kept between steps, so a
// rejection costs nothing more.
//
// # Path length and its adaptation
//
// The defaults R = 8 (Sqrt) and 12 (Ratio) were chosen on binary models of
// 100 variables (DefaultPathLength). As more variables move, the
// acceptance rate falls on coupled models, and so the best R depends on
// the model. Settings.Adapt adapts R during the run's first Adapt steps to
// an acceptance rate of Settings.TargetAcceptance (0.574 by default,
// DISCS's target) by DISCS's rule
//
//	r ← min(max(r + ā − target, 1), D),   R = the nearest integer to r,
//
// ā the chains' mean acceptance probability min(1, ratio) of the last
// step, starting from r = Settings.PathLength; after the last adaptive
// step r is fixed at its mean over the second half of those steps
// (Polyak averaging, as DMALA and DLMC average their step sizes) and R at
// its nearest integer, and the chains are time-homogeneous
// Metropolis–Hastings chains that leave p* invariant. DISCS instead
// adapts r after every step of the whole run, from r = 1, so that its
// chains never settle on one kernel, and uses the rounded r as the length
// of every path. The rule moves r by less than one variable per step, so
// R can grow by at most about 0.43 per adaptive step: with 250 adaptive
// steps it reaches 37–40 (Sqrt) and 49–51 (Ratio) on 300 independent
// categorical variables of 4 states, where PAS then estimates the state
// probabilities with 4.0–4.2 and 3.3–3.5 times the RMSE of exact
// independent draws (TestAdaptedOnMultiStateTargets), about as well as
// DMALA.
//
// Chains run in parallel, each with its own random stream, so results do
// not depend on the number of cores.
package pas
