package parallel

import (
	"fmt"
	"testing"
)

// fmaTask does ops multiply-adds per index on its own accumulator, the
// kind of element operation MinWork counts.
type fmaTask struct {
	ops int
	acc []float64
}

func (t *fmaTask) Do(lo, hi int) {
	for i := lo; i < hi; i++ {
		s := t.acc[i]
		for k := range t.ops {
			s = s*0.999999 + float64(k)
		}
		t.acc[i] = s
	}
}

// BenchmarkForOverhead times For over 64 items split in chunks of one
// item, each doing a few operations: what handing chunks to the workers
// and waiting for them costs, beside the same items in one chunk on the
// caller. BenchmarkMinWork times one chunk of MinWork operations, which
// MinWork's comment says should be several times that cost.
func BenchmarkForOverhead(b *testing.B) {
	t := &fmaTask{ops: 4, acc: make([]float64, 64)}
	for _, grain := range []int{1, 64} {
		b.Run(fmt.Sprintf("grain=%d", grain), func(b *testing.B) {
			for b.Loop() {
				For(64, grain, t)
			}
		})
	}
}

func BenchmarkMinWork(b *testing.B) {
	t := &fmaTask{ops: MinWork, acc: make([]float64, 1)}
	for b.Loop() {
		t.Do(0, 1)
	}
}
