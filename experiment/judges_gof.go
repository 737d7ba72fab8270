package experiment

import (
	"fmt"
	"math"
	"strings"

	"github.com/dstein/dstein/gof"
)

// rejectBand is the largest rejection rate of a test that holds its level
// α over trials runs: three binomial standard errors above α, because a
// verdict reads a dozen rates at once (three tests, four n: at two
// standard errors one of them would cross by chance in about a quarter of
// the runs, at three in about 2%).
func rejectBand(trials int) float64 {
	a := gof.DefaultAlpha
	return a + 3*math.Sqrt(a*(1-a)/float64(max(1, trials)))
}

// judgeLevel is the verdict of "GF-KSD, DKSD and MMD hold their level":
// no rejection rate under the null above rejectBand, at any n.
func judgeLevel(tests []string) judge {
	return func(rows []Row, _ Mode) Verdict {
		var parts []string
		hold := 0
		for _, m := range tests {
			s := pick(rows, m, "reject")
			if len(s) == 0 {
				return missing(m + "'s rejection rate")
			}
			worst, at, over := -1.0, 0.0, 0
			for _, x := range s.xs() {
				r := s[x]
				if r.Mean > worst {
					worst, at = r.Mean, x
				}
				if r.Mean > rejectBand(r.Trials) {
					over++
				}
			}
			if over == 0 {
				hold++
			}
			parts = append(parts, fmt.Sprintf("%s worst %.3g at n = %g (above the band at %d of %d n)", m, worst, at, over, len(s)))
		}
		st := Partly
		switch hold {
		case len(tests):
			st = Holds
		case 0:
			st = Fails
		}
		return Verdict{st, fmt.Sprintf("rejection rates of true models at α = %g, band α + 3 binomial SE: %s", gof.DefaultAlpha, strings.Join(parts, "; "))}
	}
}

// judgePower is the verdict of "GF-KSD is more powerful than DKSD and MMD"
// over the alternatives (x ≠ null): holds when GF-KSD's rejection rate is
// above both others' somewhere and below neither anywhere, partly when it
// is above somewhere and below somewhere, fails when it is never above.
func judgePower(null float64, hasNull bool) judge {
	return func(rows []Row, _ Mode) Verdict {
		g := pick(rows, "gfksd", "reject")
		d, m := pick(rows, "dksd", "reject"), pick(rows, "mmd", "reject")
		if len(g) == 0 || len(d) == 0 || len(m) == 0 {
			return missing("gfksd, dksd and mmd rejection rates")
		}
		// Above means a higher rejection rate beyond noise.
		t := against(g, func(x float64) bool { return hasNull && x == null }, d, m)
		above, belowAny, of := t.allAbove, t.anyBelow, t.of
		because := fmt.Sprintf("GF-KSD (dstein's default surrogate) rejects more often than both DKSD and MMD at %d of %d alternatives and less often than one of them at %d", above, of, belowAny)
		if of == 0 {
			return missing("alternatives")
		}
		return grade(above > 0 && belowAny == 0, above > 0, because)
	}
}

// judgeDetects is the verdict of "GF-KSD detects a change of temperature":
// its rejection rate above the level band at every alternative T' (the
// null T = 20 left out).
func judgeDetects(rows []Row, _ Mode) Verdict {
	g := pick(rows, "gfksd", "reject")
	if len(g) == 0 {
		return missing("gfksd's rejection rate")
	}
	det, of := 0, 0
	var missed []string
	for _, x := range g.xs() {
		if x == isingNullT {
			continue
		}
		of++
		if g[x].Mean-2*g[x].SE > rejectBand(g[x].Trials) || (g[x].SE == 0 && g[x].Mean > rejectBand(g[x].Trials)) {
			det++
		} else {
			missed = append(missed, fmt.Sprintf("T' = %g: %.3g", x, g[x].Mean))
		}
	}
	because := fmt.Sprintf("GF-KSD's rejection rate is above the level band at %d of %d alternatives", det, of)
	if len(missed) > 0 {
		because += " (missed: " + firstFew(missed) + ")"
	}
	return grade(of > 0 && det == of, det > 0, because)
}

// judgePowerGrows is the verdict of "GF-KSD's power against n": power of
// 0.8 (the conventional target) at the largest n holds, a rate above the
// level band partly holds.
func judgePowerGrows(rows []Row, _ Mode) Verdict {
	g := pick(rows, "gfksd", "reject")
	xs := g.xs()
	if len(xs) == 0 {
		return missing("gfksd's rejection rate")
	}
	last := g[xs[len(xs)-1]]
	because := fmt.Sprintf("GF-KSD rejects T' = 15 in %.3g of runs at n = %g (0.8 or more would hold, more than the level band's %.3g partly)", last.Mean, last.X, rejectBand(last.Trials))
	switch {
	case last.Mean >= 0.8:
		return Verdict{Holds, because}
	case last.Mean > rejectBand(last.Trials):
		return Verdict{Partly, because}
	}
	return Verdict{Fails, because}
}
