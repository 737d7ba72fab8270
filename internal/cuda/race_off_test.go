//go:build !race

package cuda

const raceOn = false
