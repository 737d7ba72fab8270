// Package parallel runs index ranges over a fixed pool of worker goroutines
// without allocating per call.
//
// Work is cut into chunks whose boundaries depend only on the range length
// and the grain, never on GOMAXPROCS or on scheduling, and every index is
// processed by exactly one call of the task. Callers that compute each index
// independently therefore get bit-identical results on any number of cores.
// The caller's goroutine always takes part, so nested calls cannot deadlock.
package parallel
