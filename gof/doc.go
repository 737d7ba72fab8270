// Package gof tests whether discrete samples come from a model whose
// normaliser is unknown (H0: q = p against H1: q ≠ p).
//
// Four tests (the three Stein discrepancies share one bootstrap machinery;
// MMD's null comes from permutations):
//
//   - GF-KSD (the paper's Algorithm 2): each sample z is turned into a
//     continuous x drawn from the base density inside z's bins, so that x
//     follows p_c exactly when z follows p. The gradient-free kernelized Stein
//     discrepancy of x against p_c uses a differentiable surrogate ρ (its
//     score) and the weights w = ρ/p_c, which need p* only up to its constant.
//   - DKSD (Yang et al. 2018): the discrete Stein discrepancy with the kernel
//     exp(−H(z, z')/d), H the Hamming distance, and the difference score
//     s_l(z) = 1 − p(¬_l z)/p(z), where ¬_l moves coordinate l to its next
//     state cyclically (a flip for two states).
//   - MMD: the two-sample test of Gretton et al. (2012) with the same Hamming
//     kernel between the samples and a reference sample of the same size drawn
//     from the model (exactly where dstein has an exact sampler, by Gibbs
//     chains otherwise), with a permutation null.
//   - BKSD: a balanced Stein discrepancy with the same kernel, whose
//     operator moves each variable one step either way at the Barker rates
//     p(y)/(p(z) + p(y)), bounded in [0, 1] (stein.BalancedKernel), so that
//     no rare state dominates it and zeros of the model need no care.
//
// The three Stein discrepancies are degenerate U-statistics
//
//	S = 1/(n(n−1)) Σ_{i≠j} H_ij
//
// whose null distribution is approximated by the paper's multinomial bootstrap
//
//	S* = Σ_{i≠j} (u_i − 1/n) H_ij (u_j − 1/n),  u = Multinomial(n; 1/n, …, 1/n)/n,
//
// (u sums to one; reading u as raw counts is a known bug of public code) or,
// as an option, the Rademacher wild bootstrap S* = Σ_{i≠j} ε_i H_ij ε_j/(n(n−1)).
// The p-value is (1 + #{S* ≥ S})/(B + 1); the test rejects when it is at most α,
// which is the same as S exceeding the reported critical value.
//
// Both bootstraps are large-sample approximations, and on small samples or
// samples of a few repeated states (BootstrapCaveat) they reject true
// models far more often than α. Simulation replaces them with the
// statistic's null simulated from exact data sets of the model, tested as
// the sample is (GF-KSD's with the sample's own lifting noise), which holds
// the level at any n; Auto, the command line's default, simulates where
// the caveat stands and the simulation is affordable, and for GF-KSD and
// DKSD wherever it is cheap (Choose, RoutineSimulation).
//
// DKSD's null mean is exactly 0, but where the ratios p(¬_l z)/p(z) are
// heavy-tailed it is 0 only through states too rare for n samples to hold;
// without them the statistic sits at a bias (typically positive) that the
// bootstrap cannot see, and true models are rejected far more often than α.
// DKSD estimates that bias from the samples (through their neighbours, which
// carry the same mass) and sets Result.LevelChecked false, with a Warning,
// when it exceeds TailBiasFactor bootstrap standard deviations.
//
// All four are computed from n×n matrices (O(n² + nd) memory): the bootstrap
// draws are evaluated in blocks as quadratic forms with one matrix product
// per block.
package gof
