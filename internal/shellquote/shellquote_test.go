package shellquote

import (
	"os/exec"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain":         "plain",
		"a/b-c_d.e:f=1": "a/b-c_d.e:f=1",
		"":              "''",
		"my results":    "'my results'",
		"it's":          `'it'\''s'`,
		"$HOME":         "'$HOME'",
		"a\nb":          "'a\nb'",
		"*":             "'*'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestShellReadsItBack has sh split a joined line back into its words.
func TestShellReadsItBack(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	words := []string{"dstein", "--out-dir", "my results/x", "it's", "", "$(touch /tmp/no)", "a\nb", "*", "-", "--only="}
	out, err := exec.Command(sh, "-c", `for w in `+Join(words)+`; do printf '%s\0' "$w"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if strings.Join(got, "|") != strings.Join(words, "|") {
		t.Errorf("sh read back %q, want %q", got, words)
	}
}
