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
	"strings"
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
#include <dlfcn.h>
#define AXPY ((void *)0xa0)
typedef void (*emu_launch_t)(void **params, const unsigned *dims);
typedef struct { unsigned magic; emu_launch_t launch; } emu_fn_t;
#define EMU_MAGIC 0xe3a1a7eu
/* The emulated kernels found so far: a launch of anything else is not one. */
static emu_fn_t *emu_fns[4096];
static int emu_count = 0;
static int is_emu(void *f) {
	for (int i = 0; i < emu_count; i++) if (emu_fns[i] == f) return 1;
	return 0;
}
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
	/* The device's limits, as the driver checks them: no dimension of 0,
	   at most 1024 threads a block, grid y and z below 65536
	   (CUDA_ERROR_INVALID_VALUE otherwise). */
	if (!gx || !gy || !gz || !bx || !by || !bz || (unsigned long long)bx * by * bz > 1024 || gy > 65535 || gz > 65535) return 1;
	last_launch.f = f; last_launch.stream = stream; last_launch.params = params; last_launch.extra = extra;
	if (is_emu(f)) {
		if (!params) return 1;
		((emu_fn_t *)f)->launch(params, d);
		return 0;
	}
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
int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n) { if (!src) return 1; memcpy(dst, (void *)src, n); return 0; }
int cuMemsetD32_v2(unsigned long long p, unsigned v, size_t n) { unsigned *q = (unsigned *)p; for (size_t i = 0; i < n; i++) q[i] = v; return 0; }
/* A module is an image's text, or, for the image of the emulating NVRTC
   ("//EMU path"), the shared library at path, whose kernel NAME runs
   through its launcher NAME__launch. */
typedef struct { char *image; void *dl; } module_t;
int cuModuleLoadData(module_t **mod, const char *image) {
	module_t *m = calloc(1, sizeof(module_t));
	m->image = strdup(image);
	if (strncmp(image, "//EMU ", 6) == 0) {
		char path[4096];
		size_t i = 0;
		for (const char *p = image + 6; *p && *p != '\n' && i < sizeof(path) - 1; p++) path[i++] = *p;
		path[i] = 0;
		m->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!m->dl) { fprintf(stderr, "fake driver: %s\n", dlerror()); free(m->image); free(m); return 200; }
	}
	*mod = m;
	return 0;
}
int cuModuleUnload(module_t *m) { if (m->dl) dlclose(m->dl); free(m->image); free(m); return 0; }
/* Finds the kernels the image names: axpy in a text image, any kernel
   with a launcher in an emulated one. */
int cuModuleGetFunction(void **fn, module_t *mod, const char *name) {
	if (mod->dl) {
		char sym[512];
		snprintf(sym, sizeof(sym), "%s__launch", name);
		void *f = dlsym(mod->dl, sym);
		if (!f) return 500;
		for (int i = 0; i < emu_count; i++)
			if (emu_fns[i]->launch == (emu_launch_t)f) { *fn = emu_fns[i]; return 0; }
		if (emu_count == 4096) return 2;
		emu_fn_t *e = malloc(sizeof(emu_fn_t)); /* kept for the process's life */
		e->magic = EMU_MAGIC; e->launch = (emu_launch_t)f;
		emu_fns[emu_count++] = e;
		*fn = e;
		return 0;
	}
	if (strcmp(name, "axpy") == 0 && strstr(mod->image, "axpy")) { *fn = AXPY; return 0; }
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
	return compile(t, fakeSource, fmt.Sprintf("libcuda-%d-%d.so", version, count), fmt.Sprintf("-DVERSION=%d", version), fmt.Sprintf("-DCOUNT=%d", count), "-ldl")
}

// compiler returns the first of names on the PATH, or skips the test
// saying it needs what.
func compiler(t testing.TB, what string, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skipf("needs %s (%s)", what, strings.Join(names, " or "))
	return ""
}

// compile builds C source src as the shared library lib in a temporary
// directory with the given flags, and returns its path.
func compile(t testing.TB, src, lib string, flags ...string) string {
	t.Helper()
	cc := compiler(t, "a C compiler to build a stand-in library", "cc", "gcc")
	dir := t.TempDir()
	file := filepath.Join(dir, "fake.c")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	lib = filepath.Join(dir, lib)
	args := append([]string{"-shared", "-fPIC", "-o", lib, file}, flags...)
	out, err := exec.Command(cc, args...).CombinedOutput()
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
`

// nvrtcCalls are the calls both NVRTC stand-ins make alike: the PTX and
// the log of a compiled program, its end, and the error strings.
const nvrtcCalls = `
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
	return compile(t, nvrtcSource+nvrtcCalls, fmt.Sprintf("libnvrtc-%d-%d.so", major, minor), fmt.Sprintf("-DMAJOR=%d", major), fmt.Sprintf("-DMINOR=%d", minor))
}

// emuHeader makes CUDA C kernels plain C++ functions run on the host, one
// thread after another: the launch geometry as globals set before each
// thread, the atomics and bit casts the kernels use, and, for each kernel
// NAME that the source lists with DSTEIN_EXPORT(NAME), a launcher
// NAME__launch(params, dims) that unpacks cuLaunchKernel's parameter array
// by the kernel's own parameter types and runs every thread of the grid
// (dims: the grid's x, y, z, then the block's). Kernels that share memory
// between the threads of a block or wait for each other cannot run this
// way; dstein's kernels do neither.
const emuHeader = `
#include <math.h>
#include <string.h>
#include <stddef.h>
#include <utility>
#include <type_traits>
struct emu_dim3 { unsigned x, y, z; };
static emu_dim3 threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
static inline unsigned atomicAdd(unsigned *p, unsigned v) { unsigned o = *p; *p = o + v; return o; }
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) { unsigned long long o = *p; *p = o + v; return o; }
static inline int atomicOr(int *p, int v) { int o = *p; *p = o | v; return o; }
static inline unsigned long long __double_as_longlong(double x) { unsigned long long u; memcpy(&u, &x, 8); return (unsigned long long)u; }
static inline unsigned __float_as_uint(float x) { unsigned u; memcpy(&u, &x, 4); return u; }
template <typename... A, size_t... I>
static void emu_call(void (*f)(A...), void **p, std::index_sequence<I...>) {
	f(*(typename std::remove_cv<typename std::remove_reference<A>::type>::type *)p[I]...);
}
template <typename... A>
static void emu_launch(void (*f)(A...), void **p, const unsigned *dims) {
	gridDim = {dims[0], dims[1], dims[2]};
	blockDim = {dims[3], dims[4], dims[5]};
	for (unsigned bz = 0; bz < gridDim.z; bz++)
	for (unsigned by = 0; by < gridDim.y; by++)
	for (unsigned bx = 0; bx < gridDim.x; bx++)
	for (unsigned tz = 0; tz < blockDim.z; tz++)
	for (unsigned ty = 0; ty < blockDim.y; ty++)
	for (unsigned tx = 0; tx < blockDim.x; tx++) {
		blockIdx = {bx, by, bz};
		threadIdx = {tx, ty, tz};
		emu_call(f, p, std::index_sequence_for<A...>{});
	}
}
#define DSTEIN_EXPORT(f) extern "C" void f##__launch(void **p, const unsigned *dims) { emu_launch(f, p, dims); }
`

// emuNVRTCSource is an NVRTC whose "PTX" is a host library: compiling a
// program runs the C++ compiler CXX on the source with EMU_HEADER included
// first and the program's -D options, into a library in DIR; the PTX is
// "//EMU <library>", which the stand-in driver (FakeDriver) loads. A
// program the compiler refuses fails with the compiler's output as its
// log.
const emuNVRTCSource = `
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
typedef struct { char *src, *name, *ptx, *log; } prog_t;
static int counter = 0;
int nvrtcVersion(int *major, int *minor) { *major = 13; *minor = 0; return 0; }
int nvrtcCreateProgram(prog_t **p, const char *src, const char *name, int nh, const char **h, const char **hn) {
	prog_t *q = calloc(1, sizeof(prog_t));
	q->src = strdup(src); q->name = strdup(name ? name : "default_program");
	*p = q; return 0;
}
static char *slurp(const char *path) {
	FILE *f = fopen(path, "r");
	if (!f) return strdup("");
	fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
	char *b = malloc(n + 1);
	size_t got = fread(b, 1, n, f); b[got] = 0; fclose(f);
	return b;
}
int nvrtcCompileProgram(prog_t *p, int n, const char **opts) {
	int id = __sync_fetch_and_add(&counter, 1);
	char src[4096], lib[4096], log[4096];
	snprintf(src, sizeof(src), "%s/k%d.cu", DIR, id);
	snprintf(lib, sizeof(lib), "%s/k%d.so", DIR, id);
	snprintf(log, sizeof(log), "%s/k%d.log", DIR, id);
	FILE *f = fopen(src, "w");
	if (!f) return 1;
	fputs(p->src, f); fclose(f);
	size_t len = 8192;
	for (int i = 0; i < n; i++) len += strlen(opts[i]) + 4;
	char *cmd = malloc(len);
	snprintf(cmd, len, "%s -std=c++17 -O1 -shared -fPIC -x c++ -include %s -DDSTEIN_EMULATE", CXX, EMU_HEADER);
	for (int i = 0; i < n; i++)
		if (strncmp(opts[i], "-D", 2) == 0) { strcat(cmd, " '"); strcat(cmd, opts[i]); strcat(cmd, "'"); }
	char tail[3 * 4096 + 64];
	snprintf(tail, sizeof(tail), " %s -o %s > %s 2>&1", src, lib, log);
	strcat(cmd, tail);
	int rc = system(cmd);
	free(cmd);
	p->log = slurp(log);
	if (rc != 0) return 6;
	len = strlen(lib) + 16;
	p->ptx = malloc(len);
	snprintf(p->ptx, len, "//EMU %s\n", lib);
	return 0;
}
`

// EmulatingNVRTC compiles an NVRTC stand-in (version 13.0) whose programs
// run on the host through FakeDriver: CUDA C kernels written without
// shared memory or barriers, each listed with DSTEIN_EXPORT(name), run
// one thread after another, so that their logic is tested on machines
// without a GPU. It needs a C and a C++ compiler and skips without them.
func EmulatingNVRTC(t testing.TB) string {
	t.Helper()
	cxx := compiler(t, "a C++ compiler to emulate kernels", "g++", "c++")
	dir := t.TempDir()
	header := filepath.Join(dir, "emu.h")
	if err := os.WriteFile(header, []byte(emuHeader), 0o644); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { return fmt.Sprintf(`-D%s`, s) }
	return compile(t, emuNVRTCSource+nvrtcCalls, "libnvrtc-emu.so",
		q(fmt.Sprintf(`DIR="%s"`, dir)), q(fmt.Sprintf(`CXX="%s"`, cxx)), q(fmt.Sprintf(`EMU_HEADER="%s"`, header)))
}

// cublasSource is a stand-in for cuBLAS on the stand-in driver's memory
// (the host's): the handle, version and math mode calls, and the double
// and single precision products, column-major as cuBLAS's, computed by
// the definition.
const cublasSource = `
#include <stddef.h>
int cublasCreate_v2(void **h) { *h = (void *)0xb1a5; return 0; }
int cublasDestroy_v2(void *h) { return h == (void *)0xb1a5 ? 0 : 1; }
int cublasGetVersion_v2(void *h, int *v) { *v = 130000; return 0; }
int cublasSetMathMode(void *h, int mode) { return mode == 0 ? 0 : 7; }
const char *cublasGetStatusString(int s) { return s == 7 ? "CUBLAS_STATUS_INVALID_VALUE" : "CUBLAS_STATUS_ERROR"; }
#define GEMM(NAME, T) \
int NAME(void *h, int ta, int tb, int m, int n, int k, const T *alpha, const T *A, int lda, \
		const T *B, int ldb, const T *beta, T *C, int ldc) { \
	if (h != (void *)0xb1a5) return 1; \
	/* cuBLAS's argument checks (column-major): op(A) is m×k, op(B) k×n. */ \
	if (m < 0 || n < 0 || k < 0 || lda < (ta ? (k > 1 ? k : 1) : (m > 1 ? m : 1)) || \
		ldb < (tb ? (n > 1 ? n : 1) : (k > 1 ? k : 1)) || ldc < (m > 1 ? m : 1)) return 7; \
	for (int j = 0; j < n; j++) \
		for (int i = 0; i < m; i++) { \
			T s = 0; \
			for (int l = 0; l < k; l++) { \
				T a = ta ? A[l + (size_t)i * lda] : A[i + (size_t)l * lda]; \
				T b = tb ? B[j + (size_t)l * ldb] : B[l + (size_t)j * ldb]; \
				s += a * b; \
			} \
			C[i + (size_t)j * ldc] = *beta == 0 ? *alpha * s : *alpha * s + *beta * C[i + (size_t)j * ldc]; \
		} \
	return 0; \
}
GEMM(cublasDgemm_v2, double)
GEMM(cublasSgemm_v2, float)
`

// FakeCUBLAS compiles the cuBLAS stand-in and returns its path (skipping
// the test without a C compiler).
func FakeCUBLAS(t testing.TB) string {
	t.Helper()
	return compile(t, cublasSource, "libcublas-fake.so")
}
