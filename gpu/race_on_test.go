//go:build race

package gpu

// raceOn: under the race detector the CPU side's sync.Pools (the
// kernel's median selection, the surrogate's scratch, the worker pool's
// batches) drop items at random, so a step's allocations are not
// counted under it.
const raceOn = true
