package rng

import (
	"encoding/binary"
	"math/rand/v2"
)

// Streams used by dstein's own code, so that two parts of one run never
// share a stream by accident. Experiments derive trial streams with Trial.
const (
	StreamInit   uint64 = 1 // initial particles or chain states
	StreamModel  uint64 = 2 // random model parameters (fields, weights)
	StreamSample uint64 = 3 // transition randomness of a sampler
	StreamLift   uint64 = 4 // continuous points drawn inside discrete samples' bins
	StreamTest   uint64 = 5 // bootstrap weights and permutations of a test
)

// New returns a ChaCha8-backed generator for (seed, stream).
func New(seed, stream uint64) *rand.Rand {
	return rand.New(Source(seed, stream))
}

// Source returns the ChaCha8 source behind New.
func Source(seed, stream uint64) *rand.ChaCha8 {
	var key [32]byte
	copy(key[:8], "dstein\x00\x01")
	binary.LittleEndian.PutUint64(key[8:], seed)
	binary.LittleEndian.PutUint64(key[16:], stream)
	return rand.NewChaCha8(key)
}

// Trial returns the stream number of trial t of a named purpose, for
// experiments that run many independent repetitions.
func Trial(purpose uint64, t int) uint64 {
	return purpose<<32 | uint64(uint32(t))
}
