package uai

import (
	"fmt"
	"math"
	"strings"

	"github.com/dstein/dstein/model/factorgraph"
)

// RowTolerance is how far a row of a BAYES file's conditional probability
// table may sum from 1 before CheckBayes reports it: tables written with
// six significant digits ("0.333333 0.333333 0.333333") are within it.
const RowTolerance = 1e-4

// CheckBayes checks that g, read from a BAYES file, is a Bayesian network
// as the format describes it: every table is the distribution of the last
// variable of its scope (the child) given the others, so that each of its
// rows (the child's states at one configuration of the parents) sums to 1
// within RowTolerance, and every variable is the child of exactly one
// table. It returns one line that says what is not so, with the first
// instances, or "" when all is well.
//
// A file that breaks these rules is still a product of factors, and is
// sampled and summed as one; but its normaliser is then not 1, so log Z
// with evidence is not the log-probability of the evidence, and a table
// that was meant to be a distribution gives other weights than its author
// meant (a row of 0.2 0.3 weighs that parent configuration half as much as
// a normalised row). The caller decides whether this is an error; dstein
// warns.
func CheckBayes(g *factorgraph.Graph) string {
	card := g.Cards()
	children := make([]int, len(card))
	var rows []string
	bad := 0
	for k, f := range g.Factors() {
		if len(f.Scope) == 0 {
			continue
		}
		child := f.Scope[len(f.Scope)-1]
		children[child]++
		kc := card[child]
		for r := 0; r < len(f.LogTable); r += kc {
			sum := 0.0
			for _, lv := range f.LogTable[r : r+kc] {
				sum += math.Exp(lv)
			}
			if math.Abs(sum-1) > RowTolerance {
				if bad++; bad <= 2 {
					rows = append(rows, fmt.Sprintf("row %d of table %d (%s given its parents) sums to %.6g", r/kc, k, g.VariableName(child), sum))
				}
			}
		}
	}
	var parts []string
	if bad > 0 {
		more := ""
		if n := bad - len(rows); n == 1 {
			more = " and 1 more row"
		} else if n > 1 {
			more = fmt.Sprintf(" and %d more rows", n)
		}
		parts = append(parts, fmt.Sprintf("%s%s, not 1 (within %g)", strings.Join(rows, ", "), more, RowTolerance))
	}
	var none, twice []string
	nNone, nTwice := 0, 0
	for v, c := range children {
		switch {
		case c == 0:
			if nNone++; nNone <= 3 {
				none = append(none, g.VariableName(v))
			}
		case c > 1:
			if nTwice++; nTwice <= 3 {
				twice = append(twice, fmt.Sprintf("%s (%d tables)", g.VariableName(v), c))
			}
		}
	}
	if nNone > 0 {
		parts = append(parts, fmt.Sprintf("%s the child (the last variable of the scope) of no table: %s%s", variables(nNone), strings.Join(none, ", "), andMore(nNone, len(none))))
	}
	if nTwice > 0 {
		parts = append(parts, fmt.Sprintf("%s the child of more than one table: %s%s", variables(nTwice), strings.Join(twice, ", "), andMore(nTwice, len(twice))))
	}
	if len(parts) == 0 {
		return ""
	}
	return "the BAYES network's tables are not conditional distributions: " + strings.Join(parts, "; ") +
		"; it is read as a product of factors (a MARKOV network), so log Z is not the log-probability of the evidence"
}

// andMore returns " and N more" for the n − shown instances not listed.
func andMore(n, shown int) string {
	if n > shown {
		return fmt.Sprintf(" and %d more", n-shown)
	}
	return ""
}

// variables returns "1 variable is" or "N variables are".
func variables(n int) string {
	if n == 1 {
		return "1 variable is"
	}
	return fmt.Sprintf("%d variables are", n)
}
