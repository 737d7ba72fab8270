// Package model defines what dstein knows about a discrete distribution.
//
// A model is an unnormalised probability mass function p*(z) over d
// variables, variable i taking one of K_i states. States are passed around
// as their indices 0..K_i−1; the values they stand for (−1 and +1 for spins,
// or any real numbers for a categorical variable) come from States, in the
// order the model lists them. That order is also the order of the bins of the
// continuous parameterization (package transform), so the first state maps to
// the leftmost bin.
//
// Beyond Model, samplers need different views of a model. Each is a small
// optional interface that a model implements when it can; a sampler checks
// for the one it needs with a type assertion and reports clearly when a model
// lacks it:
//
//   - Conditional: log-probabilities of one variable's states given the rest
//     (Gibbs sampling);
//   - Delta: the change of log p* when one coordinate changes (discontinuous
//     HMC, discrete KSD);
//   - Relaxed: a smooth extension of log p* to soft state memberships and its
//     gradient (relaxed surrogates for GF-SVGD, gradient-informed samplers);
//   - ProposalGradient: the gradient that gradient-guided proposals
//     (Gibbs-with-Gradients, DMALA) use, when the relaxation's is a poor
//     guide: that of an energy linear in each variable's memberships (the
//     log-multilinear energy Σ_f Σ_a log φ_f(a) Π m of a factor graph or a
//     categorical model, whose multilinear relaxation has ratios of
//     probabilities for a gradient). Its differences within a variable's
//     block are the exact changes of log p*. A model without it guides
//     proposals by its relaxation's gradient (Ising: linear per spin; RBM:
//     the first-order estimate of the Gibbs-with-Gradients paper), else by
//     its log conditionals.
//
// Samplers that make local moves follow one configuration per chain with a
// tracker, so that a move costs only its neighbourhood: Tracker (log p*
// changes and conditionals; a model's own through Incremental, else a
// generic one) and GradientTracker (the same for the gradient of the
// relaxation at the one-hot memberships, with a tried change that can be
// read before it is committed; a model's own through RelaxedIncremental,
// else a generic one that evaluates RelaxedLogProb whole).
// NewProposalTracker gives a GradientTracker of the proposal gradient
// (a model's own through ProposalIncremental, else a generic one), which
// Gibbs-with-Gradients follows; ProposalGrads evaluates it at whole
// configurations, for DMALA.
//
// Log-probabilities may be −Inf (a state of probability zero) but never NaN
// or +Inf. The package modeltest checks all of these contracts against
// brute-force enumeration.
package model
