// Package exact computes exact answers for discrete models: the log
// normaliser log Z, every marginal and the means E[z_i], and independent
// exact samples. For checks on small models it enumerates the joint state
// space; larger structured models have their own routes (For chooses): the
// transfer over an open Ising grid (IsingGrid), the transfers conditioned
// on one line of a periodic one (IsingTorus), the hidden enumeration of an
// RBM and variable elimination. It is the ground truth against which
// dstein's samplers and tests are checked.
//
// Beyond the means it gives the exact pair marginals P(z_i = s, z_j = t)
// of every pair (Pairs, PairsFor: enumeration, the clamped transfer of an
// Ising grid, the conditional transfers of a torus with each line first,
// clamped variable elimination, the hidden enumeration of an RBM, or
// products of categorical marginals), the log-probability of every joint
// state of a small model (LogProbs), and the mass of the
// positive-magnetisation mode of a ±1 model (ModeMass).
package exact
