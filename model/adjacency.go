package model

import (
	"fmt"
	"math"
)

// Adjacency holds the edges of a pairwise model in compressed rows: the
// neighbours of variable i are Nbr[Start[i]:Start[i+1]], with the
// couplings Cpl[Start[i]:Start[i+1]]; each edge appears at both ends, in
// the order of the edges.
type Adjacency struct {
	Start, Nbr []int
	Cpl        []float64
	MaxDeg     int // the largest number of neighbours of a variable
}

// NewAdjacency checks the m edges of a pairwise model of n variables,
// edge(k) giving edge k's ends and coupling: each must join two different
// variables in [0, n), each pair at most once, with a finite coupling. The
// errors name a variable by noun ("spin", "variable"). It returns the
// edges' adjacency.
func NewAdjacency(n int, noun string, m int, edge func(k int) (i, j int, c float64)) (Adjacency, error) {
	seen := make(map[[2]int]int, m)
	deg := make([]int, n)
	for k := range m {
		i, j, c := edge(k)
		if i < 0 || i >= n || j < 0 || j >= n {
			return Adjacency{}, fmt.Errorf("edge %d (%d, %d) names a %s outside [0, %d)", k, i, j, noun, n)
		}
		if i == j {
			return Adjacency{}, fmt.Errorf("edge %d joins %s %d to itself", k, noun, i)
		}
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return Adjacency{}, fmt.Errorf("edge %d (%d, %d) has coupling %v; want a finite number", k, i, j, c)
		}
		key := [2]int{min(i, j), max(i, j)}
		if prev, ok := seen[key]; ok {
			return Adjacency{}, fmt.Errorf("edges %d and %d both join %ss %d and %d", prev, k, noun, key[0], key[1])
		}
		seen[key] = k
		deg[i]++
		deg[j]++
	}
	a := Adjacency{Start: make([]int, n+1)}
	for i := range n {
		a.Start[i+1] = a.Start[i] + deg[i]
		a.MaxDeg = max(a.MaxDeg, deg[i])
	}
	a.Nbr = make([]int, a.Start[n])
	a.Cpl = make([]float64, a.Start[n])
	fill := append([]int(nil), a.Start[:n]...)
	for k := range m {
		i, j, c := edge(k)
		a.Nbr[fill[i]], a.Cpl[fill[i]] = j, c
		fill[i]++
		a.Nbr[fill[j]], a.Cpl[fill[j]] = i, c
		fill[j]++
	}
	return a, nil
}
