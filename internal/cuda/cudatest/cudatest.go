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

/* The shapes of the calls that take the most arguments, to check that
   they cross purego intact: cuLaunchKernel's 11 and cublasDgemm_v2's 14. */
typedef struct { unsigned dims[7]; void *f, *stream, **params, **extra; } launch_t;
static launch_t last_launch;
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shared, void *stream, void **params, void **extra) {
	unsigned d[7] = {gx, gy, gz, bx, by, bz, shared};
	for (int i = 0; i < 7; i++) last_launch.dims[i] = d[i];
	last_launch.f = f; last_launch.stream = stream; last_launch.params = params; last_launch.extra = extra;
	return 0;
}
/* Writes what the last launch received into out: the 7 numbers, then the 4 pointers. */
void fakeLastLaunch(unsigned long long *out) {
	for (int i = 0; i < 7; i++) out[i] = last_launch.dims[i];
	out[7] = (unsigned long long)last_launch.f; out[8] = (unsigned long long)last_launch.stream;
	out[9] = (unsigned long long)last_launch.params; out[10] = (unsigned long long)last_launch.extra;
}
/* Column-major C = alpha op(A) op(B) + beta C, op = transpose when 1, on the host. */
int cublasDgemm_v2(void *handle, int ta, int tb, int m, int n, int k, const double *alpha,
		const double *A, int lda, const double *B, int ldb, const double *beta, double *C, int ldc) {
	if (handle == 0) return 1;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++) {
			double s = 0;
			for (int l = 0; l < k; l++) {
				double a = ta ? A[l + i * lda] : A[i + l * lda];
				double b = tb ? B[j + l * ldb] : B[l + j * ldb];
				s += a * b;
			}
			C[i + j * ldc] = *alpha * s + *beta * C[i + j * ldc];
		}
	return 0;
}
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
