package shellquote

import (
	"regexp"
	"strings"
)

// safe is what a shell word may hold unquoted.
var safe = regexp.MustCompile(`^[A-Za-z0-9_./:,=+@%-]+$`)

// Quote returns s as one shell word: unchanged when it holds only letters,
// digits and _./:,=+@%-, else in single quotes (a quote inside written
// '\”). The empty string is ”.
func Quote(s string) string {
	if safe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join quotes each word and joins them with spaces.
func Join(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}
