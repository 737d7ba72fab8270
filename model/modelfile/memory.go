package modelfile

import ()

// gridEdgeCount returns the number of edges of GridEdges' rows×cols grid: a
// line of k sites has k − 1 bonds, k when periodic, except that the wrap of
// a line of 2 merges with its inner bond.
func gridEdgeCount(rows, cols int, periodic bool) float64 {
	line := func(k int) float64 {
		switch {
		case !periodic || k == 1:
			return float64(k - 1)
		case k == 2:
			return 1
		}
		return float64(k)
	}
	return float64(rows)*line(cols) + float64(cols)*line(rows)
}

// jsonTextBytes is the text while it is read and decoded: io.ReadAll's
// buffer, whose last growth holds the old buffer and the new one, up to
// twice the file's size.
func jsonTextBytes(size float64) float64 { return 2 * size }

// The state values of spins and of binary units, for the shapes.
var (
	spinStates   = []float64{-1, 1}
	binaryStates = []float64{0, 1}
)

// categoricalMemory: v variables and s states in all. The model holds its
// state values, probabilities and log-probabilities (three lists of 24-byte
// headers grown by appending, and 8 bytes a state each) and its offsets: 96
// bytes a variable and 24 a state (1.0–1.1 times what stays live, 3 states
// a variable). The decoded variables and their copy for categorical.New add
// 64 bytes a variable and 8 a state at the peak (0.91–0.93).
func categoricalMemory(size, v, s float64) Memory {
	held := 96*v + 24*s
	return Memory{Peak: jsonTextBytes(size) + held + 64*v + 8*s, Held: held}
}

// isingMemory: d spins and e edges. The model holds the edges (24 bytes
// each), both directions of the adjacency (32) and per spin its field and
// offset (16) (Ising.Bytes, as measured). At the peak, the builder's edge
// list with its growth and New's map of the pairs add 40 bytes an edge, the
// fields, degrees and fill 16 a spin (0.78–0.97 for edge lists); a grid's
// edges are built twice more, each with a map, 56 bytes an edge more
// (0.82–0.98).
func isingMemory(size, d, e float64, grid bool) Memory {
	held := 56*e + 16*d
	peak := jsonTextBytes(size) + held + 40*e + 16*d
	if grid {
		peak += 56 * e
	}
	return Memory{Peak: peak, Held: held}
}

// pottsMemory: d variables of q states and e edges, from an edge list
// (list) or a grid, with per-variable "fields" (perSite) or not. The model
// holds the edges (24 bytes each), both directions of the adjacency (32),
// the fields (8 bytes a variable and state), per variable its offset (8),
// and the q state values (Potts.Bytes; 1.00 of what stays live). At the
// peak, the builder's fields (8 a variable and state) and state values (8
// a state; without them the estimate was 0.83 of what one variable of 10⁷
// states allocates), its edge list and New's map of the pairs (64 an
// edge), the degrees and fill with their
// rounding (24 a variable): 0.83–0.87 for grids of 2.5·10⁵ and 3·10⁵
// sites, 1.00 for 3·10⁴ variables of 100 states; an edge list's decoded
// rows (48 an edge) and the decoded rows of "fields" (24 a variable, 8 a
// variable and state) besides (0.68 for a chain of 2·10⁵ variables).
func pottsMemory(size, d, q, e float64, list, perSite bool) Memory {
	held := 56*e + 8*d*q + 8*d + 8*q
	peak := jsonTextBytes(size) + held + 8*d*q + 64*e + 24*d + 8*q
	if list {
		peak += 48 * e
	}
	if perSite {
		peak += 24*d + 8*d*q
	}
	return Memory{Peak: peak, Held: held}
}

// rbmMemory: d visible and m hidden units. The model holds Wᵀ and the
// tables of cosh and sinh of 2W that trackers build on first use (24 bytes
// a weight) and the biases; at the peak, before the tables, W as decoded or
// drawn (8 bytes a weight, and 24 a row) and Wᵀ: 16 bytes a weight and 48
// a unit (random: 0.99), and the decoder's transients, 8 more a weight
// (0.91–0.95).
func rbmMemory(size, d, m float64, random bool) Memory {
	held := 24*d*m + 8*(d+m)
	peak := 16*d*m + 48*(d+m)
	if !random {
		peak += jsonTextBytes(size) + 8*d*m
	}
	return Memory{Peak: peak, Held: held}
}

// allocPerPeak bounds what building a model allocates in all, garbage
// included, as a multiple of its peak (Memory.Peak without the text): an
// Ising grid's edges and maps, built three times over, allocate about five
// times the grid's peak; the fuzz test and TestEstimatesCoverBuild hold
// ParseLimit to it.
const allocPerPeak = 6
