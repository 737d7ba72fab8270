// Package iid is the "exact" method: n independent exact samples of a
// model, from an exact sampler (package exact: enumeration, transfer over
// Ising grids, hidden-unit enumeration for RBMs, variable elimination for
// factor graphs). It is one-shot: its single step draws all n samples.
package iid
