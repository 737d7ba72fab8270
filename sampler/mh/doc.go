// Package mh holds what the gradient-guided Metropolis–Hastings samplers
// (Gibbs-with-Gradients, multi-flip GWG, DMALA, DLMC, the path auxiliary
// sampler) share: checking their problem, starting n chains at its states
// with one random stream each, the per-chain state and counters behind
// their samples, evaluation counts and acceptance rates, and (Steps) the
// step loop of n chains in parallel with the adaptation of a proposal's
// size to a target acceptance rate and its statistics.
package mh
