package pas

// sumTree holds non-negative weights of d leaves and the sums of every
// subtree, so that a leaf can be drawn in proportion to its weight, and
// removed or put back, in O(log d). Every internal node is the sum of its
// two children, computed the same way whenever a leaf below it changes,
// so that putting back the leaves that were removed restores every sum
// bit for bit, and a total is a sum of positive terms, free of the
// cancellation of a running total minus the removed weights.
type sumTree struct {
	n2 int       // leaves, padded to a power of two
	t  []float64 // t[1] the root, t[n2 + i] leaf i, t[k] = t[2k] + t[2k+1]
}

func newSumTree(d int) sumTree {
	n2 := 1
	for n2 < d {
		n2 <<= 1
	}
	return sumTree{n2: n2, t: make([]float64, 2*n2)}
}

// leaves returns the leaves' weights (n2 entries, the padding zero), to
// be written before build.
func (t *sumTree) leaves() []float64 { return t.t[t.n2:] }

// build computes every internal sum from the leaves.
func (t *sumTree) build() {
	for k := t.n2 - 1; k >= 1; k-- {
		t.t[k] = t.t[2*k] + t.t[2*k+1]
	}
}

// total returns the sum of the weights.
func (t *sumTree) total() float64 { return t.t[1] }

// set sets leaf i's weight to w and updates the sums above it.
func (t *sumTree) set(i int, w float64) {
	k := t.n2 + i
	t.t[k] = w
	for k > 1 {
		k >>= 1
		t.t[k] = t.t[2*k] + t.t[2*k+1]
	}
}

// find returns the leaf in whose share of [0, total) u falls: leaf i
// with probability w_i/total when u is uniform on [0, total). The leaf
// found always has positive weight when the total is positive (rounding
// that would step into an empty subtree takes the other one).
func (t *sumTree) find(u float64) int {
	k := 1
	for k < t.n2 {
		l := t.t[2*k]
		if u < l || t.t[2*k+1] == 0 {
			k = 2 * k
		} else {
			u -= l
			k = 2*k + 1
		}
	}
	return k - t.n2
}
