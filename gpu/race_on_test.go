//go:build race

package gpu

// raceOn: the race detector's sync.Pool drops items at random, so the
// allocation counts of pooled calls are not checked under it.
const raceOn = true
