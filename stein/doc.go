// Package stein holds the discrete Stein kernel of Yang, Liu, Rao and
// Neville (2018) with a Hamming kernel of any bandwidth: what the DKSD
// goodness-of-fit test sums, and what Stein thinning and Stein importance
// weights minimise.
//
// With ¬_l the cyclic move of variable l to its next possible state (in the
// model's state order, skipping the states model.Support rules out) and
// ¬⁻¹_l its inverse, the difference score is s_l(z) = 1 − p(¬_l z)/p(z),
// which needs p only up to its normaliser. The Stein operator
// T f(z) = s(z) f(z) − (f(z) − f(¬⁻¹ z)) has E_p T f = 0 for every f, and
// the Stein kernel of the base kernel k(z, z') = exp(−H(z, z')/ℓ), H the
// Hamming distance, is
//
//	κ(z, z') = Σ_l [s_l s'_l k − s_l Δ*_{z',l} k − s'_l Δ*_{z,l} k + Δ*_{z,l} Δ*_{z',l} k],
//
// with Δ*_{z,l} k = k(z, ·) − k(¬⁻¹_l z, ·). Because k(¬⁻¹_l z, z')/k(z, z')
// is e^(−1/ℓ) when z_l = z'_l, e^(1/ℓ) when z'_l = ¬⁻¹ z_l and 1 otherwise,
// κ is a sum over coordinates with one kernel evaluation: O(d) per pair.
// E_{z∼p} κ(z, z') = 0 for every z' (the identity behind the test), which
// needs p > 0 on every state the cycles visit.
package stein
