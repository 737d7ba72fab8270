package infer

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/rng"
	"github.com/dstein/dstein/sampler"
	"gonum.org/v1/gonum/stat/distuv"
)

// ModeCheck is what CheckModes found.
type ModeCheck struct {
	// Ran says whether the check ran; Note says why not, or how it went.
	Ran  bool   `json:"ran"`
	Note string `json:"note"`
	// Evaluations is what the second run spent (at most the first's).
	Evaluations int64 `json:"model_evaluations,omitempty"`
	// Worst is the quantity whose means differ most, Z its difference
	// over the two standard errors combined, Limit the z beyond which
	// the check warns.
	Worst string  `json:"worst,omitempty"`
	Z     float64 `json:"z,omitempty"`
	Limit float64 `json:"limit,omitempty"`
	// Beyond counts the quantities whose z exceeds CheckManyZ; a warning
	// needs Many of them (a missed mode moves many means at once).
	Beyond int `json:"beyond,omitempty"`
	Many   int `json:"many,omitempty"`
	// Warning is set when the means disagree beyond Limit.
	Warning string `json:"warning,omitempty"`
	// Unsettled says, where there is no warning, that the second run's
	// own chains disagree (R̂ above 1.2): the check then vouches for
	// nothing.
	Unsettled bool `json:"unsettled,omitempty"`
}

// Settings of CheckModes.
const (
	// CheckDraws is the draws per chain the second run keeps: few, since
	// its budget is the first run's and its ladder takes a share.
	CheckDraws = 50
	// CheckMinZ is the smallest z at which CheckModes warns, whatever the
	// number of quantities: the second run's MCSE, from 4 chains of 50
	// draws, is rough. Measured with Gibbs, GWG and DHMC (4 chains of 1000
	// draws after 1000 warm-up, seeds 1–100): every run whose chains all
	// sat in one family of examples/coverage/rbm16-pat.json's modes (16 of
	// 300, unwarned and wrong by hundreds of MCSE) had all 16 means beyond
	// CheckManyZ and the largest at z 5.7–10.
	CheckMinZ = 5
	// CheckManyZ is the z beyond which a quantity counts towards the
	// several that a warning also needs: max(3, n/20) of the n compared
	// (all of them, if fewer). On the weak 10×10 grid the largest z
	// passed 5 in 2 of 100 right runs (the second run's MCSE, from 50
	// draws a chain, is sometimes too small), with 1–3 quantities beyond
	// 3; every trapped run on rbm16-pat had all 16 beyond it.
	CheckManyZ = 3
	// checkSettledRhat is the largest R̂ of the second run's quantities
	// at which a check without a warning vouches for the chains (4 chains
	// of 50 draws pass 1.06 by chance; on the d = 1000 RBM at the cost of
	// 4 Gibbs chains of 2000 sweeps it read 3.6).
	checkSettledRhat = 1.2
	// checkFamily is the chance, for means that agree, that one of the
	// quantities' z passes the limit (the limit's family-wise part).
	checkFamily = 1e-3
)

// CheckModes checks a run of chains (out, from Run on m) for modes that
// no chain entered, which no diagnostic of those chains can see: it runs
// dstein's default (parallel tempering whose ladder a pilot sizes) on m
// with 4 chains at the first run's cost in model evaluations (Keep.Budget,
// CheckDraws draws per chain) and compares every variable's mean (or
// state's frequency) in the two runs. Where one differs by more than
// max(CheckMinZ, the family-wise normal quantile for 1e-3) standard errors
// of the difference, and several by more than CheckManyZ, it returns a
// warning; without one, a second run whose own chains disagree (R̂ above
// 1.2) makes the check inconclusive (Unsettled). The second run draws
// from the first's key's rng.Check stream, so the check's result is as
// reproducible as the run. It does not run on parallel tempering,
// Swendsen–Wang or exact draws (runs that already cross between modes,
// or need not), nor on runs without chains' draws; the Note says so. A
// budget too small for the second run's pilot and draws is a Note too,
// not an error.
func CheckModes(ctx context.Context, m model.Model, out *Output) (ModeCheck, error) {
	if out == nil || out.Diagnostics == nil || out.Layout.Kind != LayoutChains || out.Diagnostics.Source != SourceChains {
		return ModeCheck{Note: "not checked: " + errNoChains.Error()}, nil
	}
	if err := CheckModesApplies(out.Pipeline, out.Layout.Length); err != nil {
		return ModeCheck{Note: "not checked: " + err.Error()}, nil
	}
	def, err := Preset("default")
	if err != nil {
		return ModeCheck{}, err
	}
	est, err := ParseEstimates(out.Diagnostics.Estimates)
	if err != nil {
		est = RaoBlackwell
	}
	spec := Spec{Pipeline: def, N: DefaultChains.Chains, Key: out.Key.For(rng.Check),
		Keep: Keep{Draws: CheckDraws, Budget: out.Evaluations}, Estimates: est}
	probe, err := Run(ctx, m, spec)
	if err != nil {
		if ctx.Err() != nil {
			return ModeCheck{}, ctx.Err()
		}
		return ModeCheck{Note: fmt.Sprintf("not checked: the default at this run's cost (%d model evaluations) could not run: %v", out.Evaluations, err)}, nil
	}
	if probe.Status != sampler.Completed || probe.Diagnostics == nil {
		return ModeCheck{}, ctx.Err()
	}
	theirs := map[string]Quantity{}
	for _, q := range probe.Diagnostics.Quantities {
		theirs[q.Name] = q
	}
	mc := ModeCheck{Ran: true, Evaluations: probe.Evaluations}
	n := 0
	var mine, other Quantity // the worst pair
	for _, q := range out.Diagnostics.Quantities {
		p, ok := theirs[q.Name]
		if !ok || q.Name == "log_p" {
			continue
		}
		n++
		se := math.Hypot(q.MCSE, p.MCSE)
		if !(se > 0) {
			continue
		}
		z := math.Abs(q.Mean-p.Mean) / se
		if z > CheckManyZ {
			mc.Beyond++
		}
		if z > mc.Z {
			mc.Z, mc.Worst, mine, other = z, q.Name, q, p
		}
	}
	if n == 0 {
		return ModeCheck{Note: "not checked: the two runs share no quantity"}, nil
	}
	mc.Limit = math.Max(CheckMinZ, distuv.UnitNormal.Quantile(1-checkFamily/(2*float64(n))))
	mc.Many = min(n, max(3, (n+19)/20))
	if mc.Z > mc.Limit && mc.Beyond >= mc.Many {
		mc.Warning = fmt.Sprintf("the chains may all sit in modes that others leave: %d of %d means differ from a run of the default (tempering sized by its pilot) at the same cost by more than %g standard errors, the most %s: %.4g ± %.2g (MCSE) here against %.4g ± %.2g, z = %.3g, beyond %.3g; no diagnostic of the chains themselves can see a mode none of them entered: run the default, or many more chains",
			mc.Beyond, n, float64(CheckManyZ), mc.Worst, mine.Mean, mine.MCSE, other.Mean, other.MCSE, mc.Z, mc.Limit)
		mc.Note = fmt.Sprintf("checked against the default at the same cost (%d model evaluations): %d of %d means differ by more than %g standard errors, %s by z = %.3g, beyond %.3g", probe.Evaluations, mc.Beyond, n, float64(CheckManyZ), mc.Worst, mc.Z, mc.Limit)
	} else {
		verdict := "no sign of a missed mode"
		worstRhat := 0.0
		for _, q := range probe.Diagnostics.Quantities {
			if r := float64(q.Rhat); r > worstRhat {
				worstRhat = r
			}
		}
		if worstRhat > checkSettledRhat {
			// The second run did not mix at this cost: its means are
			// too rough to vouch for the chains.
			mc.Unsettled = true
			verdict = fmt.Sprintf("inconclusive: the default's own chains at this cost disagree (R̂ up to %.3g), so a missed mode may not show; run the default to its own ESS target to compare", worstRhat)
		}
		mc.Note = fmt.Sprintf("checked against the default at the same cost (%d model evaluations): largest difference z = %.3g (%s; limit %.3g), %d of %d beyond %g (a warning needs %d): %s", probe.Evaluations, mc.Z, mc.Worst, mc.Limit, mc.Beyond, n, float64(CheckManyZ), mc.Many, verdict)
	}
	return mc, nil
}

var errNoChains = errors.New("the check compares chains' draws (--draws) with a tempered run")

// CheckModesApplies says why CheckModes would not check a run of pl that
// keeps draws per chain, or returns nil: it checks chains' draws, of
// methods that do not already move between modes (parallel tempering,
// Swendsen–Wang) or draw exactly.
func CheckModesApplies(pl sampler.Pipeline, draws int) error {
	if draws < 1 {
		return errNoChains
	}
	if st := pl.Stages; len(st) > 0 {
		switch last := st[len(st)-1].Method; last {
		case "pt", "sw", "exact":
			return fmt.Errorf("%s already moves between modes, or draws exactly", last)
		}
	}
	return nil
}

// CheckMemory estimates what CheckModes's second run allocates on m.
func CheckMemory(m model.Model) float64 {
	def, err := Preset("default")
	if err != nil {
		return 0
	}
	return Memory(m, Spec{Pipeline: def, N: DefaultChains.Chains, Keep: Keep{Draws: CheckDraws, Budget: 1}})
}
