// Package ising implements Ising models with ±1 spins on any graph:
//
//	log p*(z) = Σ_{(i,j)∈E} J_ij z_i z_j + Σ_i h_i z_i,
//
// each edge counted once. Builders cover the rows×cols grid (open or
// periodic boundary), the complete graph and an explicit edge list. Spins use
// dstein's state order: index 0 is −1, index 1 is +1.
package ising
