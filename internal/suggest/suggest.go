package suggest

import "strings"

// Closest returns the candidates within edit distance 2 of name (or that
// start with it), closest first; at most three.
func Closest(name string, candidates []string) []string {
	type c struct {
		s string
		d int
	}
	var best []c
	for _, s := range candidates {
		d := distance(strings.ToLower(name), strings.ToLower(s))
		if d <= 2 || (len(name) >= 3 && strings.HasPrefix(s, name)) {
			best = append(best, c{s, d})
		}
	}
	for i := 1; i < len(best); i++ {
		for j := i; j > 0 && best[j].d < best[j-1].d; j-- {
			best[j], best[j-1] = best[j-1], best[j]
		}
	}
	var out []string
	for _, b := range best {
		if len(out) == 3 {
			break
		}
		out = append(out, b.s)
	}
	return out
}

// Hint returns "; did you mean X?" (or "X or Y?") for the closest
// candidates, or "".
func Hint(name string, candidates []string) string {
	c := Closest(name, candidates)
	if len(c) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(c, " or ") + "?"
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
