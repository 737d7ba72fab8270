package kernel

import (
	"math"
	"runtime"
	"sort"
	"testing"

	"github.com/dstein/dstein/rng"
)

func bruteSq(x []float64, n, d, i, j int) float64 {
	var s float64
	for k := range d {
		v := x[i*d+k] - x[j*d+k]
		s += v * v
	}
	return s
}

func bruteMedian2(x []float64, n, d int, diag bool) float64 {
	var ds []float64
	for i := range n {
		for j := range n {
			if i == j && !diag {
				continue
			}
			if i > j || diag {
				ds = append(ds, bruteSq(x, n, d, i, j))
			}
		}
	}
	sort.Float64s(ds)
	m := len(ds)
	return (ds[(m-1)/2] + ds[m/2]) / 2
}

// The fast kernel (Gram trick, parallel rows, tiled mirror, quickselect
// median) against a brute-force computation, for odd and even pair counts,
// both median conventions and several sizes.
func TestRBFMatchesBruteForce(t *testing.T) {
	r := rng.Key{Seed: 1, Stream: 0}.Rand()
	for _, sz := range [][2]int{{1, 3}, {2, 1}, {3, 2}, {4, 5}, {37, 3}, {70, 1}, {101, 8}} {
		n, d := sz[0], sz[1]
		x := make([]float64, n*d)
		for k := range x {
			x[k] = r.NormFloat64() * 2
		}
		for _, bw := range []Bandwidth{{}, {Rule: RuleMedianPaper, Scale: 2}, {IncludeDiagonal: true}, {Rule: RuleFixed, H: 0.7}} {
			rbf := NewRBF(n, d)
			h := rbf.Compute(x, bw)
			var med2 float64
			if bw.NeedsMedian() && n > 1 {
				med2 = bruteMedian2(x, n, d, bw.IncludeDiagonal)
			}
			wantH := bw.FromMedian(med2, n)
			if math.Abs(h-wantH) > 1e-12*wantH {
				t.Errorf("n=%d d=%d %+v: h = %v; brute force %v", n, d, bw, h, wantH)
			}
			for i := range n {
				for j := range n {
					want := math.Exp(-bruteSq(x, n, d, i, j) / wantH)
					if got := rbf.K[i*n+j]; math.Abs(got-want) > 1e-12 {
						t.Fatalf("n=%d d=%d: K[%d][%d] = %v; brute force %v", n, d, i, j, got, want)
					}
				}
			}
		}
	}
}

func TestRBFCoincidentPointsFallBack(t *testing.T) {
	x := []float64{1, 2, 1, 2, 1, 2}
	rbf := NewRBF(3, 2)
	if h := rbf.Compute(x, Bandwidth{Scale: 3}); h != 3 {
		t.Fatalf("h = %v for coincident points; want the fallback 1 times scale 3", h)
	}
	for _, v := range rbf.K {
		if v != 1 {
			t.Fatalf("K = %v; want all ones", rbf.K)
		}
	}
}

func TestRBFSameBitsAtAnyGOMAXPROCS(t *testing.T) {
	r := rng.Key{Seed: 2, Stream: 0}.Rand()
	n, d := 300, 7
	x := make([]float64, n*d)
	for k := range x {
		x[k] = r.NormFloat64()
	}
	old := runtime.GOMAXPROCS(1)
	a := NewRBF(n, d)
	a.Compute(x, Bandwidth{})
	for _, procs := range []int{2, 16} {
		runtime.GOMAXPROCS(procs)
		b := NewRBF(n, d)
		b.Compute(x, Bandwidth{})
		for k := range a.K {
			if a.K[k] != b.K[k] {
				runtime.GOMAXPROCS(old)
				t.Fatalf("K[%d] differs between GOMAXPROCS 1 and %d: %v vs %v", k, procs, a.K[k], b.K[k])
			}
		}
	}
	runtime.GOMAXPROCS(old)
}

func TestSelect(t *testing.T) {
	r := rng.Key{Seed: 3, Stream: 0}.Rand()
	for _, n := range []int{1, 2, 5, 16, 17, 100, 1001} {
		for _, dup := range []bool{false, true} {
			a := make([]float64, n)
			for i := range a {
				a[i] = r.Float64()
				if dup {
					a[i] = float64(r.IntN(4))
				}
			}
			s := append([]float64(nil), a...)
			sort.Float64s(s)
			for _, k := range []int{0, n / 2, n - 1, (n - 1) / 2} {
				b := append([]float64(nil), a...)
				if got := Select(b, k); got != s[k] {
					t.Fatalf("n=%d dup=%v: Select(k=%d) = %v; want %v", n, dup, k, got, s[k])
				}
				for _, v := range b[:k] {
					if v > s[k] {
						t.Fatalf("element %v before rank %d exceeds %v", v, k, s[k])
					}
				}
			}
		}
	}
}

func TestBandwidthRules(t *testing.T) {
	n := 99
	if h := (Bandwidth{Rule: RuleMedianPaper}).FromMedian(4, n); math.Abs(h-4/(2*math.Log(100))) > 1e-15 {
		t.Errorf("paper rule h = %v", h)
	}
	if h := (Bandwidth{Scale: 0.5}).FromMedian(4, n); math.Abs(h-0.5*4/math.Log(100)) > 1e-15 {
		t.Errorf("svgd rule (the zero value) h = %v", h)
	}
	if h := (Bandwidth{Rule: RuleMedian, Scale: 2}).FromMedian(4, n); h != 8 {
		t.Errorf("median rule h = %v, want 2·4", h)
	}
	for _, name := range []string{"paper", "svgd", "median", "fixed"} {
		if r, err := ParseRule(name); err != nil || r.String() != name {
			t.Errorf("ParseRule(%q) = %v, %v", name, r, err)
		}
	}
	if _, err := ParseRule("wide"); err == nil {
		t.Error("unknown rule accepted")
	}
	if err := (Bandwidth{Rule: RuleFixed}).Validate(); err == nil {
		t.Error("fixed rule without H accepted")
	}
	if err := (Bandwidth{Scale: -1}).Validate(); err == nil {
		t.Error("negative scale accepted")
	}
}
