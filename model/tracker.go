package model

import "math"

// Tracker follows one configuration z of a model through changes of single
// variables, so that samplers making local moves (Gibbs, discontinuous HMC,
// locally balanced proposals) pay only for a variable's neighbourhood. A
// tracker is not safe for concurrent use; make one per chain.
type Tracker interface {
	// State returns the current configuration. The caller must not modify
	// it; it changes with Set and Reset.
	State() []int
	// LogConditional writes, for each state s of variable i, log p*(z with
	// z_i = s) up to a constant that may depend on the other variables,
	// and returns dst[:K_i].
	LogConditional(dst []float64, i int) []float64
	// DeltaLogProb returns log p*(z with z_i = s) − log p*(z), with the
	// conventions of Delta.DeltaLogProb.
	DeltaLogProb(i, s int) float64
	// Set changes variable i to state s.
	Set(i, s int)
	// Reset moves the tracker to configuration z (copied).
	Reset(z []int)
}

// Incremental is a model with its own fast Tracker.
type Incremental interface {
	Model
	// NewTracker returns a tracker at a copy of z.
	NewTracker(z []int) Tracker
}

// NewTracker returns a tracker for m at a copy of z: the model's own when it
// implements Incremental, otherwise a generic one that calls Conditional,
// Delta or LogProb on the whole configuration.
func NewTracker(m Model, z []int) Tracker {
	if inc, ok := m.(Incremental); ok {
		return inc.NewTracker(z)
	}
	return &genericTracker{m: m, z: append([]int(nil), z...)}
}

type genericTracker struct {
	m Model
	z []int
}

func (g *genericTracker) State() []int  { return g.z }
func (g *genericTracker) Set(i, s int)  { g.z[i] = s }
func (g *genericTracker) Reset(z []int) { copy(g.z, z) }

func (g *genericTracker) LogConditional(dst []float64, i int) []float64 {
	if c, ok := g.m.(Conditional); ok {
		return c.LogConditional(dst, g.z, i)
	}
	k := len(g.m.States(i))
	dst = dst[:0]
	old := g.z[i]
	for s := range k {
		g.z[i] = s
		dst = append(dst, g.m.LogProb(g.z))
	}
	g.z[i] = old
	return dst
}

func (g *genericTracker) DeltaLogProb(i, s int) float64 {
	if dl, ok := g.m.(Delta); ok {
		return dl.DeltaLogProb(g.z, i, s)
	}
	if s == g.z[i] {
		return 0
	}
	before := g.m.LogProb(g.z)
	old := g.z[i]
	g.z[i] = s
	after := g.m.LogProb(g.z)
	g.z[i] = old
	if math.IsInf(before, -1) && math.IsInf(after, -1) {
		return 0
	}
	return after - before
}
