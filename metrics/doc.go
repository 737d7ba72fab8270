// Package metrics measures how well samples represent a model: the mean
// squared error of the estimated means against exact ones, and the maximum
// mean discrepancy (MMD) with the exponentiated Hamming kernel
// k(z, z') = exp(−H(z, z')/d) of Yang et al. (2018), H the number of
// coordinates where z and z' differ.
//
// MMD² against a model p uses a fixed exact reference sample R of p: the
// V-statistic ‖μ_q − μ_R‖² of the kernel mean embeddings, whose p–p term
// is computed once per reference sample. It is never negative, so log
// axes work; the unbiased two-sample form is available as well.
//
// Samples of ±1 models are packed into 64-bit words so that a Hamming
// distance is a few XORs and popcounts; the kernel takes only d+1 values
// and is tabulated.
//
// # Beyond the means
//
// Scores against exact ground truth (package exact) that the means miss:
// PairRMSE, the error of the pair moments E[z_i z_j] (indicator pairs for
// categorical variables) against exact.Pairs; EnergyBins.TV, the total
// variation distance between the histograms of log p*(z) of the sample and
// of the exact distribution over fixed bins; ModeMass, the mass of the
// positive-magnetisation mode of a ±1 model and its squared error; and the
// split of MMD² by order (FirstOrderMMD2, MMD2Dists, ExactMMD2). Every
// score is deterministic and finite; an empty sample estimates every
// frequency as 0 (as sampler.Marginals does), which fixes its score.
//
// # Orders of MMD²
//
// With c = exp(−1/d) the kernel is a product over the variables,
// k(z, z') = Π_i (c + (1−c)·δ(z_i, z'_i)). With φ_s(z) = 1[z = s] − 1/K_i,
// δ(z, z') = 1/K_i + Σ_s φ_s(z)·φ_s(z'), so each factor is
// α_i + (1−c)·⟨φ(z_i), φ(z'_i)⟩, α_i = c + (1−c)/K_i, and expanding the
// product over the subsets A of the variables,
//
//	MMD²(Q, P) = Σ_A Π_{i∉A} α_i · (1−c)^|A| · ‖E_Q Φ_A − E_P Φ_A‖²,
//
// Φ_A = ⊗_{i∈A} φ(z_i): a sum of non-negative terms, order r collecting
// |A| = r. Order 0 vanishes between two distributions; order 1 involves the
// one-variable marginals only,
//
//	Σ_i (1−c)·Π_{j≠i} α_j · Σ_s (Q_i(s) − P_i(s))²,
//
// which for ±1 variables is a^{d−1}·b·Σ_i (m_i^Q − m_i^P)² with
// a = (1+c)/2, b = (1−c)/2 and m the means. For ±1 variables each order
// weighs b/a = tanh(1/(2d)) ≈ 1/(2d) more lightly than the one below it,
// against C(d, r) subsets, so for n exact draws (every component with a
// variance of order 1/n) order 2 holds about (d−1)/(4d) of order 1: on a
// 4×4 grid (J = 0.3, fields uniform in ±0.3) order 1 holds 78% of
// E[MMD²], order 2 19%, order 3 3%, and single samples of 200 draws put
// 56–88% (mean 74%) in order 1. MMD² is thus mostly a score of the
// marginals; a sampler with the right marginals and wrong correlations
// moves only the higher orders, which PairRMSE measures directly.
package metrics
