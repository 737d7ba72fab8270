// Package cudatest builds stand-ins for NVIDIA's driver library and its
// runtime compiler (NVRTC), so that the loaders (package cuda) and the
// commands that report GPUs are tested on machines without one: shared
// libraries with the calls they make, compiled by the machine's C compiler
// (tests skip without one).
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
#include <stdlib.h>
#include <string.h>
#define AXPY ((void *)0xa0)
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
	if (f == AXPY) { /* axpy(double a, const double *x, double *y, int n) on the host */
		double a = *(double *)params[0];
		double *x = *(double **)params[1], *y = *(double **)params[2];
		int n = *(int *)params[3];
		for (int i = 0; i < n; i++) y[i] += a * x[i];
	}
	return 0;
}

/* A device whose memory is the host's: contexts, memory, modules. */
int cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = (void *)0xc0; return 0; }
int cuDevicePrimaryCtxRelease_v2(int dev) { return 0; }
int cuCtxSetCurrent(void *ctx) { return ctx == (void *)0xc0 ? 0 : 201; }
int cuCtxSynchronize(void) { return 0; }
int cuMemGetInfo_v2(size_t *free, size_t *total) { *free = ((size_t)1) << 30; *total = ((size_t)141) << 30; return 0; }
int cuMemAlloc_v2(unsigned long long *p, size_t n) { void *q = malloc(n); if (!q) return 2; *p = (unsigned long long)q; return 0; }
int cuMemFree_v2(unsigned long long p) { free((void *)p); return 0; }
int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t n) { memcpy((void *)dst, src, n); return 0; }
int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n) { memcpy(dst, (void *)src, n); return 0; }
int cuModuleLoadData(char **mod, const char *image) { *mod = strdup(image); return 0; }
int cuModuleUnload(char *mod) { free(mod); return 0; }
/* Finds the kernels the image names: only axpy runs here. */
int cuModuleGetFunction(void **fn, const char *mod, const char *name) {
	if (strcmp(name, "axpy") == 0 && strstr(mod, "axpy")) { *fn = AXPY; return 0; }
	return 500;
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
	return compile(t, fakeSource, fmt.Sprintf("libcuda-%d-%d.so", version, count), fmt.Sprintf("-DVERSION=%d", version), fmt.Sprintf("-DCOUNT=%d", count))
}

// compile builds C source src as the shared library lib in a temporary
// directory with the given flags, and returns its path.
func compile(t testing.TB, src, lib string, flags ...string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		if cc, err = exec.LookPath("gcc"); err != nil {
			t.Skip("no C compiler to build a stand-in library")
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "fake.c")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	lib = filepath.Join(dir, lib)
	args := append([]string{"-shared", "-fPIC", "-o", lib}, flags...)
	out, err := exec.Command(cc, append(args, file)...).CombinedOutput()
	if err != nil {
		t.Fatalf("building %s: %v\n%s", lib, err, out)
	}
	return lib
}

// nvrtcSource is a stand-in for libnvrtc: "compiling" a program writes
// as its PTX a line naming the program and every option, then the source;
// a source with "#error" fails with a log that names the program.
const nvrtcSource = `
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
typedef struct { char *src, *name, *ptx, *log; } prog_t;
int nvrtcVersion(int *major, int *minor) { *major = MAJOR; *minor = MINOR; return 0; }
int nvrtcCreateProgram(prog_t **p, const char *src, const char *name, int nh, const char **h, const char **hn) {
	prog_t *q = calloc(1, sizeof(prog_t));
	q->src = strdup(src); q->name = strdup(name ? name : "default_program");
	*p = q; return 0;
}
int nvrtcCompileProgram(prog_t *p, int n, const char **opts) {
	if (strstr(p->src, "#error")) {
		size_t len = strlen(p->name) + 64;
		p->log = malloc(len);
		snprintf(p->log, len, "%s(1): error: the source asked for an error\n", p->name);
		return 6;
	}
	size_t len = strlen(p->src) + strlen(p->name) + 32;
	for (int i = 0; i < n; i++) len += strlen(opts[i]) + 1;
	p->ptx = malloc(len);
	strcpy(p->ptx, "// PTX of "); strcat(p->ptx, p->name);
	for (int i = 0; i < n; i++) { strcat(p->ptx, " "); strcat(p->ptx, opts[i]); }
	strcat(p->ptx, "\n"); strcat(p->ptx, p->src);
	p->log = strdup("");
	return 0;
}
int nvrtcGetPTXSize(prog_t *p, size_t *n) { if (!p->ptx) return 7; *n = strlen(p->ptx) + 1; return 0; }
int nvrtcGetPTX(prog_t *p, char *out) { strcpy(out, p->ptx); return 0; }
int nvrtcGetProgramLogSize(prog_t *p, size_t *n) { *n = p->log ? strlen(p->log) + 1 : 1; return 0; }
int nvrtcGetProgramLog(prog_t *p, char *out) { strcpy(out, p->log ? p->log : ""); return 0; }
int nvrtcDestroyProgram(prog_t **p) { free((*p)->src); free((*p)->name); free((*p)->ptx); free((*p)->log); free(*p); *p = 0; return 0; }
const char *nvrtcGetErrorString(int r) { return r == 6 ? "NVRTC_ERROR_COMPILATION" : "NVRTC_ERROR"; }
`

// FakeNVRTC compiles the NVRTC stand-in reporting version major.minor and
// returns its path (skipping the test without a C compiler).
func FakeNVRTC(t testing.TB, major, minor int) string {
	t.Helper()
	return compile(t, nvrtcSource, fmt.Sprintf("libnvrtc-%d-%d.so", major, minor), fmt.Sprintf("-DMAJOR=%d", major), fmt.Sprintf("-DMINOR=%d", minor))
}
