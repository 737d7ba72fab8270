// Package suggest finds the names closest to a mistyped one, for "did you
// mean" hints.
package suggest
