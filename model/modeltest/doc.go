// Package modeltest is a conformance kit for dstein models: it checks a
// model's log-probabilities against a brute-force reference and checks every
// optional interface the model implements (Conditional, Delta, Relaxed,
// ProposalGradient, and the trackers Tracker, GradientTracker and the
// proposal tracker of model.NewProposalTracker) against its own LogProb and
// against from-scratch computations, over every joint state of a small
// instance.
package modeltest
