package factorgraph

import (
	"fmt"
	"math"
)

// noStateError reports a variable all of whose states prune ruled out.
type noStateError struct{ v int }

func (e *noStateError) Error() string {
	return fmt.Sprintf("the factors' zero entries rule out every state of variable %d, so every configuration has probability zero", e.v)
}

// advance moves the digits of a mixed-radix counter (the last digit fastest,
// digit j in [0, card[j])) to the next assignment, wrapping to all zeros
// after the last one.
func advance(digits, card []int) {
	for j := len(digits) - 1; j >= 0; j-- {
		digits[j]++
		if digits[j] < card[j] {
			return
		}
		digits[j] = 0
	}
}

// prune computes g.possible by generalised arc consistency over the zero
// entries of the factors: state s of variable v is ruled out when some factor
// over v has no non-zero entry with z_v = s whose other variables are in
// states still possible. It repeats until nothing changes and fails when a
// variable loses every state.
//
// Each state ruled out has probability zero: by induction over the order of
// removal, any configuration using it either hits the zero entries of the
// factor that removed it or uses a state removed earlier.
func (g *Graph) prune() error {
	g.possible = make([]bool, g.off[len(g.card)])
	for k := range g.possible {
		g.possible[k] = true
	}
	maxSup := 0
	queue := make([]int, 0, len(g.fac))
	inQueue := make([]bool, len(g.fac))
	for k := len(g.fac) - 1; k >= 0; k-- {
		f := &g.fac[k]
		sum := 0
		for _, c := range f.card {
			sum += c
		}
		maxSup = max(maxSup, sum)
		if len(f.scope) > 0 {
			queue = append(queue, k)
			inQueue[k] = true
		}
	}
	sup := make([]bool, maxSup) // sup[supOff[j]+s]: state s of scope position j has support
	supOff := make([]int, g.maxScope+1)
	digits := make([]int, g.maxScope)
	for len(queue) > 0 {
		k := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		inQueue[k] = false
		f := &g.fac[k]
		r := len(f.scope)
		for j, c := range f.card {
			supOff[j+1] = supOff[j] + c
		}
		clear(sup[:supOff[r]])
		d := digits[:r]
		clear(d)
		for _, x := range f.table {
			if !math.IsInf(x, -1) {
				ok := true
				for j, v := range f.scope {
					if !g.possible[g.off[v]+d[j]] {
						ok = false
						break
					}
				}
				if ok {
					for j := range d {
						sup[supOff[j]+d[j]] = true
					}
				}
			}
			advance(d, f.card)
		}
		for j, v := range f.scope {
			changed, left := false, 0
			for s := range f.card[j] {
				p := &g.possible[g.off[v]+s]
				if *p && !sup[supOff[j]+s] {
					*p = false
					changed = true
				}
				if *p {
					left++
				}
			}
			if !changed {
				continue
			}
			if left == 0 {
				return &noStateError{v}
			}
			// Removing states of v that have no support in f leaves the
			// supports of f's other positions intact; revisit v's other
			// factors.
			for a := g.adjStart[v]; a < g.adjStart[v+1]; a++ {
				if o := g.adjF[a]; o != k && !inQueue[o] {
					queue = append(queue, o)
					inQueue[o] = true
				}
			}
		}
	}
	return nil
}
