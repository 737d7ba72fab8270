package rng

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
)

// Purpose names what a random stream is for. Every part of dstein that
// draws random numbers takes them from the stream of its own purpose, so
// that two parts of one run never share a stream by accident.
type Purpose uint64

// The purposes. Their numbers are part of dstein's reproducibility
// contract: changing one changes every result drawn from it.
const (
	Init      Purpose = 1  // initial particles or chain states
	Model     Purpose = 2  // random model parameters (fields, weights)
	Sample    Purpose = 3  // transition randomness of a sampler (per chain: with an index)
	Lift      Purpose = 4  // continuous points drawn inside discrete samples' bins
	Test      Purpose = 5  // bootstrap weights and permutations of a test; reference samples (with an index)
	Stage     Purpose = 6  // the later stages of a pipeline (with the stage's index)
	Dropout   Purpose = 7  // dropout masks of network training (with member and epoch)
	Bootstrap Purpose = 8  // bootstrap resamples of training data (bagging; with the member)
	Order     Purpose = 9  // example order of network training (with member and epoch)
	Replicate Purpose = 10 // independent replicates of a whole run (with the replicate's index)
	Check     Purpose = 11 // a second run that checks the first (infer.CheckModes)
)

// Key is the one way randomness enters dstein: a seed and a stream number.
// A Key names a ChaCha8 generator (Rand); derived keys name independent
// streams for the parts of a run.
//
// A root key has Stream 0 and is what a user's seed gives (NewKey). From a
// root, For(p) is the stream of purpose p, (seed, p), and ForIndex(p, i) the
// i-th stream of purpose p, (seed, p·2³² + i), such as the transition stream
// of chain i. Split(i) gives a new root for repetition i (an experiment's
// trial, a replicate, a later pipeline stage), whose seed is a SplitMix64 mix
// of the parent's. Deriving from a key that is not a root first turns it into
// one (Root), so every key can be derived from.
type Key struct {
	Seed, Stream uint64
}

// NewKey returns the root key of a seed.
func NewKey(seed uint64) Key { return Key{Seed: seed} }

// Rand returns the generator the key names.
func (k Key) Rand() *rand.Rand { return rand.New(k.Source()) }

// Source returns the ChaCha8 source behind Rand. Its 32-byte key holds a
// fixed tag, the seed and the stream, so the same key gives the same
// sequence on every platform and core count.
func (k Key) Source() *rand.ChaCha8 {
	var b [32]byte
	copy(b[:8], "dstein\x00\x01")
	binary.LittleEndian.PutUint64(b[8:], k.Seed)
	binary.LittleEndian.PutUint64(b[16:], k.Stream)
	return rand.NewChaCha8(b)
}

// Root returns k when it is a root key, else a root key mixed from its seed
// and stream.
func (k Key) Root() Key {
	if k.Stream == 0 {
		return k
	}
	return Key{Seed: mix(k.Seed ^ mix(k.Stream))}
}

// For returns the stream of purpose p under k's root.
func (k Key) For(p Purpose) Key { return Key{Seed: k.Root().Seed, Stream: uint64(p)} }

// ForIndex returns the i-th stream of purpose p under k's root (i < 2³²).
func (k Key) ForIndex(p Purpose, i int) Key {
	if i < 0 || uint64(i) > 0xffffffff {
		panic(fmt.Sprintf("rng: stream index %d out of range", i))
	}
	return Key{Seed: k.Root().Seed, Stream: uint64(p)<<32 | uint64(i)}
}

// Split returns the root key of repetition i of k: trial i of an
// experiment, replicate i of a run, stage i of a pipeline. Keys split from
// one key are independent of each other and of the parent's own streams.
func (k Key) Split(i int) Key {
	return Key{Seed: mix(k.Root().Seed ^ (uint64(i)+1)*0x9e3779b97f4a7c15)}
}

// Tweak returns a root key whose seed is the root seed of k XOR v. It is
// the derivation of two experiment streams of dstein's first round (the MMD
// reference samples of the goodness-of-fit experiments and the weight noise
// of their RBM alternatives), kept so that their published results
// reproduce; new code uses For, ForIndex and Split.
func (k Key) Tweak(v uint64) Key { return Key{Seed: k.Root().Seed ^ v} }

// String returns "seed/stream".
func (k Key) String() string { return fmt.Sprintf("%d/%d", k.Seed, k.Stream) }

// mix is SplitMix64's finaliser.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
