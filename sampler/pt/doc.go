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
// Settings.Block sweeps an RBM differently: each replica holds
// visible and hidden units and targets the tempered joint
// π_β(z, h) ∝ exp(β·(bᵀz + hᵀ(Wᵀz + c))), whose β = 1 marginal in z is
// p*; a sweep draws all hidden units given z, then all visible units given
// h (block Gibbs, exact at every β), and swaps compare the joint log
// density. Its barrier Λ is somewhat larger than that of p*^β (5.2 against
// 4.5 on the d = 100, M = 25 example), its sweeps far cheaper (8× on that
// example). The default keeps the single-site sweeps of p*^β.
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
// Stats: swap_rate (mean acceptance probability over the pairs),
// min_swap_rate, barrier (Λ = Σ r_k), beta_min, round_trips (the mean
// number per chain of completed trips of a state from β_min to 1 and back
// since the ladder was fixed) and swap_1 … swap_{K−1}, the acceptance rate
// of pair (k−1, k). Rates are averaged over the iterations since the ladder
// last changed (while tuning, the current round); a pair not yet proposed
// reads 0 (odd pairs before the second iteration).
//
// Evaluations count one per conditional distribution of a site update (K·d
// per chain and iteration) plus one per log p* evaluated for the swaps (two
// per proposed exchange).
//
// Chain c draws its transitions from p.Key.ForIndex(rng.Sample, c) and the
// ladder is adapted from sums taken in chain order, so results do not
// depend on the number of cores.
package pt
