// Package metrics measures how well samples represent a model: the mean
// squared error of the estimated means against exact ones, and the maximum
// mean discrepancy (MMD) with the exponentiated Hamming kernel
// k(z, z') = exp(−H(z, z')/d) of Yang et al. (2018), H the number of
// coordinates where z and z' differ.
//
// MMD² against a model p uses a fixed exact reference sample R of p: the
// V-statistic ‖μ_q − μ_R‖² of the kernel mean embeddings, whose p–p term
// is computed once per reference sample. It is never negative, so log
// axes work; the unbiased two-sample form is available as well.
//
// Samples of ±1 models are packed into 64-bit words so that a Hamming
// distance is a few XORs and popcounts; the kernel takes only d+1 values
// and is tabulated.
package metrics
