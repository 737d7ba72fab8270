// Package layers holds the test that keeps ARCHITECTURE.md true: every
// package of the module appears in its table of layers, and no package
// imports one of a higher layer.
package layers
