// Package compress picks n points that represent a distribution from many
// candidate states (the draws of long chains): kernel herding, which
// matches the candidates' empirical measure in MMD, and Stein thinning
// (Riabiz et al. 2022), which minimises the kernel Stein discrepancy
// against the model and so needs p only up to its normaliser.
//
// Both work on the candidates' distinct states with their multiplicities
// (bit-packed, one bit per variable, when no variable has more than two
// states):
// a long chain of a small model revisits states, and nothing is ever
// computed for every pair of draws. Herding's mean embedding takes one
// pass over the distinct states per distinct state (O(U²d) for U distinct
// states); beyond Options.MaxReference distinct states it is computed
// against an evenly spaced sub-sample of the draws of that size, which the
// result records. Each greedy step then costs O(Ud).
package compress
