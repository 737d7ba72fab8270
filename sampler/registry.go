package sampler

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/dstein/dstein/internal/suggest"
	"github.com/dstein/dstein/model"
)

// Settings are a method's typed settings: a pointer to a struct whose zero
// value is valid (each field documents its default) and whose fields carry
// JSON names. Fields that the command line sets also carry a `flag:"name"`
// tag and a `help:"…"` text.
type Settings interface {
	// Validate reports the first setting that cannot be used.
	Validate() error
	// Resolved returns a copy with every default filled in: the settings
	// a run actually uses, as summaries record them.
	Resolved() Settings
}

// Ignorer is implemented by settings in which one setting can make
// another have no effect (GF-SVGD's temperature, with the base surrogate).
// Ignored returns why the setting with JSON name field has none under the
// others, or "" when it has one. The command line refuses a flag that sets
// such a setting; a pipeline file may hold it (a run's recorded settings
// hold every field).
type Ignorer interface {
	Ignored(field string) string
}

// Method is one sampling method, registered once by its own package.
type Method struct {
	// Name is what --method and pipeline files call it.
	Name string
	// Description says in one line what it does.
	Description string
	// NewSettings returns a pointer to new zero-valued settings.
	NewSettings func() Settings
	// New builds the method's sampler for a problem. It may assume that
	// p.Check() passed and that s came from NewSettings and validated.
	New func(p *Problem, s Settings) (Sampler, error)
	// Iters is the number of iterations of a run of the method alone when
	// none is given.
	Iters int
	// Unit names one iteration ("sweep", "iteration", "proposal").
	Unit string
	// OneShot methods make their samples in one step (exact sampling): a
	// run gives them exactly one iteration.
	OneShot bool
	// Continuous methods move points of R^d and start from Problem.X;
	// the others start from Problem.Z.
	Continuous bool
	// Needs says what the method needs of a model beyond log p*, for
	// documentation ("an exact sampler", "a ferromagnetic Ising or Potts
	// model").
	Needs string
	// Memory estimates the bytes the method allocates for n particles or
	// chains on m, beyond the model itself; nil means n·d·64 bytes.
	Memory func(m model.Model, n int, s Settings) float64
	// Approximate methods do not converge to exact draws of the model
	// (GF-SVGD's particles settle near it); the conformance tests check
	// the others against exact marginals.
	Approximate bool
	// Warnings, when not nil, returns the method's warnings about a run
	// from its statistics at the end (for n particles or chains), one line
	// each: what went wrong and what to do.
	Warnings func(s Stats, n int) []string
}

// Count writes n iterations of the method in words: "100 iterations",
// "30 sweeps", "1 sweep of d proposals".
func (m *Method) Count(n int) string {
	u := m.Unit
	if n != 1 {
		first, rest, _ := strings.Cut(u, " ")
		u = first + "s"
		if rest != "" {
			u += " " + rest
		}
	}
	return fmt.Sprintf("%d %s", n, u)
}

// MemoryOf returns the method's memory estimate for n particles or chains
// on mod.
func (m *Method) MemoryOf(mod model.Model, n int, s Settings) float64 {
	if m.Memory != nil {
		return m.Memory(mod, n, s)
	}
	return 64 * float64(n) * float64(mod.Dim())
}

// States returns Σ_i K_i, the total number of states of m's variables.
func States(m model.Model) int {
	k := 0
	for i := range m.Dim() {
		k += len(m.States(i))
	}
	return k
}

var (
	regMu   sync.RWMutex
	methods = map[string]*Method{}
	order   []string
)

// Register adds a method; its package calls it from init. It panics on a
// duplicate or incomplete registration (a programming error).
func Register(m Method) {
	regMu.Lock()
	defer regMu.Unlock()
	switch {
	case m.Name == "" || m.NewSettings == nil || m.New == nil || m.Description == "":
		panic(fmt.Sprintf("sampler: incomplete registration of %q", m.Name))
	case methods[m.Name] != nil:
		panic(fmt.Sprintf("sampler: method %q registered twice", m.Name))
	}
	if m.Unit == "" {
		m.Unit = "iteration"
	}
	methods[m.Name] = &m
	order = append(order, m.Name)
	sort.Strings(order)
}

// Lookup returns the named method, or an error that lists the methods and
// suggests the closest names.
func Lookup(name string) (*Method, error) {
	regMu.RLock()
	defer regMu.RUnlock()
	if m := methods[name]; m != nil {
		return m, nil
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("unknown method %q: no sampling method is registered in this program (import github.com/dstein/dstein/sampler/all, or the method's own package, to register them)", name)
	}
	return nil, fmt.Errorf("unknown method %q%s (methods: %s)", name, suggest.Hint(name, order), strings.Join(order, ", "))
}

// Methods returns every registered method, by name.
func Methods() []*Method {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]*Method, len(order))
	for i, n := range order {
		out[i] = methods[n]
	}
	return out
}

// MethodNames returns the registered names in alphabetical order.
func MethodNames() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	return append([]string(nil), order...)
}
