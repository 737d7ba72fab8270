//go:build race

package diag

// raceOn: the race detector makes sync.Pool drop workspaces at random.
const raceOn = true
