package exact

import (
	"context"
	"fmt"
	"math"

	"github.com/dstein/dstein/model"
)

// DefaultMaxStates is the largest state space Enumerate walks by default
// (2^22 joint states).
const DefaultMaxStates = 1 << 22

// Result holds exact answers for a model.
type Result struct {
	// LogZ is log Σ_z exp(LogProb(z)): the log normaliser of the model's
	// LogProb, which includes whatever constant the model leaves out.
	LogZ float64
	// Marginals[i][s] is P(z_i = s).
	Marginals [][]float64
	// Means[i] is E[z_i] in the model's state values.
	Means []float64
}

// Enumerate visits every joint state of m and returns exact answers. It
// refuses state spaces larger than maxStates (DefaultMaxStates when
// maxStates ≤ 0) and models in which every state has probability zero.
func Enumerate(m model.Model, maxStates int) (*Result, error) {
	return enumerateContext(context.Background(), m, maxStates)
}

// pollStates is the number of joint states an enumeration visits between
// two looks at its context.
const pollStates = 1 << 12

// enumerateContext is Enumerate that stops with ctx's error when ctx is
// canceled.
func enumerateContext(ctx context.Context, m model.Model, maxStates int) (*Result, error) {
	if maxStates <= 0 {
		maxStates = DefaultMaxStates
	}
	d := m.Dim()
	if d < 1 {
		return nil, fmt.Errorf("exact: model has no variables")
	}
	if n := model.StateCount(m); n > maxStates {
		return nil, tooLarge("exact: the model has more than %d joint states; enumeration is limited to %d", maxStates, maxStates)
	}
	k := make([]int, d)
	acc := make([][]float64, d)
	for i := range d {
		k[i] = len(m.States(i))
		acc[i] = make([]float64, k[i])
	}
	z := make([]int, d)
	// Running log-sum-exp with rescaling: acc holds Σ exp(lp − ref).
	ref := math.Inf(-1)
	var total float64
	for idx := 0; ; idx++ {
		if idx&(pollStates-1) == pollStates-1 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		lp := m.LogProb(z)
		if math.IsNaN(lp) || math.IsInf(lp, 1) {
			return nil, fmt.Errorf("exact: model returned log-probability %v at state %v", lp, z)
		}
		if !math.IsInf(lp, -1) {
			if lp > ref {
				scale := math.Exp(ref - lp)
				total *= scale
				for i := range acc {
					for s := range acc[i] {
						acc[i][s] *= scale
					}
				}
				ref = lp
			}
			w := math.Exp(lp - ref)
			total += w
			for i, s := range z {
				acc[i][s] += w
			}
		}
		// Odometer increment, last variable fastest.
		i := d - 1
		for ; i >= 0; i-- {
			z[i]++
			if z[i] < k[i] {
				break
			}
			z[i] = 0
		}
		if i < 0 {
			break
		}
	}
	if total == 0 {
		return nil, fmt.Errorf("exact: the model gives probability zero to every state")
	}
	res := &Result{LogZ: ref + math.Log(total), Marginals: acc, Means: make([]float64, d)}
	for i := range acc {
		for s := range acc[i] {
			acc[i][s] /= total
			res.Means[i] += acc[i][s] * m.States(i)[s]
		}
	}
	return res, nil
}
