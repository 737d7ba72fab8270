// Package pt implements parallel tempering (replica exchange) for any
// discrete model. Each of n independent chains holds K replicas at inverse
// temperatures 1 = β_0 > β_1 > … > β_{K−1} = β_min ≥ 0; replica k targets
// p*(z)^β_k, so the chain's joint target is the product of the K tempered
// distributions and its β = 1 replica is a chain of p* itself.
//
// One iteration is K + 1 phases: a systematic single-site Gibbs sweep of
// every replica (the conditionals of p*^β, through model.Tracker, or over
// flat arrays of spins for pairwise ±1 models), then one swap phase between
// adjacent temperatures. Swaps follow the non-reversible deterministic
// even/odd scheme (DEO) of Syed, Bouchard-Côté, Deligiannidis and Doucet
// ("Non-reversible parallel tempering", JRSS B 2022): iteration t proposes
// to exchange the states of levels k and k+1 for every k of the parity of
// t, each with probability
//
//	min(1, exp((β_k − β_{k+1})·(log p*(z_{k+1}) − log p*(z_k)))).
//
// Alternating the two sets of pairs makes a state that is accepted upwards
// keep moving upwards, so states cross the ladder in about K iterations
// instead of the K² of a random walk.
//
// Settings.Kernel chooses the move inside each temperature. Site (the
// default) is the sweep above. Block sweeps an RBM differently: each
// replica holds visible and hidden units and targets the tempered joint
// π_β(z, h) ∝ exp(β·(bᵀz + hᵀ(Wᵀz + c))), whose β = 1 marginal in z is
// p*; a sweep draws all hidden units given z, then all visible units given
// h (block Gibbs, exact at every β), and swaps compare the joint log
// density. Its barrier Λ is somewhat larger than that of p*^β (5.2 against
// 4.5 on the d = 100, M = 25 example), its sweeps far cheaper (8× on that
// example). Cluster, for ferromagnetic Ising models (every coupling ≥ 0),
// replaces each sweep by a Swendsen–Wang update of p*^β (package sw's
// kernel with couplings β·J and fields β·h: bonds of probability
// 1 − e^{−2βJ_ij} between aligned spins, each cluster redrawn from its
// field β·h_C): near and below the critical coupling whole domains flip
// in one update, so on a two-mode ferromagnetic grid plain chains cross
// between the modes and the auto ladder (below) chooses them. On a
// ferromagnetic Potts model the update is package sw's Potts kernel (bonds
// of probability 1 − e^{−βJ_ij} between equal neighbours, each cluster's
// state drawn ∝ exp(β Σ_{i∈C} h_i(s))), run on the replica's tracker
// state. Evaluations count d per update, as for a sweep. Best chooses
// Block for RBMs, Cluster for ferromagnetic Ising and Potts models and
// Site otherwise; an explicit
// Block or Cluster on a model it does not apply to is refused.
//
// Zeros of p* are handled without NaN: a state of probability zero has
// probability zero at every β, β = 0 included (p*^0 is 1 on the support and
// 0 off it), so a β = 0 sweep draws each variable uniformly among its states
// that keep p* positive, and a sweep at β = 0 of a model whose support is a
// product (categorical variables, unary zeros) is an exact draw from the
// uniform distribution on the support. A swap that would bring a state of
// probability zero to the higher β is always rejected; one that moves it
// away is always accepted; two such states are exchanged freely.
//
// The ladder is tuned from the measured swap rates during the first Tune
// iterations, in rounds of 2, 4, 8, … iterations (the last round runs to
// Tune): at the end of a round the rejection rates r_k = 1 − (mean
// acceptance probability of pair k, k+1) give the communication barrier
// Λ(β), the piecewise linear interpolation in β of their cumulative sums
// from β_min, and the interior β's are moved so that Λ is split into K − 1
// equal parts (Syed et al.'s adaptation; equal rejection rates maximise the
// rate of round trips between β_min and 1). Afterwards the ladder stays
// fixed, so the iterations after tuning form a valid Markov chain for the
// product target.
//
// Settings.Auto sizes the ladder from the target. A pilot runs the Ladder
// temperatures (8) for Tune iterations (200) together with a shadow replica
// in every chain: a plain chain at β = 1 that never swaps, reset a quarter
// of the way to the state of one of its chain's replicas (chain 0's at
// β = 1, the others' at levels spread up to the hottest, so that the plain
// chains start overdispersed) and then given a quarter to settle, so that
// the second half shows its mixing, not its burn-in. Over that second half it compares the cost of an
// effective draw at β = 1, in sweeps, of the plain chains (their length over
// the bulk ESS of log p* and of the magnetisation Σ_i z_i, and the
// variables' mean integrated autocorrelation L·B_i/W_i from the spread
// between and within chains) with that of the tempered chains (K times the
// same for their β = 1 replicas). Plain chains are refused when their mean
// or variance of log p* or of the magnetisation differs from the tempered
// chains' by more than 4 standard errors (chains that sit in one of two
// modes), or when they cost more; they are not yet vouched for while their
// R̂ exceeds 1.05 or they have fewer than 10 effective draws each, and then
// the pilot doubles, up to 4·Tune iterations; a pilot still unsure then
// refuses them. A variable whose plain and tempered means differ by more
// than the normal quantile that d agreeing variables exceed with probability
// 10⁻³ (at least 4; standard errors from the variables' mean autocorrelation
// times) also refuses them: modes that differ in a few units only; and so
// does a variable that the plain chains never moved from a value that the
// tempered chains left often enough that all the plain chains' effective
// draws missing it has probability below 10⁻³/d (a minor mode the tempered
// chains visited a few times). Chosen plain chains go on with K = 1 (no
// swaps: swap_rate and min_swap_rate read 1, barrier the pilot's Λ) on
// probation: over their first 2·Tune iterations, log p* and the
// magnetisation must keep R̂ ≤ 1.05 and 10 effective draws per chain, the
// variables' mean autocorrelation time must stay below a tenth of the
// window, and the variables' means must pass the same two tests against the
// pilot's tempered chains, or the chains go back to the ladder the pilot
// sized (plain_sweeps then reads −1). Otherwise the ladder gets K = ⌈2Λ⌉ + 1
// temperatures for the barrier Λ the pilot measured (K from 2 to MaxLadder;
// Syed et al.'s balance of round trips and cost; the barrier statistic,
// measured on the final ladder, reads somewhat higher), placed at equal
// parts of the measured Λ(β), each new replica starting from the state of
// the nearest old level, and is tuned for another Tune iterations; while K −
// 1 < 1.5Λ it grows again, at most twice. The pilot and the probation see
// what a few hundred sweeps show: a slow mode that neither the plain nor the
// tempered chains cross in that time can still leave plain chains chosen,
// and the run's R̂ and ESS warnings are then what shows it.
//
// Stats: swap_rate (mean acceptance probability over the pairs),
// min_swap_rate, barrier (Λ = Σ r_k), beta_min, round_trips (the mean
// number per chain of completed trips of a state from β_min to 1 and back
// since the ladder was fixed) and swap_1 … swap_{K−1}, the acceptance rate
// of pair (k−1, k); with Auto, temperatures (K), plain_sweeps and pt_sweeps
// (the pilot's costs per effective draw; plain_sweeps is −1 when plain
// chains were refused, both 0 before the decision) instead of the
// per-pair rates, whose number changes; with the cluster kernel,
// largest_cluster_fraction (the largest cluster's share of the sites in the
// last update of the β = 1 replicas, averaged over the chains). Rates are averaged over the iterations since the ladder
// last changed (while tuning, the current round); a pair not yet proposed
// reads 0 (odd pairs before the second iteration).
//
// Evaluations count one per conditional distribution of a site update (K·d
// per chain and iteration) plus one per log p* evaluated for the swaps (two
// per proposed exchange).
//
// Chain c draws its transitions from p.Key.ForIndex(rng.Sample, c) and the
// ladder is adapted from sums taken in chain order, so results do not
// depend on the number of cores. The chains run in parallel; when they are
// fewer than two per core, so do their replicas' sweeps (every kernel but
// the cluster updates takes a fixed number of uniform words a sweep, which
// each chain draws first, in its sweeps' order: replicas.go), so that 4
// chains of 8 temperatures keep 32 cores busy, not 4, with the same draws.
package pt
