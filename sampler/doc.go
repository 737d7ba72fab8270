// Package sampler holds what dstein's samplers share: the run loop that
// owns iteration, cancellation and progress reporting; the initial draw of
// particles or chains; and the Samples type with its summaries (means and
// marginals in the model's state values).
//
// Each algorithm lives in its own sub-package as settings + explicit state +
// one Step; Run drives any of them the same way, so a sampler can also be
// stepped by hand.
package sampler
