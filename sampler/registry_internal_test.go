package sampler

import (
	"strings"
	"testing"
)

// A program that never imported sampler/all gets an error that says how
// to register the methods, not an empty list of them.
func TestLookupWithoutMethodsSaysWhy(t *testing.T) {
	regMu.Lock()
	saved, savedOrder := methods, order
	methods, order = map[string]*Method{}, nil
	regMu.Unlock()
	defer func() {
		regMu.Lock()
		methods, order = saved, savedOrder
		regMu.Unlock()
	}()
	_, err := Lookup("gibbs")
	if err == nil || !strings.Contains(err.Error(), "import github.com/dstein/dstein/sampler/all") {
		t.Errorf("Lookup on an empty registry: %v; want the import that registers the methods", err)
	}
}
