package chacha8

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// A Stream begun at every position within a period (and after many
// periods, past reseeds) hands out rand.ChaCha8's numbers, on the kernel,
// on the generic period and when it draws from the generator itself; its
// State, ended and begun again after runs of every length, continues
// where it stopped.
func TestStreamContinuesGenerator(t *testing.T) {
	saved := hasKernel
	defer func() { hasKernel = saved }()
	r := rand.New(rand.NewPCG(5, 6))
	for _, mode := range []string{"kernel", "generic", "generator"} {
		if mode == "kernel" && !saved {
			t.Logf("no AVX-512: the kernel is not tested on this machine")
			continue
		}
		hasKernel = mode == "kernel"
		for _, skip := range []int{0, 1, 31, 32, 33, 63, 64, 95, 96, 123, 124, 125, 5000} {
			var seed [32]byte
			for k := range seed {
				seed[k] = byte(31*k + skip)
			}
			ref, src := rand.NewChaCha8(seed), rand.NewChaCha8(seed)
			for range skip {
				ref.Uint64()
				src.Uint64()
			}
			st := State{src: src}
			if mode != "generator" {
				var ok bool
				if st, ok = load(src); !ok {
					t.Fatalf("%s, skip %d: the generator's encoding was not read", mode, skip)
				}
			}
			var s Stream
			for k := 0; k < 5*periodOut; {
				s.Begin(&st)
				for run := []int{0, 1, 3, 123, 124, 125, 250}[r.IntN(7)]; run > 0; run-- {
					if got, want := s.Uint64(), ref.Uint64(); got != want {
						t.Fatalf("%s, skip %d, number %d: %#x, want %#x", mode, skip, k, got, want)
					}
					k++
				}
				s.End()
			}
		}
	}
}

// The kernel and the generic period agree on random seeds, word by word
// (the reseed words included).
func TestKernelMatchesGeneric(t *testing.T) {
	if !hasKernel {
		t.Skip("no AVX-512 on this machine")
	}
	r := rand.New(rand.NewPCG(1, 2))
	var a, b [periodLen]uint64
	for range 200 {
		seed := [4]uint64{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
		period16(&seed, &a)
		periodGeneric(&seed, &b)
		if a != b {
			t.Fatalf("seed %x: kernel and generic periods differ", seed)
		}
	}
}

// NewState reads the position; a generator with Read bytes pending (an
// encoding it does not take apart) is used directly, its numbers still
// the generator's.
func TestNewStateFallsBackOnPendingRead(t *testing.T) {
	ref, src := rand.NewChaCha8([32]byte{9}), rand.NewChaCha8([32]byte{9})
	var p [3]byte
	ref.Read(p[:])
	src.Read(p[:])
	st := NewState(src)
	if st.src != src {
		t.Fatalf("a generator with Read bytes pending was taken apart")
	}
	var s Stream
	s.Begin(&st)
	for k := range 300 {
		if got, want := s.Uint64(), ref.Uint64(); got != want {
			t.Fatalf("number %d: %#x, want %#x", k, got, want)
		}
	}
	s.End()
	if bulk {
		if st := NewState(rand.NewChaCha8([32]byte{9})); st.src != nil {
			t.Fatalf("a plain generator was not continued in bulk")
		}
	}
}

func TestStreamDoesNotAllocate(t *testing.T) {
	st := NewState(rand.NewChaCha8([32]byte{1}))
	if a := testing.AllocsPerRun(10, func() {
		var s Stream
		s.Begin(&st)
		for range 1000 {
			s.Uint64()
		}
		s.End()
	}); a != 0 {
		t.Fatalf("%v allocations per 1000 numbers", a)
	}
}

var sink uint64

func BenchmarkUint64(b *testing.B) {
	b.Run("stream", func(b *testing.B) {
		st := NewState(rand.NewChaCha8([32]byte{1}))
		var s Stream
		s.Begin(&st)
		var x uint64
		for b.Loop() {
			x += s.Uint64()
		}
		s.End()
		sink = x
	})
	b.Run("rand.ChaCha8", func(b *testing.B) {
		s := rand.NewChaCha8([32]byte{1})
		var x uint64
		for b.Loop() {
			x += s.Uint64()
		}
		sink = x
	})
}

func BenchmarkPeriod(b *testing.B) {
	var seed [4]uint64
	var out [periodLen]uint64
	b.Run("kernel", func(b *testing.B) {
		if !hasKernel {
			b.Skip("no AVX-512")
		}
		for b.Loop() {
			period16(&seed, &out)
		}
	})
	b.Run("generic", func(b *testing.B) {
		for b.Loop() {
			periodGeneric(&seed, &out)
		}
	})
}

// Fill gives the generator's numbers from every start within a period and
// for lengths on both sides of FillMin and of periods, and leaves the
// generator where they end (its next numbers are the reference's); a
// generator with Read bytes pending is drawn from directly. It does not
// allocate.
func TestFillContinuesGenerator(t *testing.T) {
	for _, skip := range []int{0, 1, 57, 123, 124, 125, 1000} {
		for _, n := range []int{0, 1, FillMin - 1, FillMin, 124, 125, 248, 1000} {
			var seed [32]byte
			seed[0], seed[1] = byte(skip), byte(n)
			ref, src := rand.NewChaCha8(seed), rand.NewChaCha8(seed)
			for range skip {
				ref.Uint64()
				src.Uint64()
			}
			dst := make([]uint64, n)
			Fill(src, dst)
			for k, v := range dst {
				if want := ref.Uint64(); v != want {
					t.Fatalf("skip %d, n %d, number %d: %#x, want %#x", skip, n, k, v, want)
				}
			}
			for k := range 300 {
				if got, want := src.Uint64(), ref.Uint64(); got != want {
					t.Fatalf("skip %d, n %d: the generator's number %d after Fill %#x, want %#x", skip, n, k, got, want)
				}
			}
		}
	}
	ref, src := rand.NewChaCha8([32]byte{3}), rand.NewChaCha8([32]byte{3})
	var p [5]byte
	ref.Read(p[:])
	src.Read(p[:])
	dst := make([]uint64, 500)
	Fill(src, dst)
	for k, v := range dst {
		if want := ref.Uint64(); v != want {
			t.Fatalf("with Read bytes pending, number %d: %#x, want %#x", k, v, want)
		}
	}
	if a := testing.AllocsPerRun(10, func() { Fill(src, dst) }); a != 0 {
		t.Fatalf("Fill allocates %v times", a)
	}
}

func BenchmarkFill(b *testing.B) {
	for _, n := range []int{32, 64, 125, 1000} {
		dst := make([]uint64, n)
		b.Run(fmt.Sprintf("n=%d/fill", n), func(b *testing.B) {
			src := rand.NewChaCha8([32]byte{1})
			for b.Loop() {
				fill(src, dst)
			}
		})
		b.Run(fmt.Sprintf("n=%d/loop", n), func(b *testing.B) {
			src := rand.NewChaCha8([32]byte{1})
			for b.Loop() {
				for i := range dst {
					dst[i] = src.Uint64()
				}
			}
		})
	}
}
