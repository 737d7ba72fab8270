package model

// NewGradientTracker returns a gradient tracker for m at a copy of z: the
// model's own when it implements RelaxedIncremental, otherwise a generic one
// that evaluates RelaxedLogProb on whole membership vectors (every variable
// counts as changed by a Try) and takes log p* changes from Delta or
// LogProb.
func NewGradientTracker(m Relaxed, z []int) GradientTracker {
	if inc, ok := m.(RelaxedIncremental); ok {
		return inc.NewGradientTracker(z)
	}
	off := Offsets(m)
	f := off[len(off)-1]
	g := &genericGradTracker{
		m: m, off: off, t: genericTracker{m: m, z: make([]int, len(z))},
		mem: make([]float64, f), g: make([]float64, f), g2: make([]float64, f),
		all: make([]int, len(z)), ti: -1,
	}
	for i := range g.all {
		g.all[i] = i
	}
	g.Reset(z)
	return g
}

// genericGradTracker keeps the one-hot memberships of its configuration;
// a Try flips two of them, evaluates the whole gradient and flips them back.
type genericGradTracker struct {
	m      Relaxed
	off    []int
	t      genericTracker // the configuration and DeltaLogProb
	mem    []float64      // one-hot memberships of t.z
	g, g2  []float64      // gradient at t.z and at the tried configuration
	all    []int          // 0, 1, …, d−1
	ti, ts int            // the pending Try (ti < 0: none)
}

func (g *genericGradTracker) State() []int                  { return g.t.z }
func (g *genericGradTracker) Grad() []float64               { return g.g }
func (g *genericGradTracker) DeltaLogProb(i, s int) float64 { return g.t.DeltaLogProb(i, s) }

func (g *genericGradTracker) Try(i, s int) ([]int, []float64) {
	a, b := g.off[i]+g.t.z[i], g.off[i]+s
	g.mem[a], g.mem[b] = 0, 1
	g.m.RelaxedLogProb(g.g2, g.mem)
	g.mem[b], g.mem[a] = 0, 1
	g.ti, g.ts = i, s
	return g.all, g.g2
}

func (g *genericGradTracker) Commit() {
	if g.ti < 0 {
		panic("model: GradientTracker.Commit without a pending Try")
	}
	i, s := g.ti, g.ts
	g.mem[g.off[i]+g.t.z[i]], g.mem[g.off[i]+s] = 0, 1
	g.t.z[i] = s
	g.g, g.g2 = g.g2, g.g
	g.ti = -1
}

func (g *genericGradTracker) Reset(z []int) {
	copy(g.t.z, z)
	clear(g.mem)
	for i, s := range g.t.z {
		g.mem[g.off[i]+s] = 1
	}
	g.m.RelaxedLogProb(g.g, g.mem)
	g.ti = -1
}
