// Package modeltest is a conformance kit for dstein models: it checks a
// model's log-probabilities against a brute-force reference and checks every
// optional interface the model implements (Conditional, Delta, Relaxed,
// and the trackers Tracker and GradientTracker)
// against its own LogProb, over every joint state of a small instance.
package modeltest
