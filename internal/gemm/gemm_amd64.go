//go:build amd64 && !purego

package gemm

import (
	"golang.org/x/sys/cpu"

	"github.com/dstein/dstein/internal/parallel"
)

// useAsm selects an assembly kernel, useWide the AVX-512 one among them
// (where the CPU and the operating system have AVX-512F); tests flip them
// to compare the paths, and GODEBUG=cpu.avx512f=off (or cpu.avx2=off)
// turns them off for a whole run.
var (
	useAsm  = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	useWide = useAsm && cpu.X86.HasAVX512F
)

// Each micro-kernel computes a tile of mr rows × nr columns of C in twelve
// vector registers: each step along k broadcasts one element of A per row
// and multiplies it into three vectors of packed elements of B, 4 of them
// (AVX2, nr = 12) or 8 (AVX-512, nr = 24).
const (
	mr    = 4
	nrAVX = 12
	nrMax = 24
)

// Cache blocking. They are variables only so that tests can check that the
// blocking does not change the bits.
var (
	// kc is the depth of a slice of k: a packed panel of B (kc×nr, 24 KiB)
	// stays in L1 while the kernel runs down a chunk of rows, whose packed
	// slice of A (mcPanels·mr rows × kc, 128 KiB) stays in L2. kcWide is
	// the AVX-512 kernel's, whose panels are twice as wide.
	kc     = 256
	kcWide = 128
	// nc is the number of columns of B packed at once (rounded down to a
	// multiple of nr): the packed block (kc×nc, 2 MiB) is shared by all
	// workers.
	nc = 1008
	// mcPanels caps a parallel chunk, in tiles of mr rows.
	mcPanels = 16
	// packGrain is the number of panels of B one packing chunk handles.
	packGrain = 4
)

// jobAsm is the assembly path's part of a job.
type jobAsm struct {
	bp     []float64 // packed B: panels of kb×nr, k-major, zero padded
	panel  []float64 // the panels the kernel reads: bp, or a PackedB's
	pc, kb int       // the k range [pc, pc+kb) being multiplied
	jc, nb int       // the columns [jc, jc+nb) packed in bp
	first  int       // the first tile row of the parallel range
	nr     int       // the kernel's tile width
	wide   bool      // the AVX-512 kernel (else AVX2)
}

// kern runs the job's kernel on one tile (see kern4x12).
func (j *job) kern(kb int, a, b, c *float64, ldc int, load bool) {
	if j.wide {
		kern4x24(kb, a, b, c, ldc, load)
		return
	}
	kern4x12(kb, a, b, c, ldc, load)
}

// mulAsm runs the product with the assembly kernel. For each block of
// columns and each slice of k, in increasing order, it packs B, then runs
// chunks of rows in parallel, each packing its rows of A. Each entry of C
// starts from 0 in the first slice, is stored, and is loaded again by the
// next slice: its FMAs run in order of increasing k whatever the blocking.
func (p *ABt) mulAsm() {
	cols := p.N // the columns of C that are written: [0, cols)
	if p.Lower {
		cols = p.M - 1
	}
	if cols <= 0 {
		return
	}
	j := getJob()
	j.prod = *p
	j.wide = useWide
	nr, depth := nrAVX, kc
	if j.wide {
		nr, depth = nrMax, kcWide
	}
	j.nr = nr
	ncb := min(max(nr, nc/nr*nr), (cols+nr-1)/nr*nr)
	pk := p.Packed
	if pk != nil {
		pk.check(p)
		if pk.blocks == nil || pk.wide != j.wide || pk.ncb != ncb || pk.kc != depth || p.Lower {
			pk = nil // packed for another kernel or blocking (tests flip them)
		}
	}
	if need := ncb * min(depth, p.K); cap(j.bp) < need && pk == nil {
		j.bp = make([]float64, need)
	}
	tiles := (p.M + mr - 1) / mr
	block := 0 // the PackedB's block of (jc, pc)
	for jc := 0; jc < cols; jc += ncb {
		nb := min(ncb, cols-jc)
		first := 0
		if p.Lower {
			first = (jc + 1) / mr // rows i ≤ jc have no column j ≥ jc with j < i
		}
		// Chunks of rows: about 4 per worker for balance, at most mcPanels
		// tiles for the cache, and enough multiply-adds (mr·nb·depth a tile)
		// to be worth another core (parallel.MinWork).
		grain := min(mcPanels, parallel.GrainWork(tiles-first, float64(mr*nb*min(depth, p.K))))
		packs := parallel.GrainWork((nb+nr-1)/nr, float64(nr*min(depth, p.K)))
		for pc := 0; pc < p.K; pc += depth {
			if p.canceled() {
				j.panel = nil
				putJob(j)
				return
			}
			j.pc, j.kb, j.jc, j.nb, j.first = pc, min(depth, p.K-pc), jc, nb, first
			if pk != nil {
				j.panel = pk.blocks[block]
				block++
			} else {
				j.mode = modePack
				parallel.ForIf(!p.Serial, (nb+nr-1)/nr, max(packGrain, packs), j)
				j.panel = j.bp
			}
			j.mode = modeKernel
			parallel.ForIf(!p.Serial, tiles-first, grain, j)
		}
	}
	j.panel = nil
	putJob(j)
}

// packAll packs the whole of b for PackB, block by block in mulAsm's
// order: the columns in blocks of ncb, each in slices of k of depth.
func packAll(pb *PackedB) {
	j := getJob()
	own := j.bp
	j.prod = ABt{B: pb.b, N: pb.n, K: pb.k, Ldb: pb.ldb}
	j.wide = useWide
	nr, depth := nrAVX, kc
	if j.wide {
		nr, depth = nrMax, kcWide
	}
	j.nr = nr
	ncb := min(max(nr, nc/nr*nr), (pb.n+nr-1)/nr*nr)
	for jc := 0; jc < pb.n; jc += ncb {
		for pc := 0; pc < pb.k; pc += depth {
			nb := min(ncb, pb.n-jc)
			j.pc, j.kb, j.jc, j.nb = pc, min(depth, pb.k-pc), jc, nb
			j.bp = make([]float64, (nb+nr-1)/nr*nr*j.kb)
			j.packB(0, (nb+nr-1)/nr)
			pb.blocks = append(pb.blocks, j.bp)
		}
	}
	pb.wide, pb.ncb, pb.kc = j.wide, ncb, depth
	j.bp = own
	putJob(j)
}

func (j *job) doAsm(lo, hi int) {
	if j.mode == modePack {
		j.packB(lo, hi)
		return
	}
	j.tiles(j.first+lo, j.first+hi)
}

// packB packs the panels [lo, hi) of the current block of B: panel q holds
// columns jc+q·nr … jc+q·nr+nr−1 as kb groups of nr, zeros past the block.
// It copies four columns at a time, so that it writes 32 bytes at once.
func (j *job) packB(lo, hi int) {
	p := &j.prod
	kb, nr := j.kb, j.nr
	end := j.jc + j.nb
	if p.BKxN {
		j.packBKxN(lo, hi)
		return
	}
	for q := lo; q < hi; q++ {
		dst := j.bp[q*nr*kb : (q+1)*nr*kb]
		for c := 0; c < nr; c += 4 {
			col := j.jc + q*nr + c
			if col+4 <= end {
				b0 := p.B[col*p.Ldb+j.pc : col*p.Ldb+j.pc+kb]
				b1 := p.B[(col+1)*p.Ldb+j.pc : (col+1)*p.Ldb+j.pc+kb]
				b2 := p.B[(col+2)*p.Ldb+j.pc : (col+2)*p.Ldb+j.pc+kb]
				b3 := p.B[(col+3)*p.Ldb+j.pc : (col+3)*p.Ldb+j.pc+kb]
				for k, v := range b0 {
					d := dst[k*nr+c : k*nr+c+4]
					d[0], d[1], d[2], d[3] = v, b1[k], b2[k], b3[k]
				}
				continue
			}
			for cc := c; cc < c+4; cc++ {
				if col := j.jc + q*nr + cc; col < end {
					for k, v := range p.B[col*p.Ldb+j.pc : col*p.Ldb+j.pc+kb] {
						dst[k*nr+cc] = v
					}
				} else {
					for k := range kb {
						dst[k*nr+cc] = 0
					}
				}
			}
		}
	}
}

// packBKxN is packB for a B stored K×N (BKxN): each step of k of a panel
// is a contiguous run of B's row.
func (j *job) packBKxN(lo, hi int) {
	p := &j.prod
	kb, nr := j.kb, j.nr
	end := j.jc + j.nb
	for q := lo; q < hi; q++ {
		dst := j.bp[q*nr*kb : (q+1)*nr*kb]
		col := j.jc + q*nr
		w := min(nr, end-col)
		for k := range kb {
			row := p.B[(j.pc+k)*p.Ldb+col:]
			d := dst[k*nr : k*nr+nr]
			switch {
			case w == nrMax && nr == nrMax: // whole panels: moves, not memmove calls
				*(*[nrMax]float64)(d) = [nrMax]float64(row)
			case w == nrAVX && nr == nrAVX:
				*(*[nrAVX]float64)(d) = [nrAVX]float64(row)
			default:
				copy(d, row[:w])
				clear(d[w:])
			}
		}
	}
}

// packA packs the tile rows [lo, hi) of A's current slice into ap: tile t
// holds kb groups of mr elements, one per row, zeros past M.
func (j *job) packA(ap []float64, lo, hi int) {
	p := &j.prod
	kb := j.kb
	for t := lo; t < hi; t++ {
		dst := ap[(t-lo)*mr*kb : (t-lo+1)*mr*kb]
		i0 := t * mr
		if i0+mr <= p.M {
			a0 := p.A[i0*p.Lda+j.pc : i0*p.Lda+j.pc+kb]
			a1 := p.A[(i0+1)*p.Lda+j.pc : (i0+1)*p.Lda+j.pc+kb]
			a2 := p.A[(i0+2)*p.Lda+j.pc : (i0+2)*p.Lda+j.pc+kb]
			a3 := p.A[(i0+3)*p.Lda+j.pc : (i0+3)*p.Lda+j.pc+kb]
			for k, v := range a0 {
				d := dst[k*mr : k*mr+mr]
				d[0], d[1], d[2], d[3] = v, a1[k], a2[k], a3[k]
			}
			continue
		}
		for r := range mr {
			if i := i0 + r; i < p.M {
				for k, v := range p.A[i*p.Lda+j.pc : i*p.Lda+j.pc+kb] {
					dst[k*mr+r] = v
				}
			} else {
				for k := range kb {
					dst[k*mr+r] = 0
				}
			}
		}
	}
}

// tiles runs the kernel on the tile rows [lo, hi) of the current block,
// panel by panel, so that a packed panel of B stays in L1 while the rows
// pass.
func (j *job) tiles(lo, hi int) {
	p := &j.prod
	kb, load, nr := j.kb, j.pc > 0, j.nr
	end := j.jc + j.nb // columns [jc, end) are written
	abuf := getBuf((hi - lo) * mr * kb)
	ap := *abuf
	j.packA(ap, lo, hi)
	var tile [mr * nrMax]float64
	for q := 0; q*nr < j.nb; q++ {
		j0 := j.jc + q*nr
		b := &j.panel[q*nr*kb]
		for t := lo; t < hi; t++ {
			i0 := t * mr
			rows := min(mr, p.M-i0)
			if p.Lower && j0 >= i0+rows-1 {
				continue // no entry j < i in this tile
			}
			a := &ap[(t-lo)*mr*kb]
			if rows == mr && j0+nr <= end && (!p.Lower || j0+nr <= i0+1) {
				j.kern(kb, a, b, &p.C[i0*p.Ldc+j0], p.Ldc, load)
				continue
			}
			// An edge tile: run it in a scratch tile and copy the entries
			// that are written.
			if load {
				for r := range rows {
					w := tileCols(p, nr, j0, end, i0+r)
					copy(tile[r*nr:r*nr+w], p.C[(i0+r)*p.Ldc+j0:])
				}
			}
			j.kern(kb, a, b, &tile[0], nr, load)
			for r := range rows {
				w := tileCols(p, nr, j0, end, i0+r)
				copy(p.C[(i0+r)*p.Ldc+j0:(i0+r)*p.Ldc+j0+w], tile[r*nr:r*nr+w])
			}
		}
	}
	putBuf(abuf)
}

// tileCols returns how many of the nr columns from j0 are written in row i.
func tileCols(p *ABt, nr, j0, end, i int) int {
	if p.Lower {
		end = min(end, i)
	}
	return max(0, min(nr, end-j0))
}

// kern4x12 computes the mr×nr tile c (leading dimension ldc) over kb steps
// of k from a packed panel of A (kb groups of mr) and one of B (kb groups of
// nr). Each entry starts from c's value if load, else from 0, and takes one
// FMA per step.
//
//go:noescape
func kern4x12(kb int, a *float64, b *float64, c *float64, ldc int, load bool)

// kern4x24 is kern4x12 for a tile of mr×24 (AVX-512F): panels of B of
// kb groups of 24.
//
//go:noescape
func kern4x24(kb int, a *float64, b *float64, c *float64, ldc int, load bool)

// fmaPeak runs n steps of 12 independent vector FMAs (AVX2), fmaPeak512
// the same with 512-bit vectors (AVX-512F).
//
//go:noescape
func fmaPeak(n int)

//go:noescape
func fmaPeak512(n int)

// fmaPeakFlops is the number of flops in one step of fmaPeak, which needs
// AVX2 and FMA (fmaPeakOK).
const fmaPeakFlops = 12 * 4 * 2

var fmaPeakOK = useAsm

// fmaPeak512OK: fmaPeak512 needs AVX-512F; it does twice fmaPeak's flops
// a step.
var fmaPeak512OK = useWide
