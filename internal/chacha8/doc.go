// Package chacha8 continues a math/rand/v2 ChaCha8 generator's output in
// bulk: a Stream started from a *rand.ChaCha8 hands out the very numbers
// the generator would have (the ChaCha8Rand construction, C2SP
// chacha8rand), sixteen ChaCha8 blocks at a time where the CPU has
// AVX-512 and from the generator itself elsewhere.
//
// The generator's output is a sequence of periods: from a 256-bit seed,
// sixteen ChaCha8 blocks with counters 0 … 15 give 128 64-bit numbers, of
// which the first 124 are output and the last 4 become the next period's
// seed. Go's own implementation computes a period four blocks at a time;
// with AVX-512 its sixteen blocks fit the sixteen 32-bit lanes of a ZMM
// register, one block per lane, so a period is one pass of the rounds.
//
// A State reads its generator's position once, from the generator's
// binary encoding (the seed and the number of outputs used in the
// period), and owns the generator from then on: a chain keeps a State (48
// bytes), and a sweep borrows a Stream (1 KB, on its stack) to hand out
// its numbers. Fill instead computes a run of a generator's numbers and
// sets the generator past them, for callers that go on using the
// generator itself. A self-check at start-up compares the bulk path with
// rand.ChaCha8 (and the setting of a generator's position) and uses the
// generator itself if they ever differ.
package chacha8
