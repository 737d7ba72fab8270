package sampler

import (
	"errors"
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

// CheckDevice: the CPU always; a device without a registered check (a
// program that did not link package gpu) says how to get one; a
// registered check's error is returned as it is.
func TestCheckDevice(t *testing.T) {
	checks.Lock()
	saved := checks.m
	checks.m = map[Device]func() error{}
	checks.Unlock()
	defer func() {
		checks.Lock()
		checks.m = saved
		checks.Unlock()
	}()
	if err := CheckDevice(CPU); err != nil {
		t.Errorf("the CPU: %v", err)
	}
	if err := CheckDevice(CUDA); err == nil || !strings.Contains(err.Error(), "importing github.com/dstein/dstein/gpu") {
		t.Errorf("CUDA without a check: %v", err)
	}
	RegisterDeviceCheck(CUDA, func() error { return errors.New("no usable NVIDIA GPU") })
	if err := CheckDevice(CUDA); err == nil || err.Error() != "no usable NVIDIA GPU" {
		t.Errorf("CUDA with a failing check: %v", err)
	}
}
