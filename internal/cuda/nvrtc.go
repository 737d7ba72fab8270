package cuda

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"
)

// NVRTCEnv names the environment variable that gives NVRTC's path (or
// soname) instead of libnvrtc.so.13 or .12.
const NVRTCEnv = "DSTEIN_CUDA_NVRTC"

// nvrtcSonames are tried in turn when NVRTCEnv is unset: CUDA 13's, then
// 12's, through the loader's search path, then in the toolkit's usual
// places (which the loader's path often lacks), then CUDA 11's (Debian's
// package of 11.8).
var nvrtcSonames = []string{"libnvrtc.so.13", "libnvrtc.so.12",
	"/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.12",
	"/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.13", "/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.12",
	"libnvrtc.so.11.2"}

// NVRTC is the loaded runtime compiler, which turns CUDA C into PTX that
// the driver loads.
type NVRTC struct {
	// Path is the library as it was opened; Major and Minor its version.
	Path         string
	Major, Minor int

	nvrtcVersion           func(major, minor *int32) int32
	nvrtcCreateProgram     func(prog *uintptr, src, name *byte, headers int32, hsrc, hnames unsafe.Pointer) int32
	nvrtcCompileProgram    func(prog uintptr, n int32, opts unsafe.Pointer) int32
	nvrtcGetPTXSize        func(prog uintptr, size *uint64) int32
	nvrtcGetPTX            func(prog uintptr, ptx *byte) int32
	nvrtcGetProgramLogSize func(prog uintptr, size *uint64) int32
	nvrtcGetProgramLog     func(prog uintptr, log *byte) int32
	nvrtcDestroyProgram    func(prog *uintptr) int32
	nvrtcGetErrorString    func(res int32) *byte
}

// LoadNVRTC opens NVRTC (NVRTCEnv's, else by soname) and reads its
// version, once per library.
func LoadNVRTC() (*NVRTC, error) {
	return LoadNVRTCFor(0)
}

// LoadNVRTCFor opens the NVRTC whose PTX the driver of version driver
// (cuDriverGetVersion's number, 13000 for CUDA 13.0; 0: any) can load:
// the sonames of the driver's major version first, and an NVRTC newer
// than the driver is refused. The driver JIT-compiles PTX only of an ISA
// it knows: PTX from NVRTC 12.8 on a 12.4 driver, or from libnvrtc.so.13
// on a 12.x driver, fails to load (CUDA_ERROR_UNSUPPORTED_PTX_VERSION).
func LoadNVRTCFor(driver int) (*NVRTC, error) {
	path := os.Getenv(NVRTCEnv)
	return cached(fmt.Sprintf("nvrtc:%s:%d", path, driver), func() (*NVRTC, error) { return openNVRTC(path, driver) })
}

// majorFirst puts the sonames of the driver's major version first (names
// itself for driver ≤ 0).
func majorFirst(names []string, driver int) []string {
	if driver <= 0 {
		return names
	}
	tag := fmt.Sprintf(".so.%d", driver/1000)
	var mine, others []string
	for _, n := range names {
		if strings.Contains(n, tag) {
			mine = append(mine, n)
		} else {
			others = append(others, n)
		}
	}
	return append(mine, others...)
}

func openNVRTC(path string, driver int) (*NVRTC, error) {
	lib := library{env: NVRTCEnv, what: "NVRTC library", missing: "CUDA's runtime compiler (NVRTC) is not installed",
		fix: "install the CUDA toolkit's libnvrtc", names: majorFirst(nvrtcSonames, driver)}
	handle, path, err := lib.open(path)
	if err != nil {
		return nil, err
	}
	n := &NVRTC{Path: path}
	if err := bind(handle, path, "NVRTC", []symbol{
		{"nvrtcVersion", &n.nvrtcVersion},
		{"nvrtcCreateProgram", &n.nvrtcCreateProgram},
		{"nvrtcCompileProgram", &n.nvrtcCompileProgram},
		{"nvrtcGetPTXSize", &n.nvrtcGetPTXSize},
		{"nvrtcGetPTX", &n.nvrtcGetPTX},
		{"nvrtcGetProgramLogSize", &n.nvrtcGetProgramLogSize},
		{"nvrtcGetProgramLog", &n.nvrtcGetProgramLog},
		{"nvrtcDestroyProgram", &n.nvrtcDestroyProgram},
		{"nvrtcGetErrorString", &n.nvrtcGetErrorString},
	}); err != nil {
		return nil, err
	}
	var major, minor int32
	if res := n.nvrtcVersion(&major, &minor); res != 0 {
		return nil, &Unavailable{Reason: n.describe("nvrtcVersion", res)}
	}
	n.Major, n.Minor = int(major), int(minor)
	// 11.8 is the first NVRTC that compiles for Hopper (compute_90); its
	// PTX (ISA 7.8) loads on every driver dstein accepts (CUDA 12.0 or
	// later). A GPU newer than an NVRTC gets NVRTC's own error for its
	// architecture when the kernels are compiled.
	if n.Major < 11 || n.Major == 11 && n.Minor < 8 {
		return nil, &Unavailable{Reason: fmt.Sprintf("%s is NVRTC %d.%d; dstein needs 11.8 or later", path, n.Major, n.Minor)}
	}
	if driver > 0 && n.Major*1000+n.Minor*10 > driver {
		return nil, &Unavailable{Reason: fmt.Sprintf("%s is NVRTC %d.%d, newer than the driver's CUDA %s, which cannot load its PTX; install an NVRTC of CUDA %s or older, or set %s to one", path, n.Major, n.Minor, versionString(driver), versionString(driver), NVRTCEnv)}
	}
	return n, nil
}

// CompileError is a program NVRTC refused, with its log.
type CompileError struct {
	Name, Log string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("NVRTC could not compile %s: %s", e.Name, oneLine(fmt.Errorf("%s", e.Log)))
}

// Compile compiles CUDA C source (named name in messages) with the given
// options (such as "--gpu-architecture=compute_90") and returns its PTX,
// NUL-terminated as the driver's cuModuleLoadData takes it.
// A program NVRTC refuses is a *CompileError with NVRTC's log.
func (n *NVRTC) Compile(src, name string, opts ...string) ([]byte, error) {
	csrc, cname := cBytes(src), cBytes(name)
	var prog uintptr
	if res := n.nvrtcCreateProgram(&prog, &csrc[0], &cname[0], 0, nil, nil); res != 0 {
		return nil, fmt.Errorf("%s", n.describe("nvrtcCreateProgram", res))
	}
	defer n.nvrtcDestroyProgram(&prog)
	// The options as an array of C strings: the strings in one heap
	// buffer, the array of their addresses as integers, so that the memory
	// handed over holds no Go pointers (cgo's rule, which purego's calls
	// follow too); buf is kept alive until the call returns.
	var buf []byte
	offs := make([]int, len(opts))
	for i, o := range opts {
		offs[i] = len(buf)
		buf = append(buf, cBytes(o)...)
	}
	addrs := make([]uintptr, len(opts)+1)
	for i := range opts {
		addrs[i] = uintptr(unsafe.Pointer(&buf[offs[i]]))
	}
	res := n.nvrtcCompileProgram(prog, int32(len(opts)), unsafe.Pointer(&addrs[0]))
	runtime.KeepAlive(buf)
	if res != 0 {
		return nil, &CompileError{Name: name, Log: n.log(prog) + " (" + n.describe("nvrtcCompileProgram", res) + ")"}
	}
	var size uint64
	if r := n.nvrtcGetPTXSize(prog, &size); r != 0 || size == 0 {
		return nil, fmt.Errorf("%s", n.describe("nvrtcGetPTXSize", r))
	}
	ptx := make([]byte, size)
	if r := n.nvrtcGetPTX(prog, &ptx[0]); r != 0 {
		return nil, fmt.Errorf("%s", n.describe("nvrtcGetPTX", r))
	}
	return ptx, nil
}

// log returns a program's compilation log without its final NUL.
func (n *NVRTC) log(prog uintptr) string {
	var size uint64
	if n.nvrtcGetProgramLogSize(prog, &size) != 0 || size <= 1 {
		return ""
	}
	b := make([]byte, size)
	if n.nvrtcGetProgramLog(prog, &b[0]) != 0 {
		return ""
	}
	return strings.TrimSpace(cString(b))
}

// describe names a failed NVRTC call with NVRTC's words for res.
func (n *NVRTC) describe(call string, res int32) string {
	msg := ""
	if p := n.nvrtcGetErrorString(res); p != nil {
		msg = ": " + goString(p)
	}
	return fmt.Sprintf("%s failed with NVRTC error %d%s", call, res, msg)
}

// cBytes is s as a NUL-terminated C string.
func cBytes(s string) []byte { return append([]byte(s), 0) }
