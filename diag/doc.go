// Package diag computes the convergence diagnostics of Markov chain Monte
// Carlo draws of one scalar quantity: R̂, the bulk and tail effective
// sample sizes (ESS), the ESS of the mean and the Monte Carlo standard
// error (MCSE) of the mean, as defined by Vehtari, Gelman, Simpson,
// Carpenter and Bürkner (2021), "Rank-normalization, folding, and
// localization: An improved R̂ for assessing convergence of MCMC",
// Bayesian Analysis 16(2), 667–718, and as Stan's posterior package and
// ArviZ compute them.
//
// The draws are chains[c][i], draw i of chain c; every chain must have
// the same length, at least MinDraws, and every draw must be finite (the
// functions return an error otherwise, never panic). Let S be the number
// of draws the split chains hold: all of them when the chains have even
// length.
//
//   - Split chains: each chain is cut into its first and second halves,
//     which count as two chains; the middle draw of an odd-length chain is
//     dropped; n is the length of the halves. One chain is enough.
//   - Rank normalisation: the split draws are ranked together, ties given
//     their average rank r, and replaced by z = Φ⁻¹((r − 3/8)/(S + 1/4)).
//     Ties make a binary or few-valued quantity a few-valued z, which the
//     diagnostics handle as any other.
//   - Folding: |x − median|, the median of all draws.
//   - Split-R̂ of split chains with mean within-chain variance W and
//     variance of the chain means B/n: √(((n−1)/n·W + B/n)/W).
//   - R̂ = max(split-R̂ of the rank-normalised draws, split-R̂ of the
//     rank-normalised folded draws); the first sees chains that disagree
//     about the location, the second chains that disagree about the scale.
//   - ESS = S/τ from the biased autocovariances acov_{c,t} of the split
//     chains, combined across chains as in Stan: with W = n/(n−1)·mean_c
//     acov_{c,0} and var⁺ = (n−1)/n·W + B/n, ρ_t = 1 − (W − mean_c
//     acov_{c,t})/var⁺. Geyer's initial positive sequence takes the pairs
//     (ρ_t, ρ_{t+1}), t even, while their sum is positive (up to lag n−3,
//     posterior's bound; ArviZ's is one pair further for odd n, which
//     matters only for chains that barely move), the initial monotone sequence caps each pair's
//     sum at the sum of the pair before, and τ = −1 + 2 Σ_{t<T} ρ_t + ρ_T,
//     T the even lag of the last pair examined (its ρ_T counted when
//     positive or when the pair was kept, which steadies antithetic
//     chains), at least 1/log₁₀ S: the ESS is at most S·log₁₀ S. The
//     autocovariances of the first lags are plain sums; when Geyer's
//     sequence goes further, or the lag-1 autocorrelation says it will,
//     they come from an FFT of every chain (the same numbers up to
//     rounding).
//   - Bulk-ESS: the ESS of the rank-normalised split chains. Tail-ESS: the
//     smaller ESS of the indicators I(x ≤ q₀.₀₅) and I(x ≤ q₀.₉₅) on the
//     split chains, with the quantiles of all draws (linear interpolation,
//     R's type 7). ESS of the mean: the ESS of the split chains as they
//     are. MCSE of the mean: SD/√(ESS of the mean), SD the sample standard
//     deviation of all draws.
//
// # Never NaN
//
// The results are defined for every valid input, where posterior returns
// NA:
//
//   - Every draw the same (a constant quantity, common for discrete
//     variables): R̂ = 1, every ESS = S, SD = MCSE = 0; no warning fires.
//   - Every split chain constant but not all equal (chains that never
//     move): R̂ = +Inf. encoding/json refuses ±Inf, so a JSON writer must
//     encode it itself (package infer writes "inf"). The ESS formula still
//     applies (ρ_t = 1 at every lag) and gives a small finite ESS; MCSE is
//     finite.
//   - A tail indicator that is constant (I(x ≤ q₀.₉₅) is always 1 when the
//     95% quantile is the largest value, as for a binary quantity that is
//     1 in more than 5% of the draws) says nothing about the tails; its ESS
//     is taken to be the bulk-ESS, so that such quantities do not get
//     false low tail-ESS warnings.
//   - Chains shorter than 12 draws have halves too short for Geyer's
//     sequence past its first pair; with that pair positive, τ = 1 + 2ρ₁
//     (Geyer's estimate from the one pair), where posterior has no value
//     (halves under 3 draws) or an indexing artefact (τ = 2) and ArviZ
//     gives S·log₁₀ S (halves under 5 draws).
//
// The package-level functions take their buffers from a pool; a Workspace
// holds them explicitly, and summarising thousands of quantities of one
// shape with it allocates nothing after the first. Results do not depend
// on which is used, nor on GOMAXPROCS.
package diag
