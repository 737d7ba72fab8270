// Package infer runs a sampling pipeline on a model and summarises the
// result: it builds the continuous parameterization, makes the initial draw
// from the run's key, drives the pipeline's stages through the shared run
// loop, and turns the final states into marginals and means in the model's
// state values, a per-iteration trace and the summary that `dstein sample
// --json` writes. It also holds the presets, dstein's named pipelines.
// The command line and the experiments both call it, so a run means the
// same thing everywhere.
package infer
