// Package optim holds the Adam optimizer shared by the GF-SVGD sampler
// (float64 particles) and network training (float32 weights).
package optim
