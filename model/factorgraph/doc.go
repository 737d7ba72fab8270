// Package factorgraph implements discrete factor graphs (Markov networks):
//
//	p*(z) = Π_f φ_f(z_{S_f}),   log p*(z) = Σ_f log φ_f(z_{S_f}),
//
// where each factor φ_f ≥ 0 depends on the variables of its scope S_f and is
// stored as a table of log-values (−Inf for a zero). Variable i has K_i ≥ 1
// states with the values 0, 1, …, K_i−1; a factor's table is in UAI order,
// row-major over its scope with the last scope variable changing fastest, the
// layout of the UAI file format (package model/uai) and of exact.Factor.
//
// A Graph implements model.Model and the optional model.Conditional,
// model.Delta, model.Support and model.Relaxed. Conditionals and deltas read
// only the factors adjacent to the variable, so the generic model.Tracker is
// already local and Graph has no tracker of its own.
//
// Support: Possible(i, s) is false when the factors' zero entries rule state
// s out by arc consistency: some factor over i is zero at every assignment of
// its scope that has z_i = s and puts the other variables in states not yet
// ruled out, repeated until nothing changes. This finds unary zeros, rows of
// zeros in larger tables and their consequences; a state it rules out has
// probability zero, but joint contradictions that need several factors at once
// can be missed, so a state it keeps may still have probability zero.
//
// The relaxation (model.Relaxed) is the multilinear extension of each factor,
//
//	log p̃(m) = Σ_f log Σ_a φ_f(a) Π_{v∈S_f} m_{v,a_v},
//
// the log of the expected factor value under independent soft memberships m.
// It is computed in the log domain, so tiny memberships and tiny or zero
// table entries neither underflow nor produce NaN. GF-SVGD's relaxed
// surrogate uses it.
//
// Gradient-guided samplers (Gibbs-with-Gradients, DMALA) use instead the
// proposal gradient (model.ProposalGradient): the gradient of the
// log-multilinear energy Σ_f Σ_a log φ_f(a) Π_{v∈S_f} m_{v,a_v}, linear in
// each variable's memberships, whose block of variable v at a one-hot z is
// Σ_{f∋v} log φ_f(z with z_v = s). The multilinear extension's gradient there
// is a ratio of factor values, so the change of log p* it estimates is far
// from the true one; the energy's gives the exact change. Its tracker
// (NewProposalTracker) recomputes the blocks of a changed variable's Markov
// blanket, as the relaxation's does.
//
// Clamp conditions a graph on evidence (observed values of some variables) and
// returns the graph over the free variables.
package factorgraph
