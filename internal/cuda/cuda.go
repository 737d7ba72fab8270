// Package cuda loads NVIDIA's driver library at run time, without cgo and
// without CUDA at build time (github.com/ebitengine/purego opens the
// library and calls into it), and answers what a user asks first: is
// there a usable GPU, which, with how much memory, under which driver.
//
// Nothing is loaded until Load is called, so a dstein that never asks for
// a GPU never touches the library. The library is found by its soname
// (libcuda.so.1, as the driver installs it) through the system's loader
// search path, or at the path given by the environment variable
// DSTEIN_CUDA_DRIVER. A machine without the driver, without a device or
// with a driver too old gets one error (*Unavailable) whose message is one
// line saying which and what to do.
package cuda

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// DriverEnv names the environment variable that gives the driver library's
// path (or soname) instead of libcuda.so.1.
const DriverEnv = "DSTEIN_CUDA_DRIVER"

// driverSonames are the names tried in turn when DriverEnv is unset.
var driverSonames = []string{"libcuda.so.1", "libcuda.so"}

// MinDriver is the oldest driver API version accepted (12.0, as
// cuDriverGetVersion reports it): the calls used here have these
// signatures since then.
const MinDriver = 12000

// Unavailable is the error of a machine on which no GPU can be used: no
// driver library, no device, a driver too old, or a driver call that
// failed. Its message is one line.
type Unavailable struct {
	Reason string
}

func (u *Unavailable) Error() string { return "no usable NVIDIA GPU: " + u.Reason }

// Device describes one GPU.
type Device struct {
	// Ordinal is the device's index (CUDA_VISIBLE_DEVICES applies).
	Ordinal int
	Name    string
	// Memory is the device's total memory in bytes.
	Memory uint64
	// Major and Minor are its compute capability.
	Major, Minor int
}

// Driver is the loaded driver library.
type Driver struct {
	// Path is the library as it was opened; Version the driver API
	// version (12080 for CUDA 12.8).
	Path    string
	Version int
	handle  uintptr

	cuInit               func(flags uint32) int32
	cuDriverGetVersion   func(v *int32) int32
	cuDeviceGetCount     func(n *int32) int32
	cuDeviceGet          func(dev *int32, ordinal int32) int32
	cuDeviceGetName      func(name *byte, n int32, dev int32) int32
	cuDeviceTotalMem     func(bytes *uint64, dev int32) int32
	cuDeviceGetAttribute func(v *int32, attr int32, dev int32) int32
	cuGetErrorString     func(res int32, str **byte) int32

	// ctx are the calls for running work, bound on the first Open.
	ctx     ctxCalls
	ctxOnce sync.Once
	ctxErr  error
}

// Attributes of cuDeviceGetAttribute.
const (
	attrComputeMajor = 75
	attrComputeMinor = 76
)

var (
	loadMu sync.Mutex
	loads  = map[string]any{}
)

type loaded[T any] struct {
	v   T
	err error
}

// cached returns open's result for key, calling it the first time only.
func cached[T any](key string, open func() (T, error)) (T, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	r, ok := loads[key].(loaded[T])
	if !ok {
		r.v, r.err = open()
		loads[key] = r
	}
	return r.v, r.err
}

// Load opens the driver library (DriverEnv's, else by soname) and
// initialises it, once per library: later calls return the same driver or
// error.
func Load() (*Driver, error) {
	path := os.Getenv(DriverEnv)
	return cached("driver:"+path, func() (*Driver, error) { return open(path) })
}

// library is a library to find: by the path given, else its names in
// turn, with the words of its messages.
type library struct {
	env, what, missing, fix string
	names                   []string
}

// open opens the library at path (its names when empty); a library not
// found is an *Unavailable that says which names were tried.
func (l library) open(path string) (handle uintptr, opened string, err error) {
	names := l.names
	if path != "" {
		names = []string{path}
	}
	handle, opened, tried, err := dlopen(names)
	if handle != 0 {
		return handle, opened, nil
	}
	why := l.missing
	if path != "" {
		why = "the " + l.what + " " + path + " could not be opened"
	}
	return 0, "", &Unavailable{Reason: fmt.Sprintf("%s (tried %s: %s); %s, or set %s to its path", why, strings.Join(tried, ", "), oneLine(err), l.fix, l.env)}
}

// dlopen opens the first library of names that opens, and returns its
// handle and name, or the names tried and why the first of them failed
// (the soname the loader knows; the later names are the toolkit's usual
// folders, whose "no such file" says less).
func dlopen(names []string) (handle uintptr, name string, tried []string, err error) {
	var first error
	for _, n := range names {
		handle, err = purego.Dlopen(n, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			return handle, n, nil, nil
		}
		if first == nil {
			first = err
		}
		tried = append(tried, n)
	}
	return 0, "", tried, first
}

// symbol is a function of a library to bind to a Go function value.
type symbol struct {
	name string
	fn   any
}

// bind binds every symbol of the library at handle (opened as path).
func bind(handle uintptr, path, what string, syms []symbol) error {
	for _, f := range syms {
		sym, err := purego.Dlsym(handle, f.name)
		if err != nil || sym == 0 {
			return &Unavailable{Reason: fmt.Sprintf("%s has no function %s: not %s, or one too old", path, f.name, what)}
		}
		purego.RegisterFunc(f.fn, sym)
	}
	return nil
}

// open opens the driver at path (the sonames when empty) and checks it.
func open(path string) (*Driver, error) {
	lib := library{env: DriverEnv, what: "driver library", missing: "the NVIDIA driver library is not installed",
		fix: "install the driver", names: driverSonames}
	handle, path, err := lib.open(path)
	if err != nil {
		return nil, err
	}
	d := &Driver{Path: path, handle: handle}
	if err := bind(handle, path, "an NVIDIA driver library", []symbol{
		{"cuInit", &d.cuInit},
		{"cuDriverGetVersion", &d.cuDriverGetVersion},
		{"cuDeviceGetCount", &d.cuDeviceGetCount},
		{"cuDeviceGet", &d.cuDeviceGet},
		{"cuDeviceGetName", &d.cuDeviceGetName},
		{"cuDeviceTotalMem_v2", &d.cuDeviceTotalMem},
		{"cuDeviceGetAttribute", &d.cuDeviceGetAttribute},
		{"cuGetErrorString", &d.cuGetErrorString},
	}); err != nil {
		return nil, err
	}
	var v int32
	if res := d.cuDriverGetVersion(&v); res != 0 {
		return nil, &Unavailable{Reason: d.describe("cuDriverGetVersion", res)}
	}
	d.Version = int(v)
	if d.Version < MinDriver {
		return nil, &Unavailable{Reason: fmt.Sprintf("the driver supports CUDA %s; dstein needs %s or later (update the NVIDIA driver)", versionString(d.Version), versionString(MinDriver))}
	}
	if res := d.cuInit(0); res != 0 {
		return nil, &Unavailable{Reason: d.describe("cuInit", res)}
	}
	return d, nil
}

// Devices lists the GPUs the driver sees; none is an *Unavailable error.
func (d *Driver) Devices() ([]Device, error) {
	var n int32
	if res := d.cuDeviceGetCount(&n); res != 0 {
		return nil, &Unavailable{Reason: d.describe("cuDeviceGetCount", res)}
	}
	if n == 0 {
		return nil, &Unavailable{Reason: "the driver sees no device (check CUDA_VISIBLE_DEVICES and nvidia-smi)"}
	}
	out := make([]Device, 0, n)
	for i := range n {
		var dev int32
		if res := d.cuDeviceGet(&dev, i); res != 0 {
			return nil, &Unavailable{Reason: d.describe("cuDeviceGet", res)}
		}
		name := make([]byte, 256)
		if res := d.cuDeviceGetName(&name[0], int32(len(name)), dev); res != 0 {
			return nil, &Unavailable{Reason: d.describe("cuDeviceGetName", res)}
		}
		var mem uint64
		if res := d.cuDeviceTotalMem(&mem, dev); res != 0 {
			return nil, &Unavailable{Reason: d.describe("cuDeviceTotalMem", res)}
		}
		var major, minor int32
		if res := d.cuDeviceGetAttribute(&major, attrComputeMajor, dev); res != 0 {
			return nil, &Unavailable{Reason: d.describe("cuDeviceGetAttribute", res)}
		}
		if res := d.cuDeviceGetAttribute(&minor, attrComputeMinor, dev); res != 0 {
			return nil, &Unavailable{Reason: d.describe("cuDeviceGetAttribute", res)}
		}
		out = append(out, Device{Ordinal: int(i), Name: cString(name), Memory: mem, Major: int(major), Minor: int(minor)})
	}
	return out, nil
}

// describe names a failed driver call with the driver's words for res.
func (d *Driver) describe(call string, res int32) string {
	var s *byte
	msg := ""
	if d.cuGetErrorString != nil && d.cuGetErrorString(res, &s) == 0 && s != nil {
		msg = ": " + oneLine(errors.New(goString(s)))
	}
	return fmt.Sprintf("%s failed with CUDA error %d%s", call, res, msg)
}

// versionString writes a driver API version as CUDA's major.minor.
func versionString(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// cString returns the bytes of b before its first NUL.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// goString copies a NUL-terminated C string of at most 4096 bytes.
func goString(p *byte) string {
	var b []byte
	for i := 0; i < 4096; i++ {
		c := *(*byte)(unsafeAdd(p, i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// oneLine returns err's message on one line ("" for nil).
func oneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
