package infer

import "fmt"

// Keep says which states of MCMC chains a run keeps: after Warmup
// iterations, every Thin-th state, Draws per chain (Stan's warm-up, draws
// and thinning). The zero value keeps only the final states.
type Keep struct {
	// Warmup is the number of iterations discarded first.
	Warmup int `json:"warmup"`
	// Draws is the number of states kept per chain.
	Draws int `json:"draws"`
	// Thin keeps every Thin-th state after the warm-up. Default (0) is 1.
	Thin int `json:"thin"`
}

func (k Keep) thin() int { return max(1, k.Thin) }

// Iters returns the iterations a run that keeps these draws makes:
// Warmup + Draws·Thin.
func (k Keep) Iters() int { return k.Warmup + k.Draws*k.thin() }

// Validate reports counts that cannot be used.
func (k Keep) Validate() error {
	switch {
	case k.Draws < 1:
		return fmt.Errorf("the number of draws per chain must be at least 1, got %d", k.Draws)
	case k.Warmup < 0:
		return fmt.Errorf("the warm-up must be at least 0 iterations, got %d", k.Warmup)
	case k.Thin < 0:
		return fmt.Errorf("the thinning must be at least 1, got %d", k.Thin)
	case k.Draws > (1<<31)/k.thin()-k.Warmup/k.thin():
		return fmt.Errorf("%d draws thinned by %d after %d warm-up iterations are more iterations than a run can count", k.Draws, k.thin(), k.Warmup)
	}
	return nil
}

// index reports whether the state after iteration iter (1-based) is kept,
// and as which draw (0-based).
func (k Keep) index(iter int) (int, bool) {
	a := iter - k.Warmup
	if a <= 0 || a%k.thin() != 0 {
		return 0, false
	}
	t := a/k.thin() - 1
	return t, t < k.Draws
}

// keepDraw copies the n chains' current states (n×d) into draw t of each
// chain in dst, laid out chain by chain: row c·draws + t.
func keepDraw(dst, cur []int, n, draws, t, d int) {
	for c := range n {
		copy(dst[(c*draws+t)*d:(c*draws+t+1)*d], cur[c*d:(c+1)*d])
	}
}

// LayoutKind names how a run's samples are grouped.
type LayoutKind string

// The layouts.
const (
	// LayoutChains: draws of MCMC chains, chain by chain.
	LayoutChains LayoutKind = "chains"
	// LayoutReplicates: the particles or final states of independent
	// replicates, replicate by replicate.
	LayoutReplicates LayoutKind = "replicates"
	// LayoutSingle: the n particles or chains' final states of one run.
	LayoutSingle LayoutKind = "single"
)

// Layout says how the rows of a run's samples are grouped: Groups groups
// (chains or replicates) of Length consecutive rows each.
type Layout struct {
	Kind           LayoutKind
	Groups, Length int
	// Warmup and Thin are those of kept draws (LayoutChains).
	Warmup, Thin int
}
