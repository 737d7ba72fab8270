package sampler

import (
	"encoding/json"
	"fmt"
	"sync"
)

// Device is where a method runs: the CPU, or a GPU where the method has a
// path there (package gpu registers them with RegisterDevice).
type Device int

const (
	// CPU runs on the host's cores (the default).
	CPU Device = iota
	// CUDA runs on an NVIDIA GPU.
	CUDA
)

func (d Device) String() string {
	if d == CUDA {
		return "cuda"
	}
	return "cpu"
}

// MarshalText writes cpu or cuda.
func (d Device) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads cpu or cuda.
func (d *Device) UnmarshalText(b []byte) error {
	switch string(b) {
	case "cpu":
		*d = CPU
	case "cuda":
		*d = CUDA
	default:
		return fmt.Errorf("unknown device %q: want cpu or cuda", b)
	}
	return nil
}

// Precision is the number type of a GPU's computation (the CPU paths
// compute in float64).
type Precision int

const (
	// Float64 computes in double precision (the default).
	Float64 Precision = iota
	// Float32 computes in single precision.
	Float32
)

func (p Precision) String() string {
	if p == Float32 {
		return "float32"
	}
	return "float64"
}

// MarshalText writes float64 or float32.
func (p Precision) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads float64 or float32.
func (p *Precision) UnmarshalText(b []byte) error {
	switch string(b) {
	case "float64":
		*p = Float64
	case "float32":
		*p = Float32
	default:
		return fmt.Errorf("unknown precision %q: want float64 or float32", b)
	}
	return nil
}

// DeviceSettings are settings that choose a device (a Device field):
// Method.Start runs them on that device's constructor.
type DeviceSettings interface {
	Settings
	// OnDevice returns the device the settings choose.
	OnDevice() Device
}

// DevicePath is a method's implementation on a device other than the
// CPU.
type DevicePath struct {
	// New builds the sampler on the device.
	New func(*Problem, Settings) (Sampler, error)
	// Supports says why the path cannot run p with those settings (the
	// models, parameterizations and settings it handles), or nil; New
	// refuses what it refuses. p.Z may be nil.
	Supports func(p *Problem, s Settings) error
}

// devices holds the methods' paths on devices other than the CPU, by
// method name and device, registered by the packages that implement them
// (package gpu for CUDA), so that neither the methods' packages nor this
// one import them.
var devices = struct {
	sync.Mutex
	m map[string]map[Device]DevicePath
}{m: map[string]map[Device]DevicePath{}}

// RegisterDevice registers method's path on device d.
func RegisterDevice(method string, d Device, path DevicePath) {
	if path.New == nil || path.Supports == nil {
		panic(fmt.Sprintf("sampler: incomplete registration of %s on %s", method, d))
	}
	devices.Lock()
	defer devices.Unlock()
	if devices.m[method] == nil {
		devices.m[method] = map[Device]DevicePath{}
	}
	devices.m[method][d] = path
}

// DeviceSupports says why method cannot run p with settings s on device d
// (no path there, or one that does not take them), or nil.
func DeviceSupports(method string, d Device, p *Problem, s Settings) error {
	if d == CPU {
		return nil
	}
	devices.Lock()
	path, ok := devices.m[method][d]
	devices.Unlock()
	if !ok {
		return fmt.Errorf("%s has no %s path in this program", method, d)
	}
	return path.Supports(p, s)
}

// checks holds each device's check that the program can use it
// (RegisterDeviceCheck).
var checks = struct {
	sync.Mutex
	m map[Device]func() error
}{m: map[Device]func() error{}}

// RegisterDeviceCheck registers the check that device d can be used
// here (package gpu: a GPU opens), which CheckDevice runs.
func RegisterDeviceCheck(d Device, check func() error) {
	checks.Lock()
	defer checks.Unlock()
	checks.m[d] = check
}

// CheckDevice says why device d cannot be used here, or nil, so that a
// long run can fail before its work rather than at its first use of the
// device. The CPU always can.
func CheckDevice(d Device) error {
	if d == CPU {
		return nil
	}
	checks.Lock()
	f := checks.m[d]
	checks.Unlock()
	if f == nil {
		return fmt.Errorf("no %s path in this program (it is registered by importing github.com/dstein/dstein/gpu)", d)
	}
	return f()
}

// OnDevice returns the pipeline with every stage whose method has a path
// on d that takes p and the stage's settings (DeviceSupports) set to run
// there, and the indexes of those stages; the others, and the pipeline
// itself, are unchanged. A stage's settings are copied (through their
// JSON form, then {"device": d}).
func (pl Pipeline) OnDevice(d Device, p *Problem) (Pipeline, []int, error) {
	out := pl
	out.Stages = append([]Stage(nil), pl.Stages...)
	var moved []int
	for k, st := range out.Stages {
		if d == CPU || !HasDevice(st.Method, d) {
			continue
		}
		m, err := Lookup(st.Method)
		if err != nil {
			return pl, nil, err
		}
		set := m.NewSettings()
		if st.Settings != nil {
			b, err := json.Marshal(st.Settings)
			if err != nil {
				return pl, nil, named(st.Method, err)
			}
			if err := json.Unmarshal(b, set); err != nil {
				return pl, nil, named(st.Method, err)
			}
		}
		if err := json.Unmarshal(fmt.Appendf(nil, `{"device":%q}`, d), set); err != nil {
			return pl, nil, named(st.Method, err)
		}
		if ds, ok := set.(DeviceSettings); !ok || ds.OnDevice() != d {
			continue
		}
		if DeviceSupports(st.Method, d, p, set) != nil {
			continue
		}
		out.Stages[k].Settings = set
		moved = append(moved, k)
	}
	return out, moved, nil
}

// HasDevice says whether the program has method's path on device d (the
// CPU's always).
func HasDevice(method string, d Device) bool {
	if d == CPU {
		return true
	}
	devices.Lock()
	defer devices.Unlock()
	_, ok := devices.m[method][d]
	return ok
}

// Start builds the method's sampler for p on the device its settings
// choose: the method's New on the CPU, else the path registered for that
// device (an error naming the device when the program has none, or the
// path's Supports error).
func (m *Method) Start(p *Problem, s Settings) (Sampler, error) {
	ds, ok := s.(DeviceSettings)
	if !ok || ds.OnDevice() == CPU {
		return m.New(p, s)
	}
	d := ds.OnDevice()
	devices.Lock()
	path, ok := devices.m[m.Name][d]
	devices.Unlock()
	if !ok {
		return nil, fmt.Errorf("%s has no %s path in this program (it is registered by importing github.com/dstein/dstein/gpu)", m.Name, d)
	}
	// What the path does not take is said before the device is opened, so
	// that the answer does not depend on whether this machine has one.
	if err := path.Supports(p, s); err != nil {
		return nil, err
	}
	return path.New(p, s)
}

// Failer is a sampler whose reads can fail (a GPU sampler copies its
// states from the device in Current and Positions): after a failed read
// those return what they last read, Err returns the failure, and every
// later Step returns it too; the run loop fails the stage with it.
type Failer interface {
	Err() error
}
