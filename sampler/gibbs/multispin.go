package gibbs

import (
	"context"
	"math/bits"

	"github.com/dstein/dstein/internal/chacha8"
)

// Multi-spin coding (Settings.MultiSpin): the chains of a ±1 pairwise model
// are packed 64 to a machine word, chain 64b + l in bit l ("lane" l) of
// block b, so that word i of block b holds spin i of 64 chains (bit set for
// +1). A sweep updates sites 0, 1, …, d−1 of a block in order, all 64 lanes
// of a site at once, with exactly the conditional of the scalar kernel: lane
// l becomes +1 when its uniform 64-bit integer u is below T, the threshold
// ⌊p·2^64⌋ (Threshold) of its own neighbour configuration.
//
// Exactness. The comparison u < T is decided at the first bit, from the
// most significant, where u and T differ: u < T when T has the 1 there.
// The kernel draws u one bit level at a time, for all lanes at once: level
// j (j = 0, 1, …) takes a fresh 64-bit word from the block's stream, whose
// bit l is bit 63−j of lane l's u; T's bit 63−j in every lane is computed
// bit-sliced from the neighbour words (a site's 2^k thresholds, k ≤
// maxSliceDegree, make a truth table of its k neighbour spins for each
// level). A lane whose bit differs from its threshold's is decided. Once at
// most msCut lanes are undecided (or after msDepth levels), each remaining
// lane, in increasing lane order, finishes alone: one more word w from the
// stream supplies the remaining 64−j bits of its u (w >> j), which are
// compared with the low 64−j bits of its T (the high bits are equal, or the
// lane would be decided). Every lane thus compares a uniform 64-bit integer
// with its exact threshold, as the scalar kernel does; only where the bits
// come from differs. Each word read is fresh and independent of everything
// read before, and which of its bits go to which lane depends only on what
// was read before, so the lanes' uniforms are independent and uniform: the
// 64 chains of a block are independent Gibbs chains, like the scalar
// kernel's. Sites with more than maxSliceDegree neighbours are done lane by
// lane (one word per lane, as in the scalar kernel).
//
// Randomness. Block b (chains 64b … 64b+63) draws from
// key.ForIndex(rng.Sample, b) and nothing else, so a block's draws do not
// depend on how the blocks are spread over cores. The lanes of the last
// block beyond n are inactive: they draw nothing and stay −1. Chain c's draws
// depend on the other chains of its block (which bits it takes from a word),
// so they are not those of the scalar kernel, and they change with n only in
// the last block.

const (
	// maxSliceDegree is the largest degree whose threshold bits are
	// computed bit-sliced: the 2^k patterns of a site fit in one word of
	// sel.
	maxSliceDegree = 6
	// msDepth is the most bit levels compared bit-sliced.
	msDepth = 8
	// msCut is the number of undecided lanes at which the bit-sliced
	// comparison stops and the remaining lanes finish one at a time (a
	// level costs about as much as a lane alone: one word and a few dozen
	// instructions). The test in site is written for 2.
	msCut = 2
)

// multiSpin is the state of n chains of a SpinModel, multi-spin coded.
type multiSpin struct {
	k      *spinKernel
	n, d   int
	blocks int
	stride int      // words between two blocks' spins: d rounded up to a cache line
	w      []uint64 // w[b*stride+i]: spin i of block b's 64 chains
	last   uint64   // the active lanes of the last block
	src    []chacha8.State
	// sel[i*msDepth+j] has bit q set when bit 63−j of site i's threshold
	// for neighbour pattern q is set (sites of degree ≤ maxSliceDegree).
	sel []uint64
}

func newMultiSpin(k *spinKernel, n int) *multiSpin {
	d := len(k.H)
	ms := &multiSpin{k: k, n: n, d: d, blocks: (n + 63) / 64, stride: (d + 7) &^ 7}
	ms.w = make([]uint64, ms.blocks*ms.stride)
	ms.last = ^uint64(0) >> (uint(ms.blocks*64-n) & 63)
	ms.src = make([]chacha8.State, ms.blocks)
	ms.sel = make([]uint64, d*msDepth)
	ms.tabulate()
	return ms
}

// tabulate fills sel from the kernel's thresholds.
func (ms *multiSpin) tabulate() {
	k := ms.k
	clear(ms.sel)
	for i := range ms.d {
		if k.Degree(i) > maxSliceDegree {
			continue
		}
		for q := range 1 << k.Degree(i) {
			th := k.table[k.tstart[i]+q]
			for j := range msDepth {
				ms.sel[i*msDepth+j] |= (th >> (63 - j) & 1) << q
			}
		}
	}
}

// active returns the lanes of block b that hold chains.
func (ms *multiSpin) active(b int) uint64 {
	if b == ms.blocks-1 {
		return ms.last
	}
	return ^uint64(0)
}

// set puts the states z (n×d, 0 for −1 and 1 for +1) into the words.
func (ms *multiSpin) set(z []int) {
	clear(ms.w)
	for c := range ms.n {
		row := ms.w[c/64*ms.stride:]
		for i, v := range z[c*ms.d : (c+1)*ms.d] {
			row[i] |= uint64(v&1) << (c & 63)
		}
	}
}

// get writes the states into dst (n×d).
func (ms *multiSpin) get(dst []int) {
	for c := range ms.n {
		row := ms.w[c/64*ms.stride:]
		for i := range ms.d {
			dst[c*ms.d+i] = int(row[i] >> (c & 63) & 1)
		}
	}
}

// sweep updates sites 0, …, d−1 of block b in order. It looks at ctx
// before the sweep and every pollSites sites, and reports false, with the
// sweep stopped between two sites, when ctx is canceled.
func (ms *multiSpin) sweep(ctx context.Context, b int) bool {
	w := ms.w[b*ms.stride : b*ms.stride+ms.d]
	act := ms.active(b)
	var st chacha8.Stream
	st.Begin(&ms.src[b])
	src := words{src: &st}
	for lo := 0; lo < len(w); lo += pollSites {
		if ctx.Err() != nil {
			st.End()
			return false
		}
		for i := lo; i < min(lo+pollSites, len(w)); i++ {
			w[i] = ms.site(i, w, act, &src)
		}
	}
	st.End()
	return true
}

// words hands out a block's uniform 64-bit words: from its stream, or in
// tests from a list (kept small enough to be inlined).
type words struct {
	src  *chacha8.Stream
	list []uint64
	used int // words of list handed out
}

func (r *words) next() uint64 {
	if r.src == nil {
		r.used++
		return r.list[r.used-1]
	}
	return r.src.Uint64()
}

// site returns the new spins of site i in the lanes act of a block whose
// spins are w (lanes outside act come back −1).
func (ms *multiSpin) site(i int, w []uint64, act uint64, src *words) uint64 {
	k := ms.k
	nb := k.Nbr[k.Start[i]:k.Start[i+1]]
	if len(nb) > maxSliceDegree {
		return ms.lanes(i, w, act, src)
	}
	// g[v] holds the lanes whose first two neighbours make a pattern x
	// (bit 0: neighbour 0 is +1) with bit x of v set; an absent neighbour
	// counts as −1.
	var a, b uint64
	if len(nb) > 0 {
		a = w[nb[0]]
	}
	if len(nb) > 1 {
		b = w[nb[1]]
	}
	na, nb2 := ^a, ^b
	var g [16]uint64
	g[1] = na & nb2
	g[2] = a & nb2
	g[3] = nb2
	g[4] = na & b
	g[5] = na
	g[6] = a ^ b
	g[7] = ^(a & b)
	g[8] = a & b
	g[9] = ^(a ^ b)
	g[10] = a
	g[11] = a | nb2
	g[12] = b
	g[13] = na | b
	g[14] = a | b
	g[15] = ^uint64(0)
	// hm[y]: the lanes whose other neighbours (their spins in hw) make
	// pattern y.
	var hm [16]uint64
	var hw [maxSliceDegree - 2]uint64
	hm[0] = ^uint64(0)
	nh := 1
	for e, x := range nb[min(2, len(nb)):] {
		xs := w[x]
		hw[e&3] = xs
		for y := range nh {
			hm[y+nh] = hm[y] & xs
			hm[y] &^= xs
		}
		nh *= 2
	}
	und, res := act, uint64(0)
	sel := (*[msDepth]uint64)(ms.sel[i*msDepth:])
	j := uint(0) // bit levels done
	for ; j < msDepth; j++ {
		if x := und & (und - 1); x&(x-1) == 0 {
			break // at most msCut = 2 lanes undecided
		}
		// t: bit 63−j of every lane's threshold.
		f, t := sel[j], uint64(0)
		if nh == 4 {
			t = hm[0]&g[f&15] | hm[1]&g[f>>4&15] | hm[2]&g[f>>8&15] | hm[3]&g[f>>12&15]
		} else {
			for y := range nh {
				t |= hm[y&15] & g[f&15]
				f >>= 4
			}
		}
		diff := und & (src.next() ^ t)
		res |= diff & t
		und &^= diff
	}
	// The undecided lanes: their uniforms' first j bits equal their
	// thresholds'; the next 64−j bits come from one word each.
	tab := k.table[k.tstart[i]:]
	lowMask := ^uint64(0) >> j
	for und != 0 {
		l := uint(bits.TrailingZeros64(und))
		und &= und - 1
		pat := a>>l&1 | b>>l&1<<1
		for e := range len(nb) - 2 {
			pat |= hw[e&3] >> l & 1 << (e + 2)
		}
		_, borrow := bits.Sub64(src.next()>>j, tab[pat]&lowMask, 0)
		res |= borrow << l
	}
	return res
}

// lanes updates site i lane by lane, each lane comparing one word with its
// threshold.
func (ms *multiSpin) lanes(i int, w []uint64, act uint64, src *words) uint64 {
	k := ms.k
	lo, hi := k.Start[i], k.Start[i+1]
	var res uint64
	for und := act; und != 0; und &= und - 1 {
		l := uint(bits.TrailingZeros64(und))
		var th uint64
		if t := k.tstart[i]; t >= 0 {
			pat := 0
			for e, x := range k.Nbr[lo:hi] {
				pat |= int(w[x]>>l&1) << e
			}
			th = k.table[t+pat]
		} else {
			f := k.H[i]
			for e := lo; e < hi; e++ {
				f += k.Cpl[e] * float64(2*int(w[k.Nbr[e]]>>l&1)-1)
			}
			th = Threshold(f)
		}
		_, borrow := bits.Sub64(src.next(), th, 0)
		res |= borrow << l
	}
	return res
}

// msBlockWork is the number of site words (64 site updates each) a chunk of
// blocks should hold at least, so that handing it to another core pays.
const msBlockWork = 256
