//go:build !amd64 || purego

package transform

// usePairs is false: there are no vector kernels on this architecture or in
// a purego build.
var usePairs = false

func pairStepsAVX512(z, t, x, cut *float64, tau float64, groups int) {
	panic("transform: no AVX-512 kernel")
}

func pairMembershipsAVX512(mem, dmem, z, e *float64, tau, minm float64, groups int) {
	panic("transform: no AVX-512 kernel")
}
