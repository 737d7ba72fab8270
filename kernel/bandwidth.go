package kernel

import (
	"fmt"
	"math"
)

// Rule selects how the bandwidth h is chosen.
type Rule int

const (
	// RuleMedianSVGD is h = med²/log(n+1), the rule of the common SVGD
	// code and dstein's default.
	RuleMedianSVGD Rule = iota
	// RuleMedianPaper is h = med²/(2 log(n+1)), the paper's rule: a kernel
	// half as wide.
	RuleMedianPaper
	// RuleFixed uses Bandwidth.H.
	RuleFixed
	// RuleMedian is h = med², the median heuristic of kernel two-sample
	// and goodness-of-fit tests (no log(n+1) factor: a test's kernel
	// should not narrow as n grows).
	RuleMedian
)

// String returns the rule's name as the command line spells it.
func (r Rule) String() string {
	switch r {
	case RuleMedianPaper:
		return "paper"
	case RuleMedianSVGD:
		return "svgd"
	case RuleFixed:
		return "fixed"
	case RuleMedian:
		return "median"
	}
	return fmt.Sprintf("Rule(%d)", int(r))
}

// MarshalText implements encoding.TextMarshaler.
func (r Rule) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses a rule name (ParseRule).
func (r *Rule) UnmarshalText(b []byte) error {
	v, err := ParseRule(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// ParseRule parses "paper", "svgd", "median" or "fixed".
func ParseRule(s string) (Rule, error) {
	switch s {
	case "paper":
		return RuleMedianPaper, nil
	case "svgd":
		return RuleMedianSVGD, nil
	case "fixed":
		return RuleFixed, nil
	case "median":
		return RuleMedian, nil
	}
	return 0, fmt.Errorf("unknown bandwidth rule %q: want paper, svgd, median or fixed", s)
}

// Bandwidth configures the choice of h. The zero value is h = med²/log(n+1)
// with the median over distinct pairs and multiplier 1.
type Bandwidth struct {
	// Rule picks the formula. Default RuleMedianSVGD.
	Rule Rule `json:"rule" flag:"bandwidth" help:"bandwidth rule: svgd (h = med²/log(n+1)), paper (med²/(2 log(n+1))), median (med²) or fixed (with --fixed-h)"`
	// Scale multiplies h. Default (0) means 1.
	Scale float64 `json:"scale" flag:"bandwidth-scale,positive" help:"multiplier of the bandwidth"`
	// H is the bandwidth for RuleFixed; it must be > 0 then.
	H float64 `json:"h" flag:"fixed-h,positive" help:"the bandwidth h of --bandwidth fixed"`
	// IncludeDiagonal takes the median over all n² ordered pairs, the n
	// zero self-distances included, instead of the n(n−1)/2 distinct pairs.
	IncludeDiagonal bool `json:"median_all_pairs" flag:"median-all-pairs" help:"take the median over all n² pairs, zeros included, not the distinct pairs"`
}

// Validate reports a setting that cannot be used.
func (b Bandwidth) Validate() error {
	if b.Scale < 0 || math.IsNaN(b.Scale) || math.IsInf(b.Scale, 0) {
		return fmt.Errorf("bandwidth scale is %v; want a finite number > 0 (0 means 1)", b.Scale)
	}
	switch b.Rule {
	case RuleMedianPaper, RuleMedianSVGD, RuleMedian:
		if b.H != 0 {
			return fmt.Errorf("a fixed bandwidth h = %v goes with the rule fixed (--bandwidth fixed), not %s", b.H, b.Rule)
		}
	case RuleFixed:
		if b.H == 0 {
			return fmt.Errorf("fixed bandwidth is 0: the rule fixed needs its h (--fixed-h on the command line, \"h\" in a file)")
		}
		if !(b.H > 0) || math.IsInf(b.H, 0) {
			return fmt.Errorf("fixed bandwidth is %v; want a finite number > 0", b.H)
		}
	default:
		return fmt.Errorf("unknown bandwidth rule %d", int(b.Rule))
	}
	return nil
}

// Resolved returns b with its default scale filled in.
func (b Bandwidth) Resolved() Bandwidth {
	if b.Scale == 0 {
		b.Scale = 1
	}
	return b
}

// NeedsMedian reports whether the rule uses the median distance.
func (b Bandwidth) NeedsMedian() bool { return b.Rule != RuleFixed }

// FromMedian returns h for n points whose median squared distance is med2.
// When med2 is zero (all points coincide, or n < 2) the median rules fall
// back to h = Scale·1, so that the kernel stays defined.
func (b Bandwidth) FromMedian(med2 float64, n int) float64 {
	scale := b.Scale
	if scale == 0 {
		scale = 1
	}
	var h float64
	switch b.Rule {
	case RuleFixed:
		h = b.H
	case RuleMedianPaper:
		h = med2 / (2 * math.Log(float64(n)+1))
	case RuleMedian:
		h = med2
	default:
		h = med2 / math.Log(float64(n)+1)
	}
	if !(h > 0) {
		h = 1
	}
	return scale * h
}
