// Package rng derives dstein's random number generators from a seed and a
// stream number.
//
// Every random choice in dstein flows from a *rand.Rand passed in by the
// caller; nothing uses the global generator. New(seed, stream) gives a
// ChaCha8 generator whose 32-byte key holds the seed and the stream, so that
// different streams of one seed are statistically independent and the same
// (seed, stream) gives the same sequence on every platform and core count.
package rng
