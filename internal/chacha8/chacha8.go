package chacha8

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
)

const (
	periodLen = 128 // 64-bit numbers a period's sixteen blocks give
	periodOut = 124 // of which are output; the last 4 seed the next period
)

// bulk reports whether Streams compute periods themselves (the CPU has a
// kernel for them and the self-check passed).
var bulk = hasKernel && selfCheck()

// State is a generator's position, 48 bytes: the seed of its period and
// the number of the period's outputs used, or, where periods are not
// computed here, the generator itself. Many can be kept (one per chain)
// while a Stream, which holds a period's numbers, works on one at a time.
type State struct {
	seed [4]uint64
	used int
	src  *rand.ChaCha8 // the generator, used directly when not in bulk
}

// NewState returns the position of src, which the State owns from then
// on: Streams begun on it hand out the numbers src.Uint64 would have
// returned, and src itself must not be used again.
func NewState(src *rand.ChaCha8) State {
	if bulk {
		if st, ok := load(src); ok {
			return st
		}
	}
	return State{src: src}
}

// load reads src's position from its encoding (see parse).
func load(src *rand.ChaCha8) (State, bool) {
	var buf [64]byte
	enc, err := src.AppendBinary(buf[:0])
	if err != nil {
		return State{}, false
	}
	return parse(enc)
}

// parse reads a generator's position from its encoding: "chacha8:", the
// number of outputs used in the current period (big-endian) and the seed
// (four little-endian words). It reports false for any other encoding
// (the generator has Read bytes pending, or the format changed).
func parse(enc []byte) (State, bool) {
	if len(enc) != 48 || string(enc[:8]) != "chacha8:" {
		return State{}, false
	}
	var st State
	used := binary.BigEndian.Uint64(enc[8:])
	if used > periodOut {
		return State{}, false
	}
	st.used = int(used)
	for k := range st.seed {
		st.seed[k] = binary.LittleEndian.Uint64(enc[16+8*k:])
	}
	return st, true
}

// encode is parse's inverse: the encoding of the position (seed, used).
func encode(seed [4]uint64, used int) [48]byte {
	var enc [48]byte
	copy(enc[:], "chacha8:")
	binary.BigEndian.PutUint64(enc[8:], uint64(used))
	for k, v := range seed {
		binary.LittleEndian.PutUint64(enc[16+8*k:], v)
	}
	return enc
}

// FillMin is the fewest numbers Fill computes in bulk: reading and
// setting the generator's position and the first period cost about as
// much as 50 numbers from the generator (BenchmarkFill: 248 ns for 32
// numbers against 165, 276 for 64 against 341, 313 for 125 against 642).
const FillMin = 64

// Fill sets dst to the next len(dst) numbers of src, those src.Uint64
// would return, and advances src past them, so that src and any rand.Rand
// on it go on from there. It computes them in bulk where Streams do (and
// len(dst) ≥ FillMin), else takes them from src. It does not allocate.
func Fill(src *rand.ChaCha8, dst []uint64) {
	if len(dst) < FillMin {
		for i := range dst {
			dst[i] = src.Uint64()
		}
		return
	}
	fill(src, dst)
}

// fill is Fill without the threshold.
func fill(src *rand.ChaCha8, dst []uint64) {
	st, ok := State{}, false
	if bulk {
		st, ok = load(src)
	}
	if !ok {
		for i := range dst {
			dst[i] = src.Uint64()
		}
		return
	}
	// The Stream is not begun on st (which would then move to the heap):
	// it starts from st's period itself.
	var s Stream
	s.seed = st.seed
	period(&s.seed, &s.buf)
	s.i = st.used
	for n := 0; n < len(dst); {
		n += copy(dst[n:], s.Take(len(dst)-n))
	}
	enc := encode(s.seed, s.i)
	if err := src.UnmarshalBinary(enc[:]); err != nil {
		panic("chacha8: the generator refused its own position: " + err.Error())
	}
}

// Stream hands out the numbers of the State it was begun on. It is not
// safe for concurrent use. Its zero value is ready for Begin; it is about
// 1 KB, and a local variable does not escape.
type Stream struct {
	buf  [periodLen]uint64
	i    int // buf[i:periodOut] are the numbers still to hand out
	seed [4]uint64
	src  *rand.ChaCha8
	st   *State
}

// Begin starts handing out st's numbers: it computes st's period (in
// bulk; about 80 ns with AVX-512). End must be called before st is used
// again or another State is begun.
func (s *Stream) Begin(st *State) {
	s.st, s.src, s.seed = st, st.src, st.seed
	if s.src != nil {
		s.i = periodOut // each number straight from the generator
		return
	}
	period(&s.seed, &s.buf)
	s.i = st.used
}

// End records in the State the numbers handed out.
func (s *Stream) End() {
	if s.src == nil {
		s.st.seed, s.st.used = s.seed, s.i
	}
	s.st = nil
}

// Uint64 returns the next number of the generator's output.
func (s *Stream) Uint64() uint64 {
	if s.i >= periodOut {
		s.refill()
	}
	s.i++
	return s.buf[(s.i-1)&(periodLen-1)]
}

// Take returns the next numbers of the generator's output, at least one
// and at most n ≥ 1 (fewer at the end of a period), in a slice valid until
// the next call on s.
func (s *Stream) Take(n int) []uint64 {
	if s.i >= periodOut {
		s.refill()
	}
	i := s.i
	s.i = min(periodOut, i+n)
	return s.buf[i:s.i]
}

// refill computes the next period; when the generator is used directly it
// takes one number from it into the last place Uint64 reads.
func (s *Stream) refill() {
	if s.src != nil {
		s.buf[periodOut-1] = s.src.Uint64()
		s.i = periodOut - 1
		return
	}
	copy(s.seed[:], s.buf[periodOut:])
	period(&s.seed, &s.buf)
	s.i = 0
}

// period computes the 128 numbers of the period seeded by seed.
func period(seed *[4]uint64, out *[periodLen]uint64) {
	if hasKernel {
		period16(seed, out)
		return
	}
	periodGeneric(seed, out)
}

// periodGeneric is period one block at a time: block j (counter j) is
// ChaCha8 on the constants, the seed's eight words, the counter and three
// zero words, with the seed words added back at the end (the
// chacha8rand construction; the constants, counter and zero words are
// not). Block j's word w goes to the 32-bit lane j%4 of number
// 32·(j/4) + 2w + (j%4)/2: four blocks' words interleaved, as Go lays
// them out.
func periodGeneric(seed *[4]uint64, out *[periodLen]uint64) {
	var key [8]uint32
	for k, v := range seed {
		key[2*k], key[2*k+1] = uint32(v), uint32(v>>32)
	}
	for j := range uint32(16) {
		x := [16]uint32{0x61707865, 0x3320646e, 0x79622d32, 0x6b206574}
		copy(x[4:12], key[:])
		x[12] = j
		for range 4 {
			qr(&x, 0, 4, 8, 12)
			qr(&x, 1, 5, 9, 13)
			qr(&x, 2, 6, 10, 14)
			qr(&x, 3, 7, 11, 15)
			qr(&x, 0, 5, 10, 15)
			qr(&x, 1, 6, 11, 12)
			qr(&x, 2, 7, 8, 13)
			qr(&x, 3, 4, 9, 14)
		}
		for w := 4; w < 12; w++ {
			x[w] += key[w-4]
		}
		base, lane := 32*(j/4), j%4
		for w, v := range x {
			k := base + uint32(2*w) + lane/2
			shift := 32 * (lane % 2)
			out[k] = out[k]&^(0xffffffff<<shift) | uint64(v)<<shift
		}
	}
}

func qr(x *[16]uint32, a, b, c, d int) {
	x[a] += x[b]
	x[d] = bits.RotateLeft32(x[d]^x[a], 16)
	x[c] += x[d]
	x[b] = bits.RotateLeft32(x[b]^x[c], 12)
	x[a] += x[b]
	x[d] = bits.RotateLeft32(x[d]^x[a], 8)
	x[c] += x[d]
	x[b] = bits.RotateLeft32(x[b]^x[c], 7)
}

// selfCheck compares the kernel with rand.ChaCha8 over three periods from
// a fixed seed, begun in the middle of a period, and checks that a
// generator set past a run of numbers (Fill's way) goes on with the
// reference's.
func selfCheck() bool {
	var seed [32]byte
	for k := range seed {
		seed[k] = byte(7*k + 1)
	}
	ref, src := rand.NewChaCha8(seed), rand.NewChaCha8(seed)
	for range 57 {
		ref.Uint64()
		src.Uint64()
	}
	st, ok := load(src)
	if !ok {
		return false
	}
	var s Stream
	s.Begin(&st)
	for range 3 * periodOut {
		if s.Uint64() != ref.Uint64() {
			return false
		}
	}
	s.End()
	enc := encode(st.seed, st.used)
	if src.UnmarshalBinary(enc[:]) != nil {
		return false
	}
	for range periodOut + 3 {
		if src.Uint64() != ref.Uint64() {
			return false
		}
	}
	return true
}
