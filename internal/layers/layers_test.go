package layers

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/dstein/dstein/"

// readLayers parses the table of ARCHITECTURE.md: rows "| N | `pkg`, … | … |".
func readLayers(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| (\\d+) \\| ([^|]+) \\|")
	pkg := regexp.MustCompile("`([a-z0-9/]+)`")
	layer := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, p := range pkg.FindAllStringSubmatch(m[2], -1) {
			if _, dup := layer[p[1]]; dup {
				t.Errorf("ARCHITECTURE.md lists %s twice", p[1])
			}
			layer[p[1]] = n
		}
	}
	if len(layer) == 0 {
		t.Fatal("no layer table found in ARCHITECTURE.md")
	}
	return layer
}

// The imports of every package (tests excluded) go to its own layer or
// lower ones, and every package is in the table.
func TestLayers(t *testing.T) {
	layer := readLayers(t)
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		p := strings.TrimPrefix(f[0], module)
		seen[p] = true
		lp, ok := layer[p]
		if !ok {
			t.Errorf("package %s is not in ARCHITECTURE.md's table of layers", p)
			continue
		}
		for _, imp := range f[1:] {
			q, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			if lq, ok := layer[q]; ok && lq > lp {
				t.Errorf("%s (layer %d) imports %s (layer %d): layers point one way", p, lp, q, lq)
			}
		}
	}
	for p := range layer {
		if !seen[p] {
			t.Errorf("ARCHITECTURE.md lists %s, which does not exist", p)
		}
	}
}

// maxFileLines is the length above which a non-test Go file must say why
// it is one file (a comment starting "Why one file"), as ARCHITECTURE.md
// asks: a long file is split by concern unless it holds one algorithm or
// one protocol that reads best whole.
const maxFileLines = 500

func TestLongFilesSayWhy(t *testing.T) {
	out, err := exec.Command("git", "-C", "../..", "ls-files", "*.go").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	for _, f := range strings.Fields(string(out)) {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "docs/") {
			continue
		}
		data, err := os.ReadFile("../../" + f)
		if err != nil {
			continue // listed but not in this checkout
		}
		if n := strings.Count(string(data), "\n"); n > maxFileLines && !strings.Contains(string(data), "// Why one file") {
			t.Errorf("%s has %d lines and no \"// Why one file\" comment: split it by concern, or say why it reads best whole", f, n)
		}
	}
}
