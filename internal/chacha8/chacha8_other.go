//go:build !amd64 || purego

package chacha8

// hasKernel is false: no kernel on this architecture or in a purego build.
var hasKernel = false

func period16(seed *[4]uint64, out *[periodLen]uint64) { panic("chacha8: no kernel") }
