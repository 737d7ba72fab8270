//go:build !amd64 || purego

package gemm

import "math"

// useAsm is false: there is no assembly kernel on this architecture or in a
// purego build.
var useAsm = false

// useWide is false: no AVX-512 kernel either.
var useWide = false

type jobAsm struct{}

func (p *ABt) mulAsm()          { panic("gemm: no assembly kernel") }
func (j *job) doAsm(lo, hi int) { panic("gemm: no assembly kernel") }

// fmaPeak runs n steps of 12 independent FMAs (24 flops a step).
func fmaPeak(n int) {
	var c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11 float64
	x, y := 1.0, 0.0
	for range n {
		c0 = math.FMA(x, y, c0)
		c1 = math.FMA(x, y, c1)
		c2 = math.FMA(x, y, c2)
		c3 = math.FMA(x, y, c3)
		c4 = math.FMA(x, y, c4)
		c5 = math.FMA(x, y, c5)
		c6 = math.FMA(x, y, c6)
		c7 = math.FMA(x, y, c7)
		c8 = math.FMA(x, y, c8)
		c9 = math.FMA(x, y, c9)
		c10 = math.FMA(x, y, c10)
		c11 = math.FMA(x, y, c11)
	}
	fmaSink = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9 + c10 + c11
}

var fmaSink float64

// fmaPeakFlops is the number of flops in one step of fmaPeak.
const fmaPeakFlops = 24

var fmaPeakOK = true

// fmaPeak512 has no form here (fmaPeak512OK is false).
func fmaPeak512(n int) { panic("gemm: no AVX-512") }

var fmaPeak512OK = false

// packAll packs nothing where there is no assembly kernel.
func packAll(pb *PackedB) {}
