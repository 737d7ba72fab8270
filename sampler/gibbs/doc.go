// Package gibbs implements Gibbs sampling with n independent chains:
// single-site systematic scans for any model (through model.Tracker, so a
// site update costs its neighbourhood), and block Gibbs for models with
// latent units such as the RBM (all hidden units given the visible ones,
// then all visible units given the hidden ones). For ±1 pairwise models
// (Ising), Settings.MultiSpin packs the chains 64 to a machine word and
// sweeps them together with the same exact conditionals (multispin.go
// explains how).
//
// Chains start at Γ(x) of the same initial draw that GF-SVGD makes from the
// same seed (sampler.InitialParticles from rng.NewKey(seed).For(rng.Init).Rand()),
// so the comparison with GF-SVGD starts from the same points. Chain c draws
// its transition randomness from key.ForIndex(rng.Sample, c), so results do
// not depend on the number of cores; with MultiSpin, chains 64b … 64b+63
// share the stream key.ForIndex(rng.Sample, b).
package gibbs
