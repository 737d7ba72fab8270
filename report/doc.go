// Package report writes dstein's results: samples as CSV in the model's
// state values, run summaries as JSON, and per-iteration traces as tidy
// CSV. Every file is written atomically (package internal/atomicfile) and
// every number is formatted so that the same run gives the same bytes.
package report
