package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

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
	missing := filepath.Join(t.TempDir(), "libcuda.so.1")
	_, err := open(missing)
	check(err, "the driver library "+missing+" could not be opened")
	t.Setenv(DriverEnv, "")
	driverSonames = []string{"libcuda-absent.so.1"}
	_, err = Load()
	check(err, "the NVIDIA driver library is not installed (tried libcuda-absent.so.1")
	driverSonames = []string{"libcuda.so.1", "libcuda.so"}
	forget("driver:") // the absent names' result must not answer later loads
	t.Setenv(DriverEnv, "/nonexistent/libcuda.so.1")
	_, err = open(os.Getenv(DriverEnv))
	check(err, "the driver library /nonexistent/libcuda.so.1 could not be opened")
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

// TestManyArguments: the calls with the most arguments that the GPU path
// needs (cuLaunchKernel, 11, bound and through SyscallN as Queue calls it;
// cublasDgemm_v2, 14, with pointers, integers and pointers to doubles
// mixed) cross purego intact, on the stand-in.
func TestManyArguments(t *testing.T) {
	h, err := purego.Dlopen(cudatest.FakeDriver(t, 12080, 1), purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	var launch func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params, extra unsafe.Pointer) int32
	var last func(out *uint64)
	var gemm func(handle uintptr, ta, tb, m, n, k int32, alpha, a *float64, lda int32, b *float64, ldb int32, beta, c *float64, ldc int32) int32
	purego.RegisterLibFunc(&launch, h, "cuLaunchKernel")
	purego.RegisterLibFunc(&last, h, "fakeLastLaunch")
	purego.RegisterLibFunc(&gemm, h, "cublasDgemm_v2")

	params, extra := []uint64{1}, []uint64{2}
	if res := launch(0xf00d, 1, 2, 3, 4, 5, 6, 7, 0xbeef, unsafe.Pointer(&params[0]), unsafe.Pointer(&extra[0])); res != 0 {
		t.Fatalf("launch returned %d", res)
	}
	got := make([]uint64, 11)
	last(&got[0])
	want := []uint64{1, 2, 3, 4, 5, 6, 7, 0xf00d, 0xbeef, uint64(uintptr(unsafe.Pointer(&params[0]))), uint64(uintptr(unsafe.Pointer(&extra[0])))}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("cuLaunchKernel received %v, want %v", got, want)
	}
	// The same through purego.SyscallN, as Queue calls it.
	sym, err := purego.Dlsym(h, "cuLaunchKernel")
	if err != nil {
		t.Fatal(err)
	}
	clear(got)
	if r, _, _ := purego.SyscallN(sym, 0xf00d, 1, 2, 3, 4, 5, 6, 7, 0xbeef,
		uintptr(unsafe.Pointer(&params[0])), uintptr(unsafe.Pointer(&extra[0]))); int32(r) != 0 {
		t.Fatalf("launch through SyscallN returned %d", int32(r))
	}
	last(&got[0])
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("cuLaunchKernel through SyscallN received %v, want %v", got, want)
	}

	// C (2×3) = 2·Aᵀ B + 0.5 C with A 4×2 and B 4×3, column-major.
	a := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	b := []float64{1, 0, 2, 1, 0, 1, 1, 1, 3, 2, 1, 0}
	c := []float64{1, 1, 1, 1, 1, 1}
	alpha, beta := 2.0, 0.5
	if res := gemm(1, 1, 0, 2, 3, 4, &alpha, &a[0], 4, &b[0], 4, &beta, &c[0], 2); res != 0 {
		t.Fatalf("gemm returned %d", res)
	}
	for j := range 3 {
		for i := range 2 {
			var s float64
			for l := range 4 {
				s += a[l+i*4] * b[l+j*4]
			}
			if w := 2*s + 0.5; c[i+j*2] != w {
				t.Errorf("C[%d,%d] = %v, want %v", i, j, c[i+j*2], w)
			}
		}
	}
}

// forget drops a cached load, so that a test's stand-in names do not
// answer later loads of the process.
func forget(key string) {
	loadMu.Lock()
	delete(loads, key)
	loadMu.Unlock()
}

// The stand-in driver refuses launches the device would refuse (a grid
// or block dimension of 0, more than 1024 threads a block), so that the
// tests on machines without a GPU catch them: an RBM without hidden units
// once launched a grid of 0 blocks that only a device rejected.
func TestStandInRefusesBadLaunches(t *testing.T) {
	h, err := purego.Dlopen(cudatest.FakeDriver(t, 12080, 1), purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	var launch func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params, extra unsafe.Pointer) int32
	purego.RegisterLibFunc(&launch, h, "cuLaunchKernel")
	for _, d := range [][6]uint32{{0, 1, 1, 256, 1, 1}, {1, 1, 1, 0, 1, 1}, {1, 1, 1, 1025, 1, 1}, {1, 65536, 1, 1, 1, 1}, {1, 1, 1, 16, 16, 8}} {
		if res := launch(0xf00d, d[0], d[1], d[2], d[3], d[4], d[5], 0, 0, nil, nil); res == 0 {
			t.Errorf("launch of grid %v, block %v accepted", d[:3], d[3:])
		}
	}
}
