// Package ensemble trains ensembles of binarized networks: GF-SVGD with the
// networks as particles (the paper's appendix algorithm), and the baselines
// of its BNN experiment — a single network trained with the straight-through
// estimator (STE), BNN+, bagging and BENN-style boosting (SAMME).
//
// Every method maximises, for each member, the minibatch log-likelihood
// scaled by N/B plus a log prior; members see the same number of examples
// (epochs × N) whatever the method. Training is deterministic for a seed, on
// any number of cores, and can stop after any epoch and resume from its
// checkpoint with the same final weights.
//
// # Structure
//
// Training is a stepper driven by sampler.Run: each Step is one optimisation
// step (of all particles for GF-SVGD, of the current member for the
// sequential methods), and the Step that completes an epoch also measures
// test accuracy, updates BENN's boosting weights, records the epoch and
// writes the checkpoint. GF-SVGD takes its weights, kernel, bandwidth and
// direction from package svgd and every method its Adam from package optim,
// the cores the discrete samplers use.
//
// # Random streams
//
// Every random number comes from a stream of rng.NewKey(Config.Seed), one
// purpose per stream (k is the member or particle, 0-based; ep the member's
// or the run's epoch, 0-based, below 4096):
//
//   - ForIndex(rng.Init, k): member k's initial latent weights.
//   - ForIndex(rng.Order, k<<12|ep): the order of the training examples
//     member k sees in epoch ep (a permutation of the examples, or of its
//     bootstrap resample for bagging).
//   - ForIndex(rng.Bootstrap, k): bagging's bootstrap resample of member k,
//     the same in every epoch.
//   - ForIndex(rng.Bootstrap, 1<<24|k<<12|ep): BENN's weighted resampling
//     of the examples member k sees in epoch ep.
//   - ForIndex(rng.Dropout, k<<12|ep): dropout masks of member k in epoch
//     ep. A GF-SVGD step draws each particle's masks once, in its binarized
//     pass, and its relaxed pass applies the same masks
//     (bnn.PassOptions.ReuseMasks).
//
// No stream serves two purposes, so changing how one part draws (say, the
// dropout rate) leaves the others' numbers unchanged.
package ensemble
