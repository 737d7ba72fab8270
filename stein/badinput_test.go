package stein_test

import (
	"strings"
	"testing"

	"github.com/dstein/dstein/model/ising"
	"github.com/dstein/dstein/stein"
)

// Input that depends on data gets an error naming it, not a panic: a state
// index out of range (the library audit's Prepare panicked with "index out
// of range"), and a kernel on no variables.
func TestBadInputErrors(t *testing.T) {
	m, err := ising.Grid(2, 2, false, 0.3, nil)
	if err != nil {
		t.Fatal(err)
	}
	z := []int{0, 1, 1, 0, 0, 1, 2, 0}
	if _, err := stein.Prepare(m, z, 2); err == nil || !strings.Contains(err.Error(), "state 1, variable 2: state index 2") {
		t.Errorf("Prepare: %v", err)
	}
	if _, err := stein.PrepareBalanced(m, z, 2); err == nil || !strings.Contains(err.Error(), "state 1, variable 2: state index 2") {
		t.Errorf("PrepareBalanced: %v", err)
	}
	if _, err := stein.NewKernel(0, 1); err == nil {
		t.Error("NewKernel accepted 0 variables")
	}
}
