// Package exact computes exact answers for discrete models: the log
// normaliser log Z, every marginal and the means E[z_i], by brute-force
// enumeration of the joint state space. It is the ground truth against which
// dstein's samplers and tests are checked on small models.
//
// Beyond the means it gives the exact pair marginals P(z_i = s, z_j = t)
// of every pair (Pairs, PairsFor: enumeration, the clamped transfer of an
// Ising grid, clamped variable elimination, the hidden enumeration of an
// RBM, or products of categorical marginals), the log-probability of every
// joint state of a small model (LogProbs), and the mass of the
// positive-magnetisation mode of a ±1 model (ModeMass).
package exact
