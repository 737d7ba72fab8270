// Package dlmc implements discrete Langevin Monte Carlo (DLMC) of Sun,
// Chen, Dai and Schuurmans, "Discrete Langevin samplers via Wasserstein
// gradient flow" (AISTATS 2023), as the DISCS benchmark
// (google-research/discs, discs/samplers/dlmc.py) implements it, for
// any model (its proposal gradient, model.ProposalGrads: a ProposalGradient,
// a relaxation's gradient or the log conditionals): n independent chains whose proposals move
// every variable at once. It registers two methods: "dlmc", with the
// Metropolis–Hastings test (New), and "dlmc-uncorrected", without it
// (NewUncorrected), which is approximate.
//
// # Proposal
//
// Let g be the model's proposal gradient at the one-hot memberships of the
// current state z (model.ProposalGrads, as for DMALA): δ_i(s) = g[i, s] −
// g[i, z_i] estimates log p*(z with z_i = s) − log p*(z), exactly for
// models whose proposal gradient is linear in each variable's memberships
// (the categorical model, factor graphs, Ising and Potts models), to
// first order for the RBM (see package dmala). Each variable i runs,
// independently of the others, a continuous-time jump process over its
// states that moves from a to b at rate
//
//	R_i(a → b) = f(e^(ℓ_b − ℓ_a)),   ℓ = g[i, ·] (the gradient at z),
//
// where f is a locally balanced function (Settings.Balance: Sqrt,
// f(t) = √t, DISCS's default, or Ratio, f(t) = t/(1+t)); since
// f(t) = t·f(1/t), the process is reversible with respect to ν_i ∝ e^ℓ,
// the distribution of z_i that the gradient estimates. The proposal of
// variable i is the process's state after time h (Settings.StepSize),
// started at z_i: the row z_i of exp(hQ_i). For two states this is
//
//	P(move) = a/(a+b) · (1 − e^−(a+b)h),   a = f(e^δ), b = f(e^−δ),
//
// where a/(a+b) = σ(δ), DISCS's binary DLMC (its "interpolate" solver).
// For more states exp(hQ_i) is computed exactly, to a small error relative
// to every entry however small (DISCS's categorical DLMC uses a
// factorised estimate of it, exact for two states only), in one of three
// ways (see kernel in ctmc.go, and spectral.go). The process is
// reversible, so S = D^½ Q_i D^−½, D = diag(ν_i), is symmetric, with
// eigenvalues 0 and ≤ −γ (γ the spectral gap, at least 1 with either
// balancing function), and each entry P(c → b) of exp(hQ_i) is within
// ν_b·e^−hγ/√(ν_c ν_b) of ν_b. Where a lower bound of γ makes that at most
// 10⁻¹⁷ ν_b (hγ ≥ 39 + ½ log(1/(ν_c ν_min)): every row from h = 40 with
// Sqrt, 50 with Ratio, on the experiments' categorical variables) the row
// is ν_i itself. For shorter times the generator is uniformised and the
// Taylor series of the current state's row summed, all its terms ≥ 0,
// where Λh ≤ 4q (Λ the largest exit rate); beyond that S is diagonalised
// by Jacobi rotations, its null vector √ν_i deflated, and the row kept
// where a bound of its error is at most 10⁻¹² relative to each entry (the
// errors measured against a 300-bit reference are a few units of
// rounding), else the uniformised series is squared (scaling and
// squaring, relative error about 7e-15·(1 + Λh)). A state that the
// gradient marks impossible given the others (g[i, s] = −Inf) is never
// proposed. For small h each variable moves with probability about
// h·Σ_s f(e^δ_i(s)), to s in proportion to f(e^δ_i(s)) (with Sqrt,
// Gibbs-with-Gradients' weights e^(δ/2), for every variable at once); for
// long h each variable is drawn from ν_i whatever its state, like DMALA's
// proposal as α → ∞.
//
// The proposal z' is accepted with probability
//
//	min(1, p*(z') q(z | z') / (p*(z) q(z' | z))),
//
// q(z | z') from the gradient at z' (both processes' rates evaluated with
// the gradient at their own start, as in DISCS), so the chains leave p*
// invariant whatever h and the quality of the gradient; a proposal into a
// state of probability zero is rejected, and a chain that starts in one
// accepts any proposal of positive probability. On independent variables
// (a categorical model) every proposal is accepted, whatever h.
//
// Without the test ("dlmc-uncorrected") every proposal is taken: the
// chains follow the first-order estimate exactly where it is exact and
// every variable moves independently of the others' moves within a step,
// so on coupled models they are biased, more so as h grows (on the 3×3
// Ising grid of samplertest.SmallModels at h = 1 the correlation of
// neighbours is 0.15 against 0.41); the registry marks that method
// approximate, so the conformance test skips it and runs keep no draws of
// it. It reports moved_fraction, the mean fraction of the variables that
// a step changed, and costs one proposal gradient per step.
//
// # Cost
//
// A Step is one proposal per chain; Stats reports acceptance_rate (one
// proposal per chain and step), and with Settings.Adapt also step_size
// (h in use) and tuned_acceptance_rate (the fraction accepted since the
// adaptation ended). A step costs one proposal gradient and one log p*
// at the proposed state, like DMALA's, plus the transition probabilities
// of every variable at that state: a few exponentials and logarithms per
// binary variable (BenchmarkStep: 1.4–1.7× a DMALA step on the
// experiments' models with d = 100, measured in the same run), and for a
// variable of q > 2 states q − 1 exponentials and a logarithm where the
// row is ν_i, O(q²) per term of a series of about Λh + 9√Λh + 10 terms
// (Λ the largest exit rate) where Λh ≤ 4q, and beyond that O(q³) for the
// eigendecomposition (for q = 4 about 3 sweeps of 3 rotations) or, where
// its error bound refuses it, O(q³·(20 + log₂ Λh)) for the squarings. A
// step of 100 chains on DISCS's categorical target, 2000 variables of 4
// states (BenchmarkStepCategorical), took 42–55 ms of CPU time at
// h = 10⁹, where the adaptation takes h on that target, 190–260 ms at
// h = 10, 250–500 ms at h = 1 and 180–310 ms at the default h, the last
// two mostly in the series, on a loaded 2-core machine where a DMALA step
// on the same target took 35–43 ms. The forward proposal of the current
// state is kept between steps, so a rejection costs nothing more.
//
// # Step size and its adaptation
//
// The defaults h = 0.15 (Sqrt) and 0.3 (Ratio) were chosen on binary
// models of 100 variables (DefaultStepSize). As for DMALA, the acceptance
// rate falls as more variables move, so the step size that keeps it at a
// given level shrinks as the number of variables grows, unless the
// gradient's estimate is exact (independent variables, where every h is
// accepted). Settings.Adapt adapts h during the run's first Adapt steps
// to an acceptance rate of Settings.TargetAcceptance (0.574 by default,
// DISCS's target), by a Robbins–Monro recursion on log h, the log of the
// expected number of jumps while it is small, with Polyak averaging over
// the second half of those steps, as DMALA adapts its step size; then h
// stays fixed and the chains are Metropolis–Hastings chains with one
// kernel again. DISCS instead adapts throughout the run, starting from
// an h that makes about 3 jumps per chain expected, on the same target.
// Where proposals are accepted more often than the target at every h
// (long h draws each variable from ν_i, a good independence proposal on
// weakly coupled models), h grows to its largest value, 10⁹, where the
// processes have forgotten their starts and each row is ν_i, the cheapest
// of all (see Cost).
//
// With the adaptation DLMC estimates the state probabilities of 300
// independent categorical variables of 4 states, and of the 3-state Potts
// torus of samplertest.MultiStateTargets, about as well as exact
// independent draws (TestAdaptedOnMultiStateTargets), where DMALA needs
// thinning.
//
// Chains run in parallel, each with its own random stream, so results do
// not depend on the number of cores.
package dlmc
