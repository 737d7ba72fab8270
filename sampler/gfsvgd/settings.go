package gfsvgd

import (
	"fmt"
	"math"

	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/optim"
	"github.com/dstein/dstein/sampler"
	"github.com/dstein/dstein/svgd"
	"github.com/dstein/dstein/transform"
)

// Optimizer turns the GF-SVGD direction into a step.
type Optimizer int

const (
	// Adam applies Adam per element of the particle array, ascending along
	// the direction (the default).
	Adam Optimizer = iota
	// Plain takes x ← x + lr·Δx.
	Plain
)

// String returns "adam" or "plain".
func (o Optimizer) String() string {
	if o == Plain {
		return "plain"
	}
	return "adam"
}

// MarshalText implements encoding.TextMarshaler.
func (o Optimizer) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText parses "adam" or "plain".
func (o *Optimizer) UnmarshalText(b []byte) error {
	switch string(b) {
	case "adam":
		*o = Adam
	case "plain":
		*o = Plain
	default:
		return fmt.Errorf("unknown optimizer %q: want adam or plain", b)
	}
	return nil
}

// Surrogates lists the names of the surrogates ρ.
var Surrogates = []string{"base", "relaxed"}

// Settings configure GF-SVGD. The zero value is valid; each field documents
// its default.
type Settings struct {
	// Surrogate is ρ: "base" (ρ = p0, the base density) or "relaxed" (the
	// model's smooth relaxation over soft bin memberships). Default
	// (empty) "relaxed".
	Surrogate string `json:"surrogate" flag:"surrogate" help:"surrogate ρ: base (ρ = p0) or relaxed (smooth relaxation of the model)"`
	// Temperature is τ of the relaxed surrogate (1 is the paper's σ for ±1
	// variables). Default (0) transform.DefaultTemperature.
	Temperature float64 `json:"temperature" flag:"temperature,positive" help:"temperature τ of the relaxed surrogate (1 is the paper's σ(x) = 2/(1+e^(−x)) − 1)"`
	// LearningRate is Adam's step size, or the step size of Plain steps.
	// Default (0) is DefaultLearningRate.
	LearningRate float64 `json:"learning_rate" flag:"lr,positive" help:"learning rate: Adam's step size, or the step of plain updates"`
	// Optimizer defaults to Adam.
	Optimizer Optimizer `json:"optimizer" flag:"optimizer" help:"adam or plain (x ← x + lr·Δx)"`
	// Beta1 and Beta2 are Adam's moment decay rates. Defaults 0.9 and
	// 0.999.
	Beta1 float64 `json:"beta1"`
	Beta2 float64 `json:"beta2"`
	// Epsilon is Adam's denominator offset. Default 1e-8.
	Epsilon float64 `json:"epsilon"`
	// Bandwidth chooses the RBF bandwidth. Default: h = med²/log(n+1),
	// median over distinct pairs, multiplier 1 (twice the paper's h; see
	// package kernel).
	Bandwidth kernel.Bandwidth `json:"bandwidth"`
	// Weights defaults to self-normalised.
	Weights svgd.Weighting `json:"weights" flag:"weights" help:"importance weights: self (self-normalised ρ/p_c) or rank (the paper's BNN appendix)"`
	// Kernel selects the kernel of the transport. Default RBF.
	Kernel svgd.Kernel `json:"kernel"`
	// WeightPower β tempers the self-normalised importance weights,
	// w_j ∝ (ρ/p_c)(x_j)^β, to fight weight degeneracy in high dimension.
	// With β < 1 the particles settle at ρ^(1−β) p_c^β rather than at p_c,
	// so WeightAnneal should raise β to 1. Default (0) means 1: no
	// tempering. Needs self-normalised weights.
	WeightPower float64 `json:"weight_power"`
	// WeightAnneal is the number of iterations over which β rises
	// linearly from WeightPower to 1. Default 0: β stays at WeightPower.
	WeightAnneal int `json:"weight_anneal"`
	// Device is where the particles move: the CPU (the default) or an
	// NVIDIA GPU (CUDA: package gpu, for an RBM with the relaxed
	// surrogate and the RBF kernel).
	Device sampler.Device `json:"device,omitempty" flag:"device" help:"where the particles, chains or replicas run: cpu, or cuda (an NVIDIA GPU: gfsvgd on an RBM with the relaxed surrogate and the RBF kernel; gibbs on Ising and Potts models by colour classes, RBMs by blocks; pt on Ising and Potts models with its site kernel; see dstein gpu)"`
	// Precision is the GPU's number type: float64 (the default) or
	// float32. The CPU computes in float64.
	Precision sampler.Precision `json:"precision,omitempty" flag:"precision" help:"the GPU's numbers: float64 or float32 (with --device cuda)"`
}

// WeightPowerAt returns the tempering exponent β of the weights after
// iter iterations: WeightPower rising linearly to 1 over WeightAnneal
// iterations (1 without tempering).
func (s Settings) WeightPowerAt(iter int) float64 {
	b := s.WeightPower
	if b == 0 || b == 1 {
		return 1
	}
	if a := s.WeightAnneal; a > 0 {
		b += (1 - b) * math.Min(1, float64(iter)/float64(a))
	}
	return b
}

// DefaultLearningRate is the step size when Settings.LearningRate is 0.
const DefaultLearningRate = 0.1

func (s Settings) withDefaults() Settings {
	if s.Surrogate == "" {
		s.Surrogate = "relaxed"
	}
	if s.Temperature == 0 {
		s.Temperature = transform.DefaultTemperature
	}
	if s.LearningRate == 0 {
		s.LearningRate = DefaultLearningRate
	}
	if s.Beta1 == 0 {
		s.Beta1 = optim.DefaultBeta1
	}
	if s.Beta2 == 0 {
		s.Beta2 = optim.DefaultBeta2
	}
	if s.Epsilon == 0 {
		s.Epsilon = optim.DefaultEpsilon
	}
	if s.WeightPower == 0 {
		s.WeightPower = 1
	}
	s.Bandwidth = s.Bandwidth.Resolved()
	return s
}

// Ignored says why field has no effect under the other settings: the
// temperature shapes the relaxed surrogate only (sampler.Ignorer).
func (s *Settings) Ignored(field string) string {
	if field == "temperature" && s.withDefaults().Surrogate == "base" {
		return "the temperature shapes the relaxed surrogate, and --surrogate base uses none"
	}
	return ""
}

// Resolved returns the settings with every default filled in.
func (s *Settings) Resolved() sampler.Settings { r := s.withDefaults(); return &r }

// OnDevice returns the device the settings choose.
func (s *Settings) OnDevice() sampler.Device { return s.Device }

func bad(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

// Validate reports the first setting that cannot be used.
func (s *Settings) Validate() error {
	r := s.withDefaults()
	switch {
	case r.Surrogate != "base" && r.Surrogate != "relaxed":
		return fmt.Errorf("unknown surrogate %q: want base or relaxed", r.Surrogate)
	case bad(r.Temperature) || r.Temperature < 0:
		return fmt.Errorf("surrogate temperature is %v; want a finite number > 0", r.Temperature)
	case bad(r.LearningRate) || r.LearningRate < 0:
		return fmt.Errorf("learning rate is %v; want a finite number > 0", r.LearningRate)
	case r.Optimizer != Adam && r.Optimizer != Plain:
		return fmt.Errorf("unknown optimizer %d", int(r.Optimizer))
	case r.Weights != svgd.SelfNormalized && r.Weights != svgd.Rank:
		return fmt.Errorf("unknown weighting %d", int(r.Weights))
	case r.Kernel != svgd.RBF && r.Kernel != svgd.Coordinatewise:
		return fmt.Errorf("unknown kernel %d", int(r.Kernel))
	case bad(r.WeightPower) || r.WeightPower < 0 || r.WeightPower > 1:
		return fmt.Errorf("weight power is %v; want a number in (0, 1] (0 means 1)", r.WeightPower)
	case r.WeightAnneal < 0:
		return fmt.Errorf("weight annealing length is %d; want ≥ 0", r.WeightAnneal)
	case r.WeightPower != 1 && r.Weights != svgd.SelfNormalized:
		return fmt.Errorf("weight tempering needs self-normalised weights")
	case r.Device != sampler.CPU && r.Device != sampler.CUDA:
		return fmt.Errorf("unknown device %d", int(r.Device))
	case r.Precision != sampler.Float64 && r.Precision != sampler.Float32:
		return fmt.Errorf("unknown precision %d", int(r.Precision))
	case r.Precision == sampler.Float32 && r.Device != sampler.CUDA:
		return fmt.Errorf("float32 is the GPU's precision (with --device cuda); the CPU computes in float64")
	}
	if err := optim.Validate(r.Beta1, r.Beta2, r.Epsilon); err != nil {
		return err
	}
	return r.Bandwidth.Validate()
}

// memory estimates the bytes GF-SVGD allocates for n particles on m
// (the method's Memory).
func memory(m model.Model, n int, s sampler.Settings) float64 {
	nf, df := float64(n), float64(m.Dim())
	if s != nil && s.(*Settings).Device != sampler.CPU {
		// On a GPU the host holds the starting points, their
		// copy, the positions read back and their states; the
		// device's memory is checked against the device.
		return 8 * 4 * nf * df
	}
	if s != nil && s.(*Settings).Kernel == svgd.Coordinatewise {
		return 8*(0.5*nf*nf) + 8*13*nf*df
	}
	// Kernel, kernel × weights, median pairs; positions, states,
	// scores, direction, previous positions, Adam's moments, and the
	// direction's products.
	need := 8*(2.5*nf*nf) + 8*11*nf*df
	if _, ok := m.(model.RelaxedBatch); ok {
		// The batched relaxation: memberships, derivatives and
		// gradient over all K states, and the model's n×d products.
		k := float64(model.Offsets(m)[m.Dim()])
		need += 8*3*nf*k + 8*3*nf*df
	}
	if _, ok := m.(model.LogProbBatch); ok {
		need += 8 * 2 * nf * df // the batched log p*: spins and preactivations
	}
	return need
}
