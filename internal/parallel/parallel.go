package parallel

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Task processes the half-open index range [lo, hi). Implementations must be
// safe to call concurrently on disjoint ranges.
type Task interface {
	Do(lo, hi int)
}

// Func adapts a function to Task. Converting a closure to Func allocates when
// the closure escapes; hot loops should use a pointer to a struct instead.
type Func func(lo, hi int)

// Do calls f(lo, hi).
func (f Func) Do(lo, hi int) { f(lo, hi) }

type batch struct {
	task   Task
	n      int
	grain  int
	chunks int64
	next   atomic.Int64
	done   chan struct{} // one receive per helper that took the batch
}

// serve works on b and then reports one helper done.
func (b *batch) serve() {
	b.work()
	b.done <- struct{}{}
}

func (b *batch) work() {
	for {
		c := b.next.Add(1) - 1
		if c >= b.chunks {
			return
		}
		lo := int(c) * b.grain
		hi := min(lo+b.grain, b.n)
		b.task.Do(lo, hi)
	}
}

// pool is a set of worker goroutines that take batches from one queue.
// It holds GOMAXPROCS − 1 workers at the largest GOMAXPROCS a call has
// seen (re-read at every call), never NumCPU's: under a CPU quota (a
// container's, Slurm's GOMAXPROCS) NumCPU is the host's, and workers
// beyond GOMAXPROCS polled for Ps they could not get (parallel
// tempering's iteration took 5× as long at GOMAXPROCS 2 on a 16-core
// host). A batch sends at most GOMAXPROCS − 1 tickets, so no more workers
// than that poll at once after a smaller GOMAXPROCS.
type pool struct {
	queue   chan *batch
	workers atomic.Int32
	mu      sync.Mutex
}

// queueCap bounds the tickets waiting in a pool's queue (a ticket that
// does not fit is not sent, and the caller does its share).
const queueCap = 1024

func newPool() *pool { return &pool{queue: make(chan *batch, queueCap)} }

// grow starts workers until the pool has want.
func (p *pool) grow(want int) {
	if int(p.workers.Load()) >= want {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for int(p.workers.Load()) < want {
		p.workers.Add(1)
		go func() {
			wait := spin
			for {
				b, idle := p.receive(wait)
				b.serve()
				wait = spinFor(idle)
			}
		}()
	}
}

var (
	defaultPool = newPool()
	batches     = sync.Pool{New: func() any { return &batch{done: make(chan struct{}, queueCap)} }}
)

// spin is how long an idle worker, and a caller waiting for its helpers,
// polls before it blocks. Waking a goroutine blocked on another core costs
// 100–130 µs on the project's 2-core machine (measured), more than many
// batches of an iteration at n = 100 take; polling keeps the hand-off to
// about a microsecond when batches follow each other, and costs at most
// spin of a core that has nothing else to do.
const spin = 50 * time.Microsecond

// maxSpin is the longest an idle worker polls: when the batches of a
// program come at gaps of up to maxSpin (a sampler whose caller computes
// a statistic between steps), a worker polls through about twice the
// last gap, so that it is awake when the next batch comes; after a longer
// gap it polls for spin only. Measured on the 2-core development machine:
// Gibbs sweeps of the categorical DISCS target (120 µs on two cores),
// each followed by 150–200 µs of the caller's own work, took 200 µs on
// two cores with spin alone, as long as on one, since the worker was
// asleep when each sweep began.
const maxSpin = time.Millisecond

// spinFor is how long a worker polls after a batch that came after it
// had waited idle.
func spinFor(idle time.Duration) time.Duration {
	if idle > maxSpin {
		return spin
	}
	return min(maxSpin, max(spin, 2*idle))
}

// receive returns the next batch from the queue and how long the caller
// waited for it, polling for up to wait before it blocks.
func (p *pool) receive(wait time.Duration) (*batch, time.Duration) {
	start := time.Now()
	deadline := start.Add(wait)
	for polls := 1; ; polls++ {
		select {
		case b := <-p.queue:
			return b, time.Since(start)
		default:
		}
		if polls%8 == 0 && time.Now().After(deadline) {
			b := <-p.queue
			return b, time.Since(start)
		}
		runtime.Gosched()
	}
}

// For runs task over [0, n) in chunks of grain indices (the last chunk may be
// shorter). grain < 1 is treated as 1. At most GOMAXPROCS goroutines work on
// the range at once, the caller included.
func For(n, grain int, task Task) { defaultPool.For(n, grain, task) }

// For is the package's For on the pool's workers.
func (p *pool) For(n, grain int, task Task) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	chunks := (n + grain - 1) / grain
	procs := runtime.GOMAXPROCS(0)
	helpers := min(procs-1, chunks-1)
	if helpers <= 0 {
		inOrder(n, grain, task)
		return
	}
	p.grow(procs - 1)
	b := batches.Get().(*batch)
	b.task, b.n, b.grain, b.chunks = task, n, grain, int64(chunks)
	b.next.Store(0)
	sent := 0
	for range helpers {
		select {
		case p.queue <- b:
			sent++
		default:
		}
	}
	b.work()
	// Wait for the helpers. While waiting, run queued batches (possibly this
	// one): a helper ticket may sit in the queue behind workers that are
	// themselves waiting inside nested calls, so blocking here could deadlock.
	// Poll for up to spin, then block.
	block, deadline := false, time.Now().Add(spin)
	for got, polls := 0, 0; got < sent; polls++ {
		if !block && polls%8 == 7 {
			block = time.Now().After(deadline)
		}
		if block {
			select {
			case <-b.done:
				got++
			case other := <-p.queue:
				other.serve()
			}
			continue
		}
		select {
		case <-b.done:
			got++
		case other := <-p.queue:
			other.serve()
		default:
			runtime.Gosched()
		}
	}
	b.task = nil
	batches.Put(b)
}

// ForIf runs For when par is set, and otherwise For's chunks in order on
// the calling goroutine: for work that already runs inside one chunk of a
// parallel loop, such as gemm's Serial products of one chunk of particles.
func ForIf(par bool, n, grain int, task Task) {
	if par {
		defaultPool.For(n, grain, task)
		return
	}
	inOrder(n, max(grain, 1), task)
}

// inOrder runs task's chunks of grain ≥ 1 over [0, n) in order on the
// calling goroutine.
func inOrder(n, grain int, task Task) {
	for lo := 0; lo < n; lo += grain {
		task.Do(lo, min(lo+grain, n))
	}
}

// MinWork is the least work a chunk handed to another core should hold,
// in element operations (a multiply-add, or reading or writing one
// value), so that a small problem runs on fewer cores rather than slower
// on more. Measured on the 2-core development machine (BenchmarkMinWork,
// BenchmarkForOverhead): 2¹⁴ dependent multiply-adds take 34 µs (fewer
// when they are independent), while a For that hands 64 chunks to the
// workers costs 4–7 µs at GOMAXPROCS 2 and about 10 µs at 16, against
// 0.4 µs for the same items in one chunk on the caller.
const MinWork = 1 << 14

// GrainWork returns Grain(n, ·) raised so that each chunk of items that
// cost perItem element operations each holds at least MinWork: n items
// of little work in all run in one chunk, on the calling goroutine.
func GrainWork(n int, perItem float64) int {
	return Grain(n, int(math.Ceil(MinWork/max(perItem, 1))))
}

// Grain returns a chunk size that splits n items into about 4 chunks per
// available core, but never below minGrain. The result depends on GOMAXPROCS,
// so use it only where a task's result does not depend on chunk boundaries.
func Grain(n, minGrain int) int {
	g := n / (4 * runtime.GOMAXPROCS(0))
	return max(g, minGrain, 1)
}
