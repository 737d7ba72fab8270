package cuda

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The driver's calls for running work on a device, bound by bindContext.
type ctxCalls struct {
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease func(dev int32) int32
	cuCtxSetCurrent           func(ctx uintptr) int32
	cuMemGetInfo              func(free, total *uint64) int32
	cuMemAlloc                func(dptr *uint64, bytes uint64) int32
	cuMemFree                 func(dptr uint64) int32
	cuModuleLoadData          func(mod *uintptr, image unsafe.Pointer) int32
	cuModuleGetFunction       func(fn *uintptr, mod uintptr, name *byte) int32
	cuModuleUnload            func(mod uintptr) int32
	// The addresses of the calls of every iteration (kernel launches,
	// copies, fills, synchronisation), made as rawCalls through
	// purego.SyscallN: a function bound by RegisterFunc goes through
	// reflection and allocates at every call.
	launchSym                            uintptr
	syncSym, htodSym, dtohSym, memsetSym uintptr
}

func (d *Driver) bindContext() error {
	c := &d.ctx
	err := bind(d.handle, d.Path, "an NVIDIA driver library", []symbol{
		{"cuDevicePrimaryCtxRetain", &c.cuDevicePrimaryCtxRetain},
		{"cuDevicePrimaryCtxRelease_v2", &c.cuDevicePrimaryCtxRelease},
		{"cuCtxSetCurrent", &c.cuCtxSetCurrent},
		{"cuMemGetInfo_v2", &c.cuMemGetInfo},
		{"cuMemAlloc_v2", &c.cuMemAlloc},
		{"cuMemFree_v2", &c.cuMemFree},
		{"cuModuleLoadData", &c.cuModuleLoadData},
		{"cuModuleGetFunction", &c.cuModuleGetFunction},
		{"cuModuleUnload", &c.cuModuleUnload},
	})
	if err != nil {
		return err
	}
	return bindAddrs(d.handle, d.Path, "an NVIDIA driver library", []addr{
		{"cuLaunchKernel", &c.launchSym},
		{"cuCtxSynchronize", &c.syncSym},
		{"cuMemcpyHtoD_v2", &c.htodSym},
		{"cuMemcpyDtoH_v2", &c.dtohSym},
		{"cuMemsetD32_v2", &c.memsetSym},
	})
}

// addr is a function of a library whose address is kept, for rawCall.
type addr struct {
	name string
	sym  *uintptr
}

// bindAddrs looks up every function's address in the library at handle
// (opened as path).
func bindAddrs(handle uintptr, path, what string, addrs []addr) error {
	for _, a := range addrs {
		sym, err := purego.Dlsym(handle, a.name)
		if err != nil || sym == 0 {
			return &Unavailable{Reason: fmt.Sprintf("%s has no function %s: not %s, or one too old", path, a.name, what)}
		}
		*a.sym = sym
	}
	return nil
}

// rawCall is one call of a driver or library function by its address
// (purego.SyscallN, integer and pointer arguments only), handed to the
// context's thread: its arguments, the scalars a cuBLAS product points
// to, a kernel launch's argument slots, the host memory it reads or
// writes, its status and a reply channel.
// run is bound once, when the call is made, so that a call
// allocates nothing once warm (a function bound by RegisterFunc goes
// through reflection at every call).
type rawCall struct {
	sym         uintptr
	args        [14]uintptr
	n           int
	alpha, beta uint64
	// slots hold a kernel launch's arguments, addrs their addresses
	// (cuLaunchKernel's params, 0-terminated).
	slots [maxKernelArgs]uint64
	addrs [maxKernelArgs + 1]uintptr
	// host is the host memory the call copies from or to, whose address
	// is also among args as an integer: held here so that it stays
	// reachable (and, being stored in a heap object, on the heap, which
	// does not move) until the reply.
	host  unsafe.Pointer
	res   int32
	reply chan struct{}
	run   func()
}

// rawCalls holds the calls not in flight. A free list, not a sync.Pool:
// a pool drops its items at a garbage collection, and an item Put in one
// P's private slot is not found by a Get that runs on another P (a
// goroutine moved by the scheduler under load), so a warm step would
// allocate now and then. The list only grows to the most calls in flight
// at once.
var rawCalls freeList[*rawCall]

// newRawCall makes a call with its reply channel and bound run.
func newRawCall() *rawCall {
	r := &rawCall{reply: make(chan struct{}, 1)}
	r.run = r.exec
	return r
}

// freeList is a mutex-guarded stack of reusable items.
type freeList[T any] struct {
	mu    sync.Mutex
	items []T
}

// get pops an item, or makes one with mk when the list is empty.
func (l *freeList[T]) get(mk func() T) T {
	l.mu.Lock()
	if n := len(l.items); n > 0 {
		it := l.items[n-1]
		var zero T
		l.items[n-1] = zero
		l.items = l.items[:n-1]
		l.mu.Unlock()
		return it
	}
	l.mu.Unlock()
	return mk()
}

// put pushes it back.
func (l *freeList[T]) put(it T) {
	l.mu.Lock()
	l.items = append(l.items, it)
	l.mu.Unlock()
}

// exec runs on the context's thread.
func (r *rawCall) exec() {
	res, _, _ := purego.SyscallN(r.sym, r.args[:r.n]...)
	r.res = int32(res)
	r.reply <- struct{}{}
}

// getRaw returns a pooled call of sym with args (at most 14).
func getRaw(sym uintptr, args ...uintptr) *rawCall {
	r := rawCalls.get(newRawCall)
	r.sym, r.n = sym, copy(r.args[:], args)
	return r
}

// raw runs r on the context's thread, returns it to the free list and returns
// its status.
func (c *Context) raw(r *rawCall) int32 {
	c.work <- r.run
	<-r.reply
	res := r.res
	r.host = nil
	rawCalls.put(r)
	return res
}

// Context runs work on one device. The driver binds a context to the OS
// thread that made it current, so every call of a Context runs on one
// goroutine locked to its thread; a Context is safe for concurrent use
// (its calls are serialised there).
type Context struct {
	d    *Driver
	dev  int32
	ctx  uintptr
	work chan func()
	done chan struct{}
}

// Open makes the primary context of device ordinal current on a thread of
// its own.
func (d *Driver) Open(ordinal int) (*Context, error) {
	d.ctxOnce.Do(func() { d.ctxErr = d.bindContext() })
	if d.ctxErr != nil {
		return nil, d.ctxErr
	}
	c := &Context{d: d, work: make(chan func()), done: make(chan struct{})}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		var dev int32
		if res := d.cuDeviceGet(&dev, int32(ordinal)); res != 0 {
			ready <- &Unavailable{Reason: d.describe(fmt.Sprintf("cuDeviceGet(%d)", ordinal), res)}
			return
		}
		c.dev = dev
		if res := d.ctx.cuDevicePrimaryCtxRetain(&c.ctx, dev); res != 0 {
			ready <- &Unavailable{Reason: d.describe("cuDevicePrimaryCtxRetain", res)}
			return
		}
		if res := d.ctx.cuCtxSetCurrent(c.ctx); res != 0 {
			d.ctx.cuDevicePrimaryCtxRelease(dev)
			ready <- &Unavailable{Reason: d.describe("cuCtxSetCurrent", res)}
			return
		}
		ready <- nil
		for f := range c.work {
			f()
		}
		d.ctx.cuDevicePrimaryCtxRelease(dev)
		close(c.done)
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return c, nil
}

// do runs f on the context's thread and returns its error. The reply
// channels are reused (every call of a sampler's iteration comes here).
func (c *Context) do(f func() error) error {
	errc := replies.get(newReply)
	c.work <- func() { errc <- f() }
	err := <-errc
	replies.put(errc)
	return err
}

// replies holds reply channels of do, each with room for one error.
var replies freeList[chan error]

func newReply() chan error { return make(chan error, 1) }

// check turns a driver result into an error naming the call.
func (c *Context) check(call string, res int32) error {
	if res == 0 {
		return nil
	}
	return fmt.Errorf("%s", c.d.describe(call, res))
}

// Close releases the device's primary context and ends its thread; the
// Context and its modules may not be used after it.
func (c *Context) Close() {
	close(c.work)
	<-c.done
}

// MemInfo returns the device memory free and in all, in bytes.
func (c *Context) MemInfo() (free, total uint64, err error) {
	err = c.do(func() error { return c.check("cuMemGetInfo", c.d.ctx.cuMemGetInfo(&free, &total)) })
	return free, total, err
}

// Ptr is an address in device memory.
type Ptr uint64

// OutOfMemory is an allocation refused before it was tried: it would
// not fit the device's free memory.
type OutOfMemory struct {
	Want, Free uint64
}

func (e *OutOfMemory) Error() string {
	return fmt.Sprintf("needs %.1f MB of GPU memory; the GPU has %.1f MB free (fewer chains or particles, float32, or another GPU)", float64(e.Want)/1e6, float64(e.Free)/1e6)
}

// Alloc allocates bytes of device memory, after checking them against the
// free memory the driver reports (an *OutOfMemory otherwise).
func (c *Context) Alloc(bytes uint64) (Ptr, error) {
	var p uint64
	err := c.do(func() error {
		var free, total uint64
		if err := c.check("cuMemGetInfo", c.d.ctx.cuMemGetInfo(&free, &total)); err != nil {
			return err
		}
		if bytes > free {
			return &OutOfMemory{Want: bytes, Free: free}
		}
		return c.check("cuMemAlloc", c.d.ctx.cuMemAlloc(&p, bytes))
	})
	return Ptr(p), err
}

// Free frees device memory from Alloc.
func (c *Context) Free(p Ptr) error {
	return c.do(func() error { return c.check("cuMemFree", c.d.ctx.cuMemFree(uint64(p))) })
}

// CopyIn copies src into device memory at dst.
func (c *Context) CopyIn(dst Ptr, src []float64) error { return Upload(c, dst, src) }

// CopyOut copies len(dst) values from device memory at src into dst.
func (c *Context) CopyOut(dst []float64, src Ptr) error { return Download(c, dst, src) }

// Value is a type whose values cross between host and device memory as
// they are.
type Value interface {
	~float64 | ~float32 | ~int32 | ~uint32 | ~uint64 | ~uint8
}

// Upload copies src into device memory at dst (after the work queued
// before it).
func Upload[T Value](c *Context, dst Ptr, src []T) error {
	if len(src) == 0 {
		return nil
	}
	bytes := uint64(len(src)) * uint64(unsafe.Sizeof(src[0]))
	host := unsafe.Pointer(&src[0])
	r := getRaw(c.d.ctx.htodSym, uintptr(dst), uintptr(host), uintptr(bytes))
	r.host = host
	return c.check("cuMemcpyHtoD", c.raw(r))
}

// Download copies len(dst) values from device memory at src into dst,
// after the work queued before it has finished.
func Download[T Value](c *Context, dst []T, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	bytes := uint64(len(dst)) * uint64(unsafe.Sizeof(dst[0]))
	host := unsafe.Pointer(&dst[0])
	r := getRaw(c.d.ctx.dtohSym, uintptr(host), uintptr(src), uintptr(bytes))
	r.host = host
	return c.check("cuMemcpyDtoH", c.raw(r))
}

// Fill32 sets n 32-bit words at dst to v.
func (c *Context) Fill32(dst Ptr, v uint32, n int) error {
	if n == 0 {
		return nil
	}
	return c.check("cuMemsetD32", c.raw(getRaw(c.d.ctx.memsetSym, uintptr(dst), uintptr(v), uintptr(n))))
}

// Sync waits for the work queued on the context and returns the error of
// any that failed.
func (c *Context) Sync() error {
	return c.check("cuCtxSynchronize", c.raw(getRaw(c.d.ctx.syncSym)))
}

// Module is PTX loaded into a context.
type Module struct {
	c   *Context
	mod uintptr
}

// Load loads PTX (NUL-terminated, as NVRTC.Compile returns it).
func (c *Context) Load(ptx []byte) (*Module, error) {
	if len(ptx) == 0 || ptx[len(ptx)-1] != 0 {
		return nil, fmt.Errorf("cuda: PTX must end with a NUL byte")
	}
	m := &Module{c: c}
	err := c.do(func() error {
		return c.check("cuModuleLoadData", c.d.ctx.cuModuleLoadData(&m.mod, unsafe.Pointer(&ptx[0])))
	})
	return m, err
}

// Func is a kernel of a module.
type Func struct {
	m    *Module
	fn   uintptr
	Name string
}

// Func returns the kernel named name (declared extern "C").
func (m *Module) Func(name string) (*Func, error) {
	f := &Func{m: m, Name: name}
	cname := cBytes(name)
	err := m.c.do(func() error {
		return m.c.check("cuModuleGetFunction("+name+")", m.c.d.ctx.cuModuleGetFunction(&f.fn, m.mod, &cname[0]))
	})
	return f, err
}

// Unload unloads the module.
func (m *Module) Unload() error {
	return m.c.do(func() error { return m.c.check("cuModuleUnload", m.c.d.ctx.cuModuleUnload(m.mod)) })
}

// Launch runs the kernel on a grid of grid blocks of block threads and
// waits for it. Its arguments are Ptr, int32, uint32, int64, uint64,
// float64 and float32 values, in the kernel's order.
func (f *Func) Launch(grid, block [3]uint32, args ...any) error {
	if err := f.Queue(grid, block, args...); err != nil {
		return err
	}
	return f.m.c.Sync()
}

// Queue queues the kernel like Launch without waiting for it: the
// context's later work (kernels, copies, cuBLAS calls) runs after it, and
// an error of the kernel itself surfaces at the next Sync or Download. It
// takes at most maxKernelArgs arguments and allocates nothing once warm
// (the request is pooled).
func (f *Func) Queue(grid, block [3]uint32, args ...any) error {
	if len(args) > maxKernelArgs {
		return fmt.Errorf("cuda: kernel %s: %d arguments; at most %d", f.Name, len(args), maxKernelArgs)
	}
	r := rawCalls.get(newRawCall)
	// Each argument's value in its own 8-byte slot of r, and the slots'
	// addresses as integers: memory holding no Go pointers (r is on the
	// heap, which does not move, and reachable until the reply).
	for i, a := range args {
		slot := &r.slots[i]
		switch v := a.(type) {
		case Ptr:
			*slot = uint64(v)
		case int32:
			*slot = 0
			*(*int32)(unsafe.Pointer(slot)) = v
		case uint32:
			*slot = 0
			*(*uint32)(unsafe.Pointer(slot)) = v
		case uint64:
			*slot = v
		case int64:
			*slot = uint64(v)
		case float64:
			*slot = math.Float64bits(v)
		case float32:
			*slot = 0
			*(*float32)(unsafe.Pointer(slot)) = v
		default:
			rawCalls.put(r)
			// reflect.TypeOf, not %T: a value handed to fmt escapes, and
			// every argument would be boxed on the heap.
			return fmt.Errorf("cuda: kernel %s: argument %d of type %v; want Ptr, int32, uint32, int64, uint64, float64 or float32", f.Name, i, reflect.TypeOf(a))
		}
		r.addrs[i] = uintptr(unsafe.Pointer(slot))
	}
	r.addrs[len(args)] = 0
	// cuLaunchKernel(f, grid, block, shared memory 0, stream 0, params,
	// extra NULL).
	r.sym, r.n = f.m.c.d.ctx.launchSym, 11
	r.args = [14]uintptr{f.fn, uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
		uintptr(block[0]), uintptr(block[1]), uintptr(block[2]), 0, 0, uintptr(unsafe.Pointer(&r.addrs[0])), 0}
	if res := f.m.c.raw(r); res != 0 {
		return f.m.c.check("cuLaunchKernel("+f.Name+")", res)
	}
	return nil
}

// maxKernelArgs is the most arguments a kernel launch takes (dstein's
// kernels take at most 13).
const maxKernelArgs = 24
