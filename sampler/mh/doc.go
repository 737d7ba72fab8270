// Package mh holds what the gradient-guided Metropolis–Hastings samplers
// (Gibbs-with-Gradients, DMALA) share: checking their problem, starting n
// chains at its states with one random stream each, and the per-chain state
// and counters behind their samples, evaluation counts and acceptance
// rates.
package mh
