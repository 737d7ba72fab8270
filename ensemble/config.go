package ensemble

import (
	"fmt"
	"math"
	"strings"

	"github.com/dstein/dstein/kernel"
	"github.com/dstein/dstein/svgd"
)

// Defaults of the GF-SVGD surrogate's temperature schedule and of the
// learning rate (see EXPERIMENTS.md, "Binarized networks", for the
// measurements that chose them).
const (
	DefaultTemperature    float64 = 0.3
	DefaultTemperatureEnd float64 = 0.01
	// MinTemperature is the smallest relaxation temperature: the networks
	// compute σ(x/τ) in float32, where τ = 1e-300 rounded to 0 (and then
	// trained at τ = 1) and τ = 1e-40 made 1/τ infinite (NaN losses). At
	// 1e-6 the relaxation is sign itself beyond |x| of 1e-5.
	MinTemperature float64 = 1e-6
	// DefaultRegularizer is BNN+'s λ when Config.Regularizer is nil.
	DefaultRegularizer  float64 = 1e-6
	DefaultLearningRate float64 = 0.01
)

// Method is a training method: its name (Config.Method, the CLI's
// --method, the checkpoint's) and the properties that the trainer, the
// checkpoint, the memory estimate and the export read, so that no code
// outside this registry switches on a method's name.
type Method struct {
	Name string
	// Joint trains every member at once as interacting particles
	// (GF-SVGD); otherwise the members are trained one after another.
	Joint bool
	// Boosted members train on resamples by sample weights that each
	// member updates, and vote with weights α_k (BENN's boosting).
	Boosted bool
	// Bootstrap members each train on a bootstrap resample (bagging).
	Bootstrap bool
	// SignSwish trains through the SignSwish derivative with BNN+'s
	// regulariser instead of the straight-through estimator.
	SignSwish bool
}

// methods is the registry, in the order the CLI lists them.
var methods = []Method{
	{Name: "gfsvgd", Joint: true},
	{Name: "ste"},
	{Name: "bnnplus", SignSwish: true},
	{Name: "bagging", Bootstrap: true},
	{Name: "benn", Boosted: true},
}

// Methods lists the training methods' names.
var Methods = func() []string {
	out := make([]string, len(methods))
	for k, m := range methods {
		out[k] = m.Name
	}
	return out
}()

// DefaultMethod is the method of a Config without one.
const DefaultMethod = "gfsvgd"

// MethodNamed returns the registered method of that name.
func MethodNamed(name string) (Method, bool) {
	for _, m := range methods {
		if m.Name == name {
			return m, true
		}
	}
	return Method{}, false
}

// Spec returns the configuration's method (the default's when none is
// set; the zero Method when the name is not registered, which Validate
// refuses).
func (c Config) Spec() Method {
	name := c.Method
	if name == "" {
		name = DefaultMethod
	}
	m, _ := MethodNamed(name)
	return m
}

// Config describes a training run. Zero fields take the documented defaults
// (see WithDefaults).
type Config struct {
	Data   string `json:"data"`
	Arch   string `json:"arch"`
	Method string `json:"method"`
	// Ensemble is the number of networks (particles, or members).
	Ensemble int    `json:"ensemble"`
	Epochs   int    `json:"epochs"`
	Batch    int    `json:"batch"`
	Seed     uint64 `json:"seed"`
	// LearningRate is Adam's initial step size; it decays by a cosine
	// schedule to LearningRate/100 over the run. Default
	// DefaultLearningRate.
	LearningRate float64 `json:"learning_rate"`
	// Init is how latent weights start: "glorot" (U(−a, a) with Glorot's a,
	// default) or "uniform" (U(−1, 1), the whole clipping range).
	Init string `json:"init,omitempty"`
	// TrainLimit, when > 0, uses only the first TrainLimit training
	// examples (for quick runs); TestLimit likewise for the test set.
	TrainLimit int `json:"train_limit,omitempty"`
	TestLimit  int `json:"test_limit,omitempty"`
	// Weights is "rank" (the paper's γ_j = 1/H(μ_j), default) or "self"
	// (self-normalised ρ/p_c), for GF-SVGD.
	Weights string `json:"weights,omitempty"`
	// Bandwidth is the kernel's bandwidth rule for GF-SVGD: "paper"
	// (default, h = med²/(2 log(n+1)), the paper's appendix), "svgd" or
	// "median".
	Bandwidth string `json:"bandwidth,omitempty"`
	// Temperature τ of the relaxation σ(x/τ) of sign in GF-SVGD's
	// surrogate, for weights and activations (1 is the paper's σ). Default
	// (0): DefaultTemperature annealed to DefaultTemperatureEnd.
	Temperature float64 `json:"temperature,omitempty"`
	// TemperatureEnd, when > 0, anneals the temperature geometrically from
	// Temperature at the first step to TemperatureEnd at the last, so that
	// the surrogate approaches the binarized network as training ends.
	TemperatureEnd float64 `json:"temperature_end,omitempty"`
	// SwishBeta is BNN+'s SignSwish slope (default 5).
	SwishBeta float64 `json:"swish_beta,omitempty"`
	// Regularizer is BNN+'s weight λ of Σ(1 − |w|)² added to the mean
	// loss; nil is the default 1e-6, and a pointer to 0 means none (a
	// plain 0 could not say so: --regularizer 0 once trained with 1e-6).
	Regularizer *float64 `json:"regularizer,omitempty"`
}

// WithDefaults returns c with its zero fields set.
func (c Config) WithDefaults() Config {
	if c.Data == "" {
		c.Data = "mnist"
	}
	if c.Arch == "" {
		c.Arch = "cnn"
	}
	if c.Method == "" {
		c.Method = DefaultMethod
	}
	if c.Ensemble == 0 {
		c.Ensemble = 5
	}
	if c.Epochs == 0 {
		c.Epochs = 2
	}
	if c.Batch == 0 {
		c.Batch = 64
	}
	if c.LearningRate == 0 {
		c.LearningRate = DefaultLearningRate
	}
	if c.Init == "" {
		c.Init = "glorot"
	}
	if c.Weights == "" {
		c.Weights = "rank"
	}
	if c.Bandwidth == "" {
		c.Bandwidth = "paper"
	}
	if c.Temperature == 0 {
		c.Temperature = DefaultTemperature
		if c.TemperatureEnd == 0 {
			c.TemperatureEnd = DefaultTemperatureEnd
		}
	}
	if c.SwishBeta == 0 {
		c.SwishBeta = 5
	}
	if c.Regularizer == nil {
		c.Regularizer = new(DefaultRegularizer)
	}
	return c
}

// Validate reports the first setting that cannot be used.
func (c Config) Validate() error {
	c = c.WithDefaults()
	bad := func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }
	switch {
	case c.Spec().Name == "":
		return fmt.Errorf("unknown method %q; want one of %s", c.Method, strings.Join(Methods, ", "))
	case c.Ensemble < 1 || c.Ensemble > 64:
		return fmt.Errorf("ensemble size %d; want 1 to 64", c.Ensemble)
	case c.Epochs < 1 || c.Epochs > maxEpochs:
		return fmt.Errorf("epochs %d; want 1 to %d", c.Epochs, maxEpochs)
	case c.Batch < 2:
		return fmt.Errorf("batch size %d; want at least 2 (batch normalisation needs two examples)", c.Batch)
	case bad(c.LearningRate) || c.LearningRate <= 0:
		return fmt.Errorf("learning rate %v; want a finite number > 0", c.LearningRate)
	case c.TrainLimit < 0 || c.TestLimit < 0:
		return fmt.Errorf("train/test limits %d/%d; want ≥ 0", c.TrainLimit, c.TestLimit)
	case c.Init != "glorot" && c.Init != "uniform":
		return fmt.Errorf("init %q; want glorot or uniform", c.Init)
	case c.Weights != "rank" && c.Weights != "self":
		return fmt.Errorf("weights %q; want rank or self", c.Weights)
	case bad(c.Temperature) || c.Temperature <= 0:
		return fmt.Errorf("relaxation temperature %v; want a finite number > 0", c.Temperature)
	case c.Temperature < MinTemperature:
		return fmt.Errorf("relaxation temperature %v; want at least %g (the networks compute in float32, where a smaller τ rounds to 0 or makes 1/τ infinite)", c.Temperature, MinTemperature)
	case bad(c.TemperatureEnd) || c.TemperatureEnd < 0:
		return fmt.Errorf("final relaxation temperature %v; want a finite number ≥ 0 (0: no annealing)", c.TemperatureEnd)
	case c.TemperatureEnd > 0 && c.TemperatureEnd < MinTemperature:
		return fmt.Errorf("final relaxation temperature %v; want 0 (no annealing) or at least %g (the networks compute in float32, where a smaller τ rounds to 0 or makes 1/τ infinite)", c.TemperatureEnd, MinTemperature)
	case bad(c.SwishBeta) || c.SwishBeta <= 0:
		return fmt.Errorf("SignSwish β %v; want a finite number > 0", c.SwishBeta)
	case bad(*c.Regularizer) || *c.Regularizer < 0:
		return fmt.Errorf("regulariser %v; want a finite number ≥ 0", *c.Regularizer)
	}
	_, err := c.bandwidth()
	return err
}

func (c Config) bandwidth() (kernel.Bandwidth, error) {
	r, err := kernel.ParseRule(c.Bandwidth)
	if err != nil {
		return kernel.Bandwidth{}, err
	}
	if r == kernel.RuleFixed {
		return kernel.Bandwidth{}, fmt.Errorf("bandwidth rule fixed needs a value; use paper, svgd or median")
	}
	return kernel.Bandwidth{Rule: r}, nil
}

// maxEpochs bounds the epochs so that the random streams of (member,
// epoch) pairs, indexed member<<12|epoch, stay distinct.
const maxEpochs = 1 << 12

// weighting returns the svgd weighting of Weights.
func (c Config) weighting() svgd.Weighting {
	if c.Weights == "self" {
		return svgd.SelfNormalized
	}
	return svgd.Rank
}

// sequential reports whether the members are trained one after another.
func (c Config) sequential() bool { return !c.Spec().Joint }
