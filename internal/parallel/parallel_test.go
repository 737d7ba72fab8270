package parallel

import (
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

type countTask struct {
	hits []atomic.Int32
}

func (c *countTask) Do(lo, hi int) {
	for i := lo; i < hi; i++ {
		c.hits[i].Add(1)
	}
}

func TestForCoversEachIndexOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 7, 64, 1000} {
			for _, g := range []int{0, 1, 3, 100} {
				c := &countTask{hits: make([]atomic.Int32, n)}
				For(n, g, c)
				for i := range c.hits {
					if h := c.hits[i].Load(); h != 1 {
						t.Fatalf("procs=%d n=%d grain=%d: index %d processed %d times", procs, n, g, i, h)
					}
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

type nested struct{ inner *countTask }

func (s *nested) Do(lo, hi int) {
	for range hi - lo {
		For(len(s.inner.hits), 1, s.inner)
	}
}

func TestNestedForDoesNotDeadlock(t *testing.T) {
	c := &countTask{hits: make([]atomic.Int32, 50)}
	For(20, 1, &nested{inner: c})
	for i := range c.hits {
		if h := c.hits[i].Load(); h != 20 {
			t.Fatalf("index %d processed %d times, want 20", i, h)
		}
	}
}

type noop struct{ sum []float64 }

func (s *noop) Do(lo, hi int) {
	for i := lo; i < hi; i++ {
		s.sum[i]++
	}
}

func TestForDoesNotAllocate(t *testing.T) {
	task := &noop{sum: make([]float64, 4096)}
	For(4096, 64, task) // start the pool
	allocs := testing.AllocsPerRun(100, func() { For(4096, 64, task) })
	if allocs > 0 {
		t.Fatalf("For allocated %.1f times per call, want 0", allocs)
	}
}

// A pool holds GOMAXPROCS − 1 workers at the largest GOMAXPROCS its calls
// have seen, never the machine's NumCPU (a container's CPU quota sets
// GOMAXPROCS below it): none at GOMAXPROCS 1, and more when GOMAXPROCS
// grows.
func TestPoolFollowsGOMAXPROCS(t *testing.T) {
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	p := newPool()
	c := &countTask{hits: make([]atomic.Int32, 64)}
	p.For(64, 1, c)
	if w := p.workers.Load(); w != 0 {
		t.Errorf("GOMAXPROCS 1 (NumCPU %d): %d workers; want 0", runtime.NumCPU(), w)
	}
	runtime.GOMAXPROCS(3)
	p.For(64, 1, c)
	if w := p.workers.Load(); w != 2 {
		t.Errorf("GOMAXPROCS 3: %d workers; want 2", w)
	}
	runtime.GOMAXPROCS(2)
	p.For(64, 1, c)
	if w := p.workers.Load(); w != 2 {
		t.Errorf("GOMAXPROCS 2 after 3: %d workers; want the 2 started", w)
	}
	for i := range c.hits {
		if h := c.hits[i].Load(); h != 3 {
			t.Fatalf("index %d processed %d times, want 3", i, h)
		}
	}
}

// TestGrainWork: a chunk holds at least MinWork element operations, so
// that little work runs in one chunk on the caller whatever GOMAXPROCS
// is, and much work splits as Grain splits it.
func TestGrainWork(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(16))
	for _, c := range []struct {
		n       int
		perItem float64
		want    int
	}{
		{100, 100, 164},                 // 10⁴ operations in all: one chunk (164 ≥ 100)
		{1000, 100, 164},                // 1.6·10⁴ per chunk: 7 chunks, not 64
		{10000, 1000, Grain(10000, 1)},  // plenty: Grain's 4 chunks per core
		{50, 0, MinWork},                // a cost under 1 counts as 1
		{10, math.Inf(1), Grain(10, 1)}, // unknown, heavy items: one each
	} {
		if got := GrainWork(c.n, c.perItem); got != c.want {
			t.Errorf("GrainWork(%d, %g) = %d, want %d", c.n, c.perItem, got, c.want)
		}
	}
}

// An idle worker polls through about twice the last gap between batches
// when gaps are short, and for spin only after a long one.
func TestSpinFor(t *testing.T) {
	for _, c := range []struct{ idle, want time.Duration }{
		{0, spin},
		{10 * time.Microsecond, spin},
		{100 * time.Microsecond, 200 * time.Microsecond},
		{400 * time.Microsecond, 800 * time.Microsecond},
		{maxSpin, maxSpin},
		{maxSpin + 1, spin},
		{time.Second, spin},
	} {
		if got := spinFor(c.idle); got != c.want {
			t.Errorf("spinFor(%v) = %v, want %v", c.idle, got, c.want)
		}
	}
}
