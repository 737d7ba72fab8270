// Package transform builds the continuous parameterization of a discrete
// model (the paper's section 3).
//
// A base density p0 on each coordinate is cut into K_i bins of equal
// probability at its quantiles k/K_i (an even partition; for two states and
// a symmetric base this is sign(x)). Γ maps x ∈ R^d to the state whose bin
// holds each coordinate, and
//
//	p_c(x) ∝ p0(x) · p*(Γ(x))
//
// is a piecewise-continuous density whose image under Γ is exactly p*. The
// reverse direction, drawing x given z inside z's bins, turns discrete
// samples into continuous ones for goodness-of-fit testing.
//
// GF-SVGD also needs a differentiable surrogate ρ of p_c with its score
// ∇ log ρ. BaseSurrogate is ρ = p0. RelaxedSurrogate is ρ = p0 · p̃*(m(x)):
// the indicator of each bin is replaced by a soft membership built from
// logistic steps at the cut points with a temperature, and p̃* is the
// model's smooth extension to soft memberships (model.Relaxed). For ±1
// variables at temperature 1 the expected spin under the memberships is the
// paper's σ(x) = 2/(1+e^(−x)) − 1.
package transform
