package report

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// writePNG writes a small real PNG image.
func writePNG(t *testing.T, path string) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for x := range 40 {
		img.Set(x, x/2, color.RGBA{0x4E, 0x79, 0xA7, 0xFF})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, path, b.String())
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const evilTitle = `Ising <script>alert("x")</script> & "friends"`

// samplePage writes the files of a page with two sections into dir and
// returns the page.
func samplePage(t *testing.T, dir string) Page {
	t.Helper()
	writePNG(t, filepath.Join(dir, "ising-n", "ising-n.png"))
	writeTestFile(t, filepath.Join(dir, "ising-n", "ising-n.svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>")
	csvText := "experiment,method,x,metric,mean,se,trials\n"
	for i := range 60 {
		csvText += fmt.Sprintf("ising-n,gibbs,%d,mse,%v,0.002252208564480106,20\n", 10*i, 0.11633818887467003+float64(i))
	}
	writeTestFile(t, filepath.Join(dir, "ising-n", "ising-n.csv"), csvText)
	writeTestFile(t, filepath.Join(dir, "ising-n", "ising-n.trials.json"), "{}\n")
	writeTestFile(t, filepath.Join(dir, "ising-n", "ising-n.txt"), "method  x  mean\ngibbs  10  0.1163\n")
	// A folder and a file name that need escaping in a URL.
	writePNG(t, filepath.Join(dir, "odd dir", "a#b?.png"))
	tbl, err := TableFromCSV(filepath.Join(dir, "ising-n", "ising-n.csv"))
	if err != nil {
		t.Fatal(err)
	}
	txt, err := TextFromFile(filepath.Join(dir, "ising-n", "ising-n.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return Page{
		Title:   "dstein results <b>",
		Date:    "2026-05-01 12:00 UTC",
		Version: "v0.9.0",
		Machine: ThisMachine(),
		Command: "dstein reproduce --quick --out-dir out & echo <done>",
		Sections: []Section{
			{
				ID: "ising-n", Title: evilTitle,
				Commands: []string{"dstein experiment ising-n --trials 20 --out-dir out/ising-n"},
				Summary:  "MSE of the means against n; x < y & y > z.",
				Verdict:  "Gibbs wins <b>clearly</b>.",
				Figures:  []string{"ising-n/ising-n.png", "odd dir/a#b?.png"},
				Tables:   []Table{tbl, {Caption: "small", Header: []string{"method", "value"}, Rows: [][]string{{"gibbs", "1.5"}, {"<i>mh</i>", "2"}}}},
				Texts:    []Text{txt},
				Files:    []string{"ising-n/ising-n.csv", "ising-n/ising-n.svg", "ising-n/ising-n.trials.json"},
				Status:   "ran 20 trials in 12 min",
			},
			{
				ID: "bnn", Title: "Binarized networks",
				Commands: []string{"dstein experiment bnn --cifar DIR"},
				Summary:  "Needs CIFAR-10.",
				Status:   "not run: needs --cifar DIR",
			},
		},
	}
}

func parsePage(t *testing.T, path string) *html.Node {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func nodes(n *html.Node, f func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	if f(n) {
		out = append(out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, nodes(c, f)...)
	}
	return out
}

func elements(n *html.Node, tag string) []*html.Node {
	return nodes(n, func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == tag })
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func text(n *html.Node) string {
	var b strings.Builder
	for _, t := range nodes(n, func(n *html.Node) bool { return n.Type == html.TextNode }) {
		b.WriteString(t.Data)
	}
	return b.String()
}

func TestWritePage(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	if err := WritePage(page, samplePage(t, dir)); err != nil {
		t.Fatal(err)
	}
	if err := CheckPage(page); err != nil {
		t.Fatal(err)
	}
	doc := parsePage(t, page)

	// Every img src and a href: relative, not remote, and on disk; every
	// fragment names an element.
	ids := map[string]bool{}
	for _, n := range nodes(doc, func(n *html.Node) bool { return n.Type == html.ElementNode }) {
		if id, ok := attr(n, "id"); ok {
			if ids[id] {
				t.Errorf("id %q twice", id)
			}
			ids[id] = true
		}
	}
	var imgs, files, fragments []string
	check := func(n *html.Node, key string) {
		v, ok := attr(n, key)
		if !ok {
			t.Errorf("<%s> without %s", n.Data, key)
			return
		}
		if strings.HasPrefix(v, "http:") || strings.HasPrefix(v, "https:") || strings.HasPrefix(v, "//") {
			t.Errorf("remote URL %s", v)
		}
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "" || u.Host != "" {
			t.Errorf("%s=%q is not a relative URL (%v)", key, v, err)
			return
		}
		if u.Path == "" {
			if !ids[u.Fragment] {
				t.Errorf("fragment link %q has no matching id", v)
			}
			fragments = append(fragments, u.Fragment)
			return
		}
		p := filepath.Join(dir, filepath.FromSlash(u.Path))
		if info, err := os.Stat(p); err != nil || !info.Mode().IsRegular() {
			t.Errorf("%s=%q: %s is not a file beside the page (%v)", key, v, p, err)
		}
		if n.Data == "img" {
			imgs = append(imgs, u.Path)
		} else {
			files = append(files, u.Path)
		}
	}
	for _, n := range elements(doc, "img") {
		check(n, "src")
		if alt, _ := attr(n, "alt"); alt == "" {
			t.Error("image without alt text")
		}
	}
	for _, n := range elements(doc, "a") {
		check(n, "href")
	}
	if want := []string{"ising-n/ising-n.png", "odd dir/a#b?.png"}; !slices.Equal(imgs, want) {
		t.Errorf("images %q, want %q", imgs, want)
	}
	for _, f := range []string{"ising-n/ising-n.png", "odd dir/a#b?.png", "ising-n/ising-n.csv", "ising-n/ising-n.svg", "ising-n/ising-n.trials.json"} {
		if !slices.Contains(files, f) {
			t.Errorf("no link to %s in %q", f, files)
		}
	}
	for _, id := range []string{"ising-n", "bnn"} {
		if !slices.Contains(fragments, id) {
			t.Errorf("the contents do not link to #%s", id)
		}
	}

	// Offline: no scripts, no external style sheets, no remote fonts.
	for _, tag := range []string{"script", "link", "iframe", "object", "embed"} {
		if len(elements(doc, tag)) > 0 {
			t.Errorf("the page has a <%s>", tag)
		}
	}
	for _, st := range elements(doc, "style") {
		if s := text(st); strings.Contains(s, "url(") || strings.Contains(s, "@import") {
			t.Error("the style sheet loads something")
		}
	}

	// Text is escaped: the title with <script> is text, in the section's
	// heading and in the contents.
	sec := nodes(doc, func(n *html.Node) bool { id, _ := attr(n, "id"); return id == "ising-n" })
	if len(sec) != 1 || sec[0].Data != "section" {
		t.Fatalf("no section with id ising-n")
	}
	if h := elements(sec[0], "h2"); len(h) != 1 || text(h[0]) != evilTitle {
		t.Errorf("section heading %q, want %q", text(h[0]), evilTitle)
	}
	if got := text(elements(doc, "nav")[0]); !strings.Contains(got, evilTitle) {
		t.Errorf("contents %q lack the title", got)
	}
	if len(elements(doc, "b")) > 0 || len(elements(doc, "i")) > 0 {
		t.Error("markup in the texts was not escaped")
	}
	all := text(doc)
	for _, s := range []string{"dstein results <b>", "Gibbs wins <b>clearly</b>.", "x < y & y > z", "<i>mh</i>",
		"dstein reproduce --quick --out-dir out & echo <done>", "v0.9.0", "2026-05-01 12:00 UTC",
		"dstein experiment ising-n --trials 20 --out-dir out/ising-n", "not run: needs --cifar DIR", runtime.Version()} {
		if !strings.Contains(all, s) {
			t.Errorf("the page lacks the text %q", s)
		}
	}

	// The commands are in <pre>; the verdict is highlighted; the CSV table
	// has its first rows and a note.
	var pres []string
	for _, p := range elements(sec[0], "pre") {
		pres = append(pres, text(p))
	}
	if !slices.Contains(pres, "dstein experiment ising-n --trials 20 --out-dir out/ising-n") {
		t.Errorf("commands %q", pres)
	}
	if v := nodes(sec[0], func(n *html.Node) bool { c, _ := attr(n, "class"); return c == "verdict" }); len(v) != 1 {
		t.Error("no highlighted verdict")
	}
	tables := elements(sec[0], "table")
	if len(tables) != 2 {
		t.Fatalf("%d tables, want 2", len(tables))
	}
	if rows := elements(tables[0], "tr"); len(rows) != MaxTableRows+1 {
		t.Errorf("%d rows in the CSV's table, want %d", len(rows), MaxTableRows+1)
	}
	if !strings.Contains(text(sec[0]), "The first 40 of 60 rows") {
		t.Error("no note on the rows left out")
	}
}

func TestCheckPageFindsProblems(t *testing.T) {
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "a.png"))
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ body, want string }{
		{`<img src="missing.png" alt="x">`, "does not exist"},
		{`<img src="sub" alt="x">`, "is not a file"},
		{`<a href="#nowhere">x</a>`, "names no element"},
		{`<a href="http://example.com/a.png">x</a>`, "remote"},
		{`<img src="https://example.com/a.png">`, "remote"},
		{`<img src="//example.com/a.png">`, "remote"},
		{`<link rel="stylesheet" href="https://example.com/a.css">`, "remote"},
		{`<script src="https://example.com/a.js"></script>`, "remote"},
		{`<style>@font-face { src: url(https://example.com/f.woff) }</style>`, "remote"},
		{`<div style="background: url('//example.com/a.png')"></div>`, "remote"},
		{`<img srcset="a.png 1x, https://example.com/b.png 2x">`, "remote"},
		{`<a href="data:text/plain,hi">x</a>`, "data: address"},
		{`<a href="/etc/passwd">x</a>`, "absolute path"},
		{`<a href="">x</a>`, "empty"},
	} {
		page := filepath.Join(dir, "index.html")
		writeTestFile(t, page, `<!DOCTYPE html><html><head><title>t</title></head><body id="top"><img src="a.png" alt="a"><a href="#top">top</a>`+c.body+`</body></html>`)
		err := CheckPage(page)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.body, err, c.want)
		}
	}
	page := filepath.Join(dir, "ok.html")
	writeTestFile(t, page, `<!DOCTYPE html><html><body id="top"><img src="a.png" alt="a"><a href="./a.png#x">a</a><a href="sub">dir</a><a href="#top">top</a></body></html>`)
	if err := CheckPage(page); err != nil {
		t.Error(err)
	}
	if err := CheckPage(filepath.Join(dir, "none.html")); err == nil {
		t.Error("no error for a missing page")
	}
}

// A page whose figure or file is missing still links to it, marked, and
// CheckPage reports it.
func TestWritePageMissingFile(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	p := Page{Sections: []Section{{ID: "a", Title: "A", Figures: []string{"a/a.png"}, Files: []string{"a/a.csv"}}}}
	if err := WritePage(page, p); err != nil {
		t.Fatal(err)
	}
	err := CheckPage(page)
	if err == nil || !strings.Contains(err.Error(), "a.png") || !strings.Contains(err.Error(), "a.csv") {
		t.Errorf("CheckPage: %v, want errors on a.png and a.csv", err)
	}
	if all := text(parsePage(t, page)); !strings.Contains(all, "missing") {
		t.Error("missing files are not marked")
	}
}

func TestWritePageRefuses(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	for _, c := range []struct {
		s    []Section
		want string
	}{
		{[]Section{{ID: "a"}, {ID: "a"}}, `ID "a"`},
		{[]Section{{Title: "Suite"}, {ID: "suite"}}, `ID "suite"`},
		{[]Section{{ID: "page-contents"}}, `ID "page-contents"`},
		{[]Section{{}}, "neither an ID nor a title"},
		{[]Section{{ID: "a b"}}, "space"},
		{[]Section{{ID: "a", Figures: []string{"https://example.com/a.png"}}}, "URL"},
		{[]Section{{ID: "a", Files: []string{"/tmp/a.csv"}}}, "absolute"},
		{[]Section{{ID: "a", Files: []string{""}}}, "empty"},
	} {
		err := WritePage(page, Page{Sections: c.s})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error with %q", c.s, err, c.want)
		}
	}
	if _, err := os.Stat(page); !os.IsNotExist(err) {
		t.Errorf("a refused page was written (%v)", err)
	}
	// A directory in the page's place is left alone.
	if err := os.Mkdir(page, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WritePage(page, Page{}); err == nil {
		t.Error("no error writing over a directory")
	}
}

func TestWritePageIDFromTitle(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	if err := WritePage(page, Page{Sections: []Section{{Title: "GOF: Ising, n"}, {ID: "bnn/cifar&x?é", Title: "odd"}}}); err != nil {
		t.Fatal(err)
	}
	doc := parsePage(t, page)
	if s := elements(doc, "section"); len(s) != 2 {
		t.Fatalf("%d sections, want 2", len(s))
	} else if id, _ := attr(s[0], "id"); id != "gof-ising-n" {
		t.Errorf("id %q, want gof-ising-n", id)
	}
	if err := CheckPage(page); err != nil {
		t.Error(err)
	}
}

func TestTableFromCSV(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.csv")
	writeTestFile(t, path, "name,value,big,small,id\na,0.11633818887467003,763956.85,1.2345678e-07,run-12\nb,0.5,1.52771935e+06,-0.002252208564480106,7\n")
	tbl, err := TableFromCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Table{
		Caption: "t.csv",
		Header:  []string{"name", "value", "big", "small", "id"},
		Rows:    [][]string{{"a", "0.1163", "763957", "1.235e-07", "run-12"}, {"b", "0.5", "1527719", "-0.002252", "7"}},
		Note:    "Numbers are rounded to 4 significant digits; the file has them in full.",
	}
	if fmt.Sprint(tbl) != fmt.Sprint(want) {
		t.Errorf("got %q\nwant %q", tbl, want)
	}

	writeTestFile(t, path, "a,b\n")
	if tbl, err := TableFromCSV(path); err != nil || len(tbl.Rows) != 0 || !strings.Contains(tbl.Note, "no rows") {
		t.Errorf("header only: %+v, %v", tbl, err)
	}
	for _, c := range []struct{ content, want string }{
		{"", "empty"},
		{"a,b\n1,2,3\n", "wrong number of fields"},
	} {
		writeTestFile(t, path, c.content)
		if _, err := TableFromCSV(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error with %q", c.content, err, c.want)
		}
	}
	if _, err := TableFromCSV(filepath.Join(dir, "none.csv")); err == nil {
		t.Error("no error for a missing file")
	}
}

func TestRoundCell(t *testing.T) {
	for in, want := range map[string]string{
		"0.11633818887467003": "0.1163", "1.5": "1.5", "12345678": "12345678", "123456789.5": "123456790",
		"2.5e+10": "2.5e+10", "25000000000.123": "2.5e+10", "0.1000000001": "0.1", "text-longer-than-8": "text-longer-than-8",
		"-0.00011633818887": "-0.0001163", "0.0000011633818887": "1.163e-06", "NaN": "NaN", "99999.99999": "100000",
		"20260501120000": "20260501120000", "-123456789012": "-123456789012", "1.0000000000": "1",
	} {
		if got := roundCell(in); got != want {
			t.Errorf("roundCell(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTextFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.txt")
	writeTestFile(t, path, strings.Repeat("line\n", MaxTextLines+5))
	txt, err := TextFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(txt.Body, "line"); n != MaxTextLines+1 || !strings.Contains(txt.Body, "the first 200 of 205 lines") || txt.Caption != "t.txt" {
		t.Errorf("%+v", txt)
	}
}

func TestThisMachine(t *testing.T) {
	m := ThisMachine()
	if m.Cores != runtime.NumCPU() || m.OS != runtime.GOOS || m.Arch != runtime.GOARCH || m.GoVersion != runtime.Version() {
		t.Errorf("%+v", m)
	}
	if runtime.GOOS == "linux" && (m.MemoryGB <= 0 || m.CPU == "") {
		t.Logf("no CPU model or memory from /proc: %+v", m)
	}
	if s := m.String(); !strings.Contains(s, runtime.Version()) {
		t.Errorf("String() = %q", s)
	}
}

func TestCPUModelAndMemory(t *testing.T) {
	if got := cpuModel("processor\t: 0\nmodel name\t: AMD  EPYC 7B13\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n"); got != "AMD EPYC 7B13" {
		t.Errorf("x86: %q", got)
	}
	if got := cpuModel("processor\t: 0\nBogoMIPS\t: 50.00\nHardware\t: BCM2835\nModel\t: Raspberry Pi 4 Model B Rev 1.4\n"); got != "Raspberry Pi 4 Model B Rev 1.4" {
		t.Errorf("arm: %q", got)
	}
	if got := cpuModel("processor\t: 0\n"); got != "" {
		t.Errorf("none: %q", got)
	}
	if got := memTotal("MemTotal:       65842748 kB\nMemFree: 1 kB\n"); got != 62.8 {
		t.Errorf("memTotal = %v, want 62.8", got)
	}
	if got := memTotal("MemFree: 1 kB\n"); got != 0 {
		t.Errorf("memTotal without MemTotal = %v", got)
	}
}
