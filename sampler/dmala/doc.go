// Package dmala implements the discrete Metropolis-adjusted Langevin
// algorithm (DMALA) of Zhang, Liu and Liu, "A Langevin-like sampler for
// discrete distributions" (ICML 2022), for any model (its proposal gradient,
// model.ProposalGrads: a ProposalGradient, a relaxation's gradient or the
// log conditionals): n
// independent Metropolis–Hastings chains whose proposals move every
// variable at once.
//
// # Proposal
//
// Let g be the model's proposal gradient at the one-hot memberships of the
// current state z (model.ProposalGrads): for the categorical model and the
// factor graph the gradient of their log-multilinear energy
// Σ_f Σ_a log φ_f(a) Π m, linear in each variable's memberships, whose
// block of variable i is log p*(z with z_i = s) up to a constant
// (model.ProposalGradient), as in the paper, where f is linear in each
// one-hot block; for the Ising model and the RBM the gradient of their
// relaxed log-probability (model.Relaxed; the Ising model's is linear in
// each spin). The multilinear relaxations of the categorical model and
// the factor graph have ratios of probabilities for gradients, with which
// the proposals were far off where log-ratios are large (issue 28: an
// acceptance rate of 0.0005 on 2000 categorical variables of 4 states).
// The proposal factorises over the variables; variable i moves to state s
// with probability
//
//	q_i(s | z) ∝ exp( ½ (g[i, s] − g[i, z_i]) − [s ≠ z_i] / α ),
//
// independently of the others. This is the paper's Langevin-like proposal
// exp(½ ∇f(x)ᵀ(x' − x) − ‖x' − x‖² / (2α)) written in one-hot coding:
// the first-order term is the gradient's inner product with the change of
// memberships, and moving a one-hot vector to another state changes it by a
// vector of squared length 2, so the distance term is 2/(2α) = 1/α for a
// move and 0 for staying. For a binary variable this is the paper's
// proposal in {0, 1} coding with its step size α_paper = α/2 (there
// ‖x' − x‖² = 1, here 2, and the gradient terms agree). Variables may have
// any number of states (model.Offsets gives the layout); for ±1 variables
// the proposal flips spin i with probability σ(½(g[i, −z_i] − g[i, z_i]) −
// 1/α).
//
// The proposal is accepted with probability
//
//	min(1, p*(z') q(z | z') / (p*(z) q(z' | z))),
//
// where log p*(z') − log p*(z) comes from model.LogProb of both states (a
// proposal into a state of probability zero is rejected) and q(z | z') uses
// the gradient at the proposed state, so the chains leave p* invariant
// whatever the step size and the quality of the gradient. A state that
// the gradient marks impossible given the others (g[i, s] = −Inf, a zero
// of p*) has proposal probability 0; a chain that starts in a state of
// probability zero accepts any proposal of positive probability.
//
// # Cost
//
// A Step is one proposal per chain, which moves any number of variables at
// once and is accepted or rejected as a whole; Stats reports
// acceptance_rate, the fraction of those proposals accepted (one per chain
// and step), and with Settings.Adapt also step_size (α in use) and
// tuned_acceptance_rate (the fraction accepted since the adaptation
// ended). A step costs one proposal gradient (at the proposed state) and
// one log p* evaluation, each about as costly as one sweep of single-site
// Gibbs updates on a sparse model, so a Step costs about as much as one
// Gibbs sweep (a Gibbs-with-Gradients sweep makes d proposals, each with
// the gradient at its proposed state: up to d times more where that
// gradient is evaluated whole, about twice as much where the model's
// tracker updates it locally, as on categorical variables). The forward
// proposal of the current state is kept between steps, so a rejection
// costs nothing more; a step that changes α during the adaptation fills
// it again from the gradient kept with it.
//
// # Step size and its adaptation
//
// For each variable that moves, the terms of its proposal's exponent that
// depend on the gradient cancel against the change of log p* where the
// gradient gives that change exactly (independent variables, or a
// variable whose neighbours stay), so the acceptance ratio is mainly a
// product over the moved variables of the ratios of their proposals'
// normalisers at z and z'. Its logarithm is a sum of about as many terms
// as variables move, and the acceptance rate falls as more variables
// move: the step size that keeps it at a given level shrinks as the number
// of variables grows. The default α = 0.6 was chosen on binary models of
// 100 variables (DefaultStepSize) and is too large for many more: on
// independent categorical variables of 4 states with logits N(0, 1.5²)
// (samplertest.CategoricalTarget) it accepts 0.17 of the proposals with
// 200 variables, 0.11 with 300 and 0.04 with 2000 (the DISCS benchmark's
// categorical target), so that most steps move nothing.
//
// Settings.Adapt adapts α during the run's first Adapt steps to an
// acceptance rate of Settings.TargetAcceptance (0.574 by default, the
// target of the DISCS benchmark's adaptive DMALA), by a Robbins–Monro
// recursion on 1/α, the log-odds penalty of a move, averaged over the
// second half of those steps (see Settings.Adapt). Then α stays fixed: the
// chains are Metropolis–Hastings chains with one kernel again, and the
// draws kept after the adaptation are exact draws of p* once they have
// forgotten their start, which the adaptation helps since every α leaves
// p* invariant. (DISCS keeps adapting throughout the run, which a chain
// that must leave p* invariant cannot.) Tuning reports the adaptive steps;
// keep them within the warm-up. On the categorical targets above the
// adapted step sizes are 0.38 (200 variables), 0.36 (300) and 0.28
// (2000), accepting 0.57, 0.57 and 0.58 of the next proposals; on the
// 3×3 Potts torus of samplertest.MultiStateTargets α rises to 1.2–1.4.
// A model on which proposals are accepted more often than the target at
// every step size takes α to its largest value, 100.
//
// One step per draw is not enough on many variables at any step size.
// Four chains of 250 draws, after draws × thin warm-up steps of which the
// first 250 adapt α, estimate the state probabilities with these
// multiples of the RMSE of 1000 exact independent draws (means over keys
// 1–10; TestAdaptedStepSize, TestMultiStateTargets):
//
//	                     α = 0.6 (default)       adapted (Adapt = 250)
//	thin                 1      2      3         1      2      3
//	categorical-200x4    6.0    4.7    3.8       3.8    2.7    2.3
//	categorical-300x4    7.5    6.3    5.9       4.2    2.9    2.4
//	potts-3x3            2.4    1.8    1.6       1.7    1.5    1.5
//
// A fixed α does no better than the adapted one without thinning: the
// best, α = 0.4–0.45 (acceptance 0.53–0.42), gave 3.9–4.0 on 200
// variables, α = 0.3 and 0.5 4.4, α = 0.8 10. Each variable moves in few
// of the steps, so a draw per step repeats most of the last one.
// Gibbs-with-Gradients reaches 1.1–1.2 in 250 sweeps, but a sweep makes d
// proposals: on 200 variables a DMALA step of 4 chains took 0.16 ms
// against 0.31 ms for a Gibbs-with-Gradients sweep, so the thinning of 3
// costs about 1.5 sweeps a draw.
//
// Chains run in parallel, each with its own random stream, so results do
// not depend on the number of cores.
package dmala
