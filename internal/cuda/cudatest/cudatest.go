// Package cudatest builds a stand-in for NVIDIA's driver library, so that
// the loader (package cuda) and the commands that report GPUs are tested
// on machines without one: a shared library with the driver calls they
// make, compiled by the machine's C compiler (tests skip without one).
package cudatest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// fakeSource is a stand-in for libcuda.so.1 with the calls cuda.Load makes:
// the version and number of devices are set when it is compiled, and
// cuDeviceGetCount fails until cuInit was called (as the driver's does).
const fakeSource = `
#include <stdio.h>
#include <stddef.h>
static int inited = 0;
int cuInit(unsigned int flags) { inited = 1; return 0; }
int cuDriverGetVersion(int *v) { *v = VERSION; return 0; }
int cuDeviceGetCount(int *n) { if (!inited) return 3; *n = COUNT; return 0; }
int cuDeviceGet(int *d, int ordinal) { if (ordinal >= COUNT) return 101; *d = ordinal; return 0; }
int cuDeviceGetName(char *name, int len, int dev) { snprintf(name, len, "Fake GPU %d", dev); return 0; }
int cuDeviceTotalMem_v2(size_t *bytes, int dev) { *bytes = ((size_t)141) << 30; return 0; }
int cuDeviceGetAttribute(int *v, int attr, int dev) { *v = attr == 75 ? 9 : 0; return 0; }
int cuGetErrorString(int res, const char **s) { *s = res == 3 ? "initialization error" : "unknown error"; return 0; }
`

// FakeDriver compiles the fake driver with the given driver API version
// (12080 for CUDA 12.8) and number of devices, and returns its path. It
// needs a C compiler and skips the test without one (dstein needs none:
// only this stand-in does).
func FakeDriver(t testing.TB, version, count int) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		if cc, err = exec.LookPath("gcc"); err != nil {
			t.Skip("no C compiler to build a fake driver library")
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "fake.c")
	if err := os.WriteFile(src, []byte(fakeSource), 0o644); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, fmt.Sprintf("libcuda-%d-%d.so", version, count))
	out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, fmt.Sprintf("-DVERSION=%d", version), fmt.Sprintf("-DCOUNT=%d", count), src).CombinedOutput()
	if err != nil {
		t.Fatalf("building the fake driver: %v\n%s", err, out)
	}
	return lib
}
