// Package rng is the one way randomness enters dstein: a Key (seed, stream)
// with derive operations, and the named purposes of its streams.
//
// Every random choice flows from a Key passed in by the caller; nothing uses
// the global generator. A Key names a ChaCha8 generator whose 32-byte key
// holds the seed and the stream, so that different streams of one seed are
// statistically independent and the same key gives the same sequence on
// every platform and core count. A user's seed is a root key (NewKey);
// For and ForIndex name the streams of a purpose under it (initial draw,
// transitions of chain i, test bootstrap, …) and Split gives the root keys of
// repetitions (experiment trials, replicates, pipeline stages).
package rng
