//go:build !amd64 || purego

package vec

// useAsm is false: no vector loops on this architecture or in a purego
// build.
var useAsm = false

func addMul4AVX2(u *float64, t *[4]float64, w0, w1, w2, w3 *float64, groups int) {
	panic("vec: no vector loop")
}

func addMulAVX2(u *float64, t float64, w *float64, groups int) { panic("vec: no vector loop") }

// useWide is false: no AVX-512 loops either.
var useWide = false

func countAtLeastAVX512(dst *uint8, m *uint64, mask uint64, thr *uint64, stride, k, groups int) {
	panic("vec: no vector loop")
}

func spinsAVX512(s, e *float64, w *uint64, groups int) { panic("vec: no vector loop") }
