// Package sw implements Swendsen–Wang cluster updates for ferromagnetic
// Ising models with fields, log p*(z) = Σ_{(i,j)} J_ij z_i z_j + Σ_i h_i z_i
// with every J_ij ≥ 0 and z ∈ {−1, +1} (state 0 is −1, state 1 is +1).
//
// The update samples the Edwards–Sokal joint distribution of spins and
// bonds. Writing exp(J z_i z_j) = e^J·[(1 − p) + p·1{z_i = z_j}] with
// p = 1 − e^{−2J} (aligned spins: 1; opposite spins: e^{−2J}), the joint
// p(z, b) ∝ Π_i e^{h_i z_i} Π_{(i,j)} [(1 − p_ij)·1{b_ij = 0} +
// p_ij·1{b_ij = 1, z_i = z_j}] has p* as its spin marginal. One iteration
// draws from both of its conditionals in turn:
//
//   - bonds given spins: every edge whose spins agree is bonded with
//     probability p_ij = 1 − exp(−2 J_ij), independently; the other edges
//     are not;
//   - spins given bonds: the bonds join the sites into clusters (found by
//     union–find), each cluster C must have one spin s, and its weight is
//     Π_{i∈C} e^{h_i s} = e^{s·h_C} with h_C = Σ_{i∈C} h_i, so
//     p(+1)/p(−1) = e^{2h_C}: the cluster becomes +1 with probability
//     σ(2h_C) = 1/(1 + e^{−2h_C}), independently of the other clusters.
//
// Both steps leave the joint distribution invariant, so the chain leaves
// p* invariant; it is irreducible because a site without bonds (which
// every site may be, with positive probability) is redrawn from its field.
// Near and below the critical temperature the clusters span the lattice
// and whole domains flip at once, where single-site Gibbs needs a time
// exponential in the domain wall's cost. Strong fields slow it down: a
// large cluster against the field rarely flips.
//
// Ferromagnetic Potts models, log p*(z) = Σ J_ij·[z_i = z_j] + Σ_i h_i(z_i)
// with every J_ij ≥ 0 and q states, take the same two steps
// (PottsKernel): exp(J·[z_i = z_j]) = e^J·[(1 − p) + p·[z_i = z_j]] with
// p = 1 − e^{−J}, so equal neighbours are bonded with probability
// 1 − exp(−J_ij), and a cluster C takes state s with probability
// ∝ exp(Σ_{i∈C} h_i(s)) (uniformly among the q states without fields).
//
// New refuses any other model (neither an *ising.Ising nor a
// *potts.Potts, or a coupling < 0).
//
// Evaluations count one per site and iteration, as a Gibbs sweep is
// counted: an iteration costs O(d + |E|) like a sweep (one look at every
// edge, one union–find pass over the sites). Stats report
// mean_cluster_size (d over the number of clusters) and
// largest_cluster_fraction (the largest cluster's size over d), each
// averaged over the chains at the last iteration.
//
// Chain c draws from p.Key.ForIndex(rng.Sample, c), and the chains run in
// parallel with results that do not depend on the number of cores.
package sw
