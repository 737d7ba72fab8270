package gpu

import (
	"fmt"
	"sync"

	"github.com/dstein/dstein/internal/cuda"
	"github.com/dstein/dstein/sampler"
)

// Device is one GPU opened for work: its context, a cuBLAS handle on it,
// and the kernels compiled for it. Its methods are safe for concurrent
// use (the context serialises the work).
type Device struct {
	info   cuda.Device
	driver *cuda.Driver
	nvrtc  *cuda.NVRTC
	blas   *cuda.BLAS
	ctx    *cuda.Context
	arch   string

	mu   sync.Mutex
	mods map[string]*cuda.Module
}

// Open opens GPU ordinal: the driver, NVRTC and cuBLAS are loaded (by
// soname or their environment variables), the device's context made and a
// cuBLAS handle created. A machine without a usable GPU gets an
// *cuda.Unavailable saying why.
func Open(ordinal int) (*Device, error) {
	drv, err := cuda.Load()
	if err != nil {
		return nil, err
	}
	devs, err := drv.Devices()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= len(devs) {
		return nil, &cuda.Unavailable{Reason: fmt.Sprintf("there is no GPU %d: the driver sees %d", ordinal, len(devs))}
	}
	nv, err := cuda.LoadNVRTCFor(drv.Version)
	if err != nil {
		return nil, err
	}
	lib, err := cuda.LoadCUBLASFor(drv.Version)
	if err != nil {
		return nil, err
	}
	ctx, err := drv.Open(ordinal)
	if err != nil {
		return nil, err
	}
	blas, err := lib.NewBLAS(ctx)
	if err != nil {
		ctx.Close()
		return nil, &cuda.Unavailable{Reason: err.Error()}
	}
	info := devs[ordinal]
	return &Device{info: info, driver: drv, nvrtc: nv, blas: blas, ctx: ctx,
		arch: fmt.Sprintf("--gpu-architecture=compute_%d%d", info.Major, info.Minor), mods: map[string]*cuda.Module{}}, nil
}

// Close releases the kernels, the cuBLAS handle and the context.
func (d *Device) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range d.mods {
		m.Unload()
	}
	d.mods = nil
	d.blas.Close()
	d.ctx.Close()
}

// context returns the device's context.
func (d *Device) context() *cuda.Context { return d.ctx }

// String names the device as a line of output does.
func (d *Device) String() string {
	return fmt.Sprintf("GPU %d (%s, compute capability %d.%d, %.1f GiB)", d.info.Ordinal, d.info.Name, d.info.Major, d.info.Minor, float64(d.info.Memory)/(1<<30))
}

// module compiles src (named name) with the given options for the
// device, once per source and options, and loads it.
func (d *Device) module(src, name string, opts ...string) (*cuda.Module, error) {
	key := name + "\x00" + fmt.Sprint(opts)
	d.mu.Lock()
	defer d.mu.Unlock()
	if m, ok := d.mods[key]; ok {
		return m, nil
	}
	ptx, err := d.nvrtc.Compile(src, name, append([]string{d.arch}, opts...)...)
	if err != nil {
		return nil, err
	}
	m, err := d.ctx.Load(ptx)
	if err != nil {
		return nil, err
	}
	d.mods[key] = m
	return m, nil
}

// kernels compiles src with opts and looks up the named kernels.
func (d *Device) kernels(src, name string, opts []string, names ...string) (map[string]*cuda.Func, error) {
	m, err := d.module(src, name, opts...)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*cuda.Func, len(names))
	for _, n := range names {
		f, err := m.Func(n)
		if err != nil {
			return nil, err
		}
		out[n] = f
	}
	return out, nil
}

// arena holds a sampler's device memory: every buffer is allocated up
// front, after the total was checked against the device's free memory,
// and freed together.
type arena struct {
	ctx  *cuda.Context
	ptrs []cuda.Ptr
}

// check refuses a total over the device's free memory, before anything
// is allocated.
func (a *arena) check(total uint64, what string) error {
	free, _, err := a.ctx.MemInfo()
	if err != nil {
		return err
	}
	if total > free {
		return fmt.Errorf("%s: %w", what, &cuda.OutOfMemory{Want: total, Free: free})
	}
	return nil
}

// alloc allocates bytes.
func (a *arena) alloc(bytes uint64) (cuda.Ptr, error) {
	p, err := a.ctx.Alloc(max(bytes, 8))
	if err != nil {
		return 0, err
	}
	a.ptrs = append(a.ptrs, p)
	return p, nil
}

// free frees every buffer.
func (a *arena) free() {
	for _, p := range a.ptrs {
		a.ctx.Free(p)
	}
	a.ptrs = nil
}

// grid1 returns the launch geometry of one thread per element of total.
func grid1(total int64) (grid, block [3]uint32) {
	const threads = 256
	return [3]uint32{uint32((total + threads - 1) / threads), 1, 1}, [3]uint32{threads, 1, 1}
}

// grid2 returns the geometry of one thread per entry of an n×n matrix,
// x over columns and y over rows.
func grid2(n int) (grid, block [3]uint32) {
	const side = 16
	b := uint32((n + side - 1) / side)
	return [3]uint32{b, b, 1}, [3]uint32{side, side, 1}
}

// shared holds the devices opened by Shared, one per ordinal, for the
// life of the process.
var shared struct {
	sync.Mutex
	devs map[int]*Device
}

func init() {
	sampler.RegisterDeviceCheck(sampler.CUDA, func() error {
		_, err := registryDevice(0)
		return err
	})
}

// registerPath registers method's CUDA path: newOn on the registry's
// device with the settings' value, and supports. A failed start returns a
// nil Sampler (not a typed nil inside the interface).
func registerPath[S any, P interface {
	*S
	sampler.Settings
}, T sampler.Sampler](method string, newOn func(*Device, *sampler.Problem, S) (T, error), supports func(*sampler.Problem, S) error) {
	sampler.RegisterDevice(method, sampler.CUDA, sampler.DevicePath{
		New: func(p *sampler.Problem, set sampler.Settings) (sampler.Sampler, error) {
			dev, err := registryDevice(0)
			if err != nil {
				return nil, err
			}
			s, err := newOn(dev, p, *set.(P))
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		Supports: func(p *sampler.Problem, set sampler.Settings) error { return supports(p, *set.(P)) },
	})
}

// registryDevice is the device the registered methods run on: Shared's,
// or a test's.
var registryDevice = Shared

// Shared returns GPU ordinal opened once per process (its context and
// compiled kernels are reused by every sampler; it is never closed). A
// failure to open is not remembered: a later call tries again.
func Shared(ordinal int) (*Device, error) {
	shared.Lock()
	defer shared.Unlock()
	if d, ok := shared.devs[ordinal]; ok {
		return d, nil
	}
	d, err := Open(ordinal)
	if err != nil {
		return nil, err
	}
	if shared.devs == nil {
		shared.devs = map[int]*Device{}
	}
	shared.devs[ordinal] = d
	return d, nil
}

// precision moves float64 values to and from device buffers of a
// sampler's precision, float64 or float32, and queues its products.
type precision struct {
	ctx  *cuda.Context
	blas *cuda.BLAS
	f32  bool
	buf  []float32 // float32 copies in transit, reused
}

// scratch returns n float32 values of the reused buffer.
func (p *precision) scratch(n int) []float32 {
	if cap(p.buf) < n {
		p.buf = make([]float32, n)
	}
	return p.buf[:n]
}

// size returns the bytes of one value.
func (p *precision) size() uint64 {
	if p.f32 {
		return 4
	}
	return 8
}

// real is v as a kernel argument of the precision.
func (p *precision) real(v float64) any {
	if p.f32 {
		return float32(v)
	}
	return v
}

// upload copies float64 values to a buffer of the precision.
func (p *precision) upload(dst cuda.Ptr, v []float64) error {
	if !p.f32 {
		return cuda.Upload(p.ctx, dst, v)
	}
	f := p.scratch(len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return cuda.Upload(p.ctx, dst, f)
}

// download copies len(dst) values of the precision into dst.
func (p *precision) download(dst []float64, src cuda.Ptr) error {
	if !p.f32 {
		return cuda.Download(p.ctx, dst, src)
	}
	f := p.scratch(len(dst))
	if err := cuda.Download(p.ctx, f, src); err != nil {
		return err
	}
	for i, x := range f {
		dst[i] = float64(x)
	}
	return nil
}

// gemm queues a product C = op(A)·op(B) (Alpha 1, Beta 0) in the
// precision.
func (p *precision) gemm(g cuda.Gemm) error {
	g.Alpha, g.Beta = 1, 0
	if p.f32 {
		return p.blas.Float32(g)
	}
	return p.blas.Float64(g)
}

// buffer is one allocation of allocAll: where its address goes, and its
// size.
type buffer struct {
	p     *cuda.Ptr
	bytes uint64
}

// allocAll allocates every buffer.
func (a *arena) allocAll(bufs []buffer) error {
	for _, b := range bufs {
		p, err := a.alloc(b.bytes)
		if err != nil {
			return err
		}
		*b.p = p
	}
	return nil
}
