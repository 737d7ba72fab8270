// Package optim holds the Adam optimizer shared by the GF-SVGD sampler
// (float64 particles) and network training (float32 weights), and the
// averaged Robbins–Monro recursion with which DMALA and DLMC adapt their
// step sizes.
package optim
