package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dstein/dstein/internal/cuda/cudatest"
)

// TestLoadFakeDriver loads a fake driver through purego and reads its
// devices: the calls, their arguments and the strings cross the boundary.
func TestLoadFakeDriver(t *testing.T) {
	d, err := open(cudatest.FakeDriver(t, 12080, 2))
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != 12080 {
		t.Errorf("version %d", d.Version)
	}
	devs, err := d.Devices()
	if err != nil {
		t.Fatal(err)
	}
	want := []Device{{0, "Fake GPU 0", 141 << 30, 9, 0}, {1, "Fake GPU 1", 141 << 30, 9, 0}}
	if fmt.Sprint(devs) != fmt.Sprint(want) {
		t.Errorf("devices %+v, want %+v", devs, want)
	}
}

// TestUnavailable: every way of having no usable GPU is an *Unavailable
// whose message is one line that says which.
func TestUnavailable(t *testing.T) {
	check := func(err error, want string) {
		t.Helper()
		var u *Unavailable
		if !errors.As(err, &u) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("got %v; want a one-line *Unavailable saying %q", err, want)
		}
	}
	_, err := open(filepath.Join(t.TempDir(), "libcuda.so.1"))
	check(err, "install the driver, or set "+DriverEnv)
	t.Setenv(DriverEnv, "/nonexistent/libcuda.so.1")
	_, err = open(os.Getenv(DriverEnv))
	check(err, DriverEnv+" names could not be opened")
	t.Setenv(DriverEnv, "")

	old, err := open(cudatest.FakeDriver(t, 11080, 1))
	check(err, "the driver supports CUDA 11.8; dstein needs 12.0 or later")
	if old != nil {
		t.Error("a driver too old was returned")
	}
	d, err := open(cudatest.FakeDriver(t, 12020, 0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Devices()
	check(err, "the driver sees no device")

	// A library that is not the driver.
	libc, err := open("libc.so.6")
	check(err, "has no function cuInit")
	if libc != nil {
		t.Error("libc was taken for the driver")
	}
}

func TestVersionString(t *testing.T) {
	for v, want := range map[int]string{12080: "12.8", 13000: "13.0", 12000: "12.0", 11040: "11.4"} {
		if got := versionString(v); got != want {
			t.Errorf("versionString(%d) = %s, want %s", v, got, want)
		}
	}
}
