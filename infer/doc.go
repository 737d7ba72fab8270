// Package infer wires a model to a sampler for one run: it builds the
// continuous parameterization and the surrogate, draws the initial
// particles from the seed, drives the sampler through the shared run loop,
// and summarises the samples (marginals and means in the model's state
// values). The command line and the experiments both call it, so a run
// means the same thing everywhere.
package infer
