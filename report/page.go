package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/dstein/dstein/internal/safeio"
)

// Why one file of about 630 lines: most of it is the page's HTML template and CSS
// (pageHTML), which is one text; the view types that fill it sit beside it.

// Page is a report page: one self-contained HTML file (index.html in an
// output directory) that shows the results of several experiments, each in
// a section, with the figures, tables and files that lie beside it. The page
// works offline: it has no scripts, and links to nothing outside its
// directory.
type Page struct {
	Title    string
	Date     string // when the page was made
	Version  string // dstein's version
	Machine  Machine
	Command  string // the command that made the page
	Sections []Section
}

// Section is one experiment's part of a page. Paths are relative to the
// page's directory, with "/" between folders.
type Section struct {
	// ID is the section's anchor (#ID) in the table of contents: no spaces,
	// unique on the page. Empty: made from the title.
	ID, Title string
	Commands  []string // the exact commands that produce it
	Summary   string   // a paragraph of plain text
	Verdict   string   // plain text, shown highlighted; may be empty
	Figures   []string // PNG images, shown full width; a click opens the image
	Tables    []Table
	Texts     []Text   // preformatted text, such as the table a command printed
	Files     []string // files linked for download (CSV, JSON, SVG)
	// Status says what was run, e.g. "ran 20 trials in 12 min"; one that
	// starts with "not run" or "failed" is shown as a warning.
	Status string
}

// Table is a table of text cells. Numeric columns are aligned right.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
	Note    string // shown under the table, e.g. that only the first rows are shown
}

// Text is a block of preformatted text with a caption.
type Text struct {
	Caption, Body string
}

// Machine describes the computer that made the results.
type Machine struct {
	CPU       string // the model name; empty when unknown
	Cores     int    // logical CPUs
	OS, Arch  string
	GoVersion string
	MemoryGB  float64 // memory in GiB (2³⁰ bytes); 0 when unknown
}

// String is a one-line description: "AMD EPYC 7B13 · 16 cores · 62.8 GiB
// memory · linux/amd64 · go1.26.8".
func (m Machine) String() string {
	var parts []string
	if m.CPU != "" {
		parts = append(parts, m.CPU)
	}
	if m.Cores > 0 {
		parts = append(parts, fmt.Sprintf("%d cores", m.Cores))
	}
	if m.MemoryGB > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB memory", m.MemoryGB))
	}
	if m.OS != "" || m.Arch != "" {
		parts = append(parts, m.OS+"/"+m.Arch)
	}
	if m.GoVersion != "" {
		parts = append(parts, m.GoVersion)
	}
	return strings.Join(parts, " · ")
}

// ThisMachine describes the machine it runs on: the CPU's model from
// /proc/cpuinfo and the memory from /proc/meminfo where they exist (Linux),
// and the number of CPUs, system, architecture and Go version from the
// runtime.
func ThisMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPU = cpuModel(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemoryGB = memTotal(string(b))
	}
	return m
}

// cpuModel finds the CPU's name in the text of /proc/cpuinfo: "model name"
// on x86, "Model" or "Hardware" elsewhere.
func cpuModel(info string) string {
	found := map[string]string{}
	for line := range strings.Lines(info) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.Join(strings.Fields(v), " ")
		if _, seen := found[k]; !seen && v != "" {
			found[k] = v
		}
	}
	for _, k := range []string{"model name", "Model", "Hardware", "cpu model", "cpu"} {
		if v := found[k]; v != "" {
			return v
		}
	}
	return ""
}

// memTotal reads MemTotal (in kB) from the text of /proc/meminfo, in GiB.
func memTotal(info string) float64 {
	for line := range strings.Lines(info) {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		kb, err := strconv.ParseFloat(f[0], 64)
		if err != nil || kb < 0 {
			return 0
		}
		return math.Round(kb/(1<<20)*10) / 10
	}
	return 0
}

// MaxTableRows is the number of rows that TableFromCSV keeps.
const MaxTableRows = 40

// maxTableFile caps the size of a CSV file that TableFromCSV reads (it
// streams the file), and maxTextFile that of a page or a text file, which
// are read whole.
const (
	maxTableFile = 1 << 30
	maxTextFile  = 64 << 20
)

// TableFromCSV reads a tidy CSV file (a header, then rows of as many
// cells) into a table captioned with the file's name. It keeps the first
// MaxTableRows rows and says so in the table's note, and it rounds numbers
// written with more digits than a reader needs (0.11633818887467003 to
// 0.1163, 763956.85 to 763957), which the note says too; the file has them
// in full.
func TableFromCSV(path string) (Table, error) {
	f, err := safeio.Open(path, "table", maxTableFile)
	if err != nil {
		return Table{}, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.ReuseRecord = true
	t := Table{Caption: filepath.Base(path)}
	header, err := r.Read()
	if err == io.EOF {
		return Table{}, fmt.Errorf("%s is empty; want a header and rows", path)
	}
	if err != nil {
		return Table{}, fmt.Errorf("%s: %w", path, err)
	}
	t.Header = append([]string(nil), header...)
	n, rounded := 0, false
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Table{}, fmt.Errorf("%s: %w", path, err)
		}
		n++
		if n > MaxTableRows {
			continue
		}
		row := make([]string, len(rec))
		for i, c := range rec {
			row[i] = roundCell(c)
			rounded = rounded || row[i] != c
		}
		t.Rows = append(t.Rows, row)
	}
	var notes []string
	switch {
	case n == 0:
		notes = append(notes, "The file has no rows.")
	case n > MaxTableRows:
		notes = append(notes, fmt.Sprintf("The first %d of %d rows; all are in %s.", MaxTableRows, n, filepath.Base(path)))
	}
	if rounded {
		notes = append(notes, "Numbers are rounded to 4 significant digits; the file has them in full.")
	}
	t.Note = strings.Join(notes, " ")
	return t, nil
}

// roundCell rounds a number with a fraction or an exponent written with
// more than 8 characters to 4 significant digits (all the digits before the
// point for numbers up to 10⁹); any other cell, integers included, is
// returned as it is.
func roundCell(c string) string {
	if len(c) <= 8 || !strings.ContainsAny(c, ".eE") {
		return c
	}
	v, err := strconv.ParseFloat(c, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || v == 0 {
		return c
	}
	e := int(math.Floor(math.Log10(math.Abs(v))))
	var s string
	switch {
	case e >= 3 && e < 9:
		s = strconv.FormatFloat(v, 'f', 0, 64)
	case e >= -4 && e < 3:
		s = strconv.FormatFloat(v, 'f', 3-e, 64)
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
	default:
		s = strconv.FormatFloat(v, 'g', 4, 64)
	}
	if len(s) >= len(c) {
		return c
	}
	return s
}

// MaxTextLines is the number of lines that TextFromFile keeps.
const MaxTextLines = 200

// TextFromFile reads a text file (such as the table an experiment printed)
// into a Text captioned with the file's name, keeping its first
// MaxTextLines lines.
func TextFromFile(path string) (Text, error) {
	b, err := safeio.ReadFile(path, "text", maxTextFile)
	if err != nil {
		return Text{}, err
	}
	s := strings.TrimRight(string(b), "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > MaxTextLines {
		s = strings.Join(lines[:MaxTextLines], "\n") +
			fmt.Sprintf("\n… (the first %d of %d lines; all are in %s)", MaxTextLines, len(lines), filepath.Base(path))
	}
	return Text{Caption: filepath.Base(path), Body: s}, nil
}

// The ids of the page's own elements, which sections may not take.
const (
	contentsID = "page-contents"
	aboutID    = "page-about"
)

// WritePage writes the page p to path, atomically (the file is replaced only
// when the whole page was written, and only when dstein wrote it: see
// safeio.Replace). Every text is escaped; figures and files
// must be relative paths (they are checked when they exist: the page shows
// each file's size and marks a missing one, whose link CheckPage reports).
// It refuses sections with the same or an empty ID.
func WritePage(path string, p Page) error {
	var b safeio.Batch
	if err := AddPage(&b, path, p); err != nil {
		b.Abort()
		return err
	}
	return b.Commit(context.Background())
}

// AddPage adds the page p, written to path, to a batch of files written
// together (see WritePage).
func AddPage(b *safeio.Batch, path string, p Page) error {
	v, err := newPageView(filepath.Dir(path), p)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, v); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return b.Replace(path, func(w *bufio.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	})
}

type pageView struct {
	Page
	MachineLine string
	ContentsID  string
	AboutID     string
	Sections    []sectionView
}

type sectionView struct {
	ID, Title, Summary, Verdict, Status string
	Warn                                bool
	Commands                            []string
	Figures                             []linkView
	Tables                              []tableView
	Texts                               []Text
	Files                               []linkView
}

type linkView struct {
	Href, Name, Alt, Size string
	Missing               bool
}

type tableView struct {
	Caption, Note string
	Header        []cellView
	Rows          [][]cellView
}

type cellView struct {
	Text string
	Num  bool
}

var slugRun = regexp.MustCompile(`[^a-z0-9]+`)

func newPageView(dir string, p Page) (*pageView, error) {
	v := &pageView{Page: p, MachineLine: p.Machine.String(), ContentsID: contentsID, AboutID: aboutID}
	if v.Title == "" {
		v.Title = "dstein results"
	}
	ids := map[string]bool{contentsID: true, aboutID: true}
	for i, s := range p.Sections {
		id := s.ID
		if id == "" {
			id = strings.Trim(slugRun.ReplaceAllString(strings.ToLower(s.Title), "-"), "-")
		}
		switch {
		case id == "":
			return nil, fmt.Errorf("section %d has neither an ID nor a title to make one from", i+1)
		case strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' }):
			return nil, fmt.Errorf("section ID %q has a space or a control character", id)
		case ids[id]:
			return nil, fmt.Errorf("two sections, or a section and the page, have the ID %q", id)
		}
		ids[id] = true
		sv := sectionView{
			ID: id, Title: s.Title, Summary: s.Summary, Verdict: s.Verdict, Status: s.Status,
			Warn:     strings.HasPrefix(strings.ToLower(s.Status), "not run") || strings.HasPrefix(strings.ToLower(s.Status), "failed"),
			Commands: s.Commands, Texts: s.Texts,
		}
		if sv.Title == "" {
			sv.Title = id
		}
		for _, f := range s.Figures {
			l, err := link(dir, f)
			if err != nil {
				return nil, fmt.Errorf("section %s: figure: %w", id, err)
			}
			l.Alt = fmt.Sprintf("%s: figure %s", sv.Title, l.Name)
			sv.Figures = append(sv.Figures, l)
		}
		for _, f := range s.Files {
			l, err := link(dir, f)
			if err != nil {
				return nil, fmt.Errorf("section %s: file: %w", id, err)
			}
			sv.Files = append(sv.Files, l)
		}
		for _, t := range s.Tables {
			sv.Tables = append(sv.Tables, newTableView(t))
		}
		v.Sections = append(v.Sections, sv)
	}
	return v, nil
}

// link checks that name is a relative path and makes its link: the path as
// a URL (escaping "#", "?", spaces), and the file's size beside the page.
func link(dir, name string) (linkView, error) {
	slash := filepath.ToSlash(name)
	switch {
	case name == "":
		return linkView{}, errors.New("empty path")
	case strings.Contains(slash, "://") || strings.HasPrefix(slash, "//"):
		return linkView{}, fmt.Errorf("%s is a URL; the page links only to files beside it", name)
	case filepath.IsAbs(name) || strings.HasPrefix(slash, "/"):
		return linkView{}, fmt.Errorf("%s is an absolute path; want one relative to the page's directory", name)
	}
	l := linkView{Href: (&url.URL{Path: slash}).String(), Name: slash}
	info, err := os.Stat(filepath.Join(dir, filepath.FromSlash(slash)))
	switch {
	case err != nil:
		l.Missing = true
	case info.Mode().IsRegular():
		l.Size = safeio.Bytes(info.Size())
	}
	return l, nil
}

func newTableView(t Table) tableView {
	cols := len(t.Header)
	for _, r := range t.Rows {
		cols = max(cols, len(r))
	}
	// A column is numeric when every non-empty cell in it is a number.
	num := make([]bool, cols)
	for j := range num {
		some := false
		num[j] = true
		for _, r := range t.Rows {
			if j >= len(r) || strings.TrimSpace(r[j]) == "" {
				continue
			}
			some = true
			if _, err := strconv.ParseFloat(strings.TrimSpace(r[j]), 64); err != nil {
				num[j] = false
				break
			}
		}
		num[j] = num[j] && some
	}
	tv := tableView{Caption: t.Caption, Note: t.Note}
	for j, h := range t.Header {
		tv.Header = append(tv.Header, cellView{h, num[j]})
	}
	for _, r := range t.Rows {
		row := make([]cellView, cols)
		for j := range row {
			row[j].Num = num[j]
			if j < len(r) {
				row[j].Text = r[j]
			}
		}
		tv.Rows = append(tv.Rows, row)
	}
	return tv
}

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))

// pageHTML is the page: inline style only, the system's fonts, no scripts.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="dstein {{.Version}}">
<title>{{.Title}}</title>
<style>
:root {
  --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa;
  --accent: #0969da; --verdict-bg: #eaf5ff; --verdict-line: #54aeff;
  --warn-bg: #fff8c5; --warn-line: #d4a72c;
}
* { box-sizing: border-box; }
html { scroll-behavior: smooth; }
body {
  margin: 0; color: var(--fg); background: #fff;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", "Liberation Sans", sans-serif;
  font-size: 16px; line-height: 1.55;
}
main { max-width: 1156px; margin: 0 auto; padding: 32px 28px 64px; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", "DejaVu Sans Mono", monospace; font-size: 13.5px; }
h1 { font-size: 30px; line-height: 1.25; margin: 0 0 16px; }
h2 { font-size: 23px; line-height: 1.3; margin: 0; }
h3 { font-size: 13px; text-transform: uppercase; letter-spacing: .05em; color: var(--muted); margin: 22px 0 8px; }
header { border-bottom: 1px solid var(--line); padding-bottom: 20px; margin-bottom: 24px; }
dl.about { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; font-size: 14.5px; }
dl.about dt { color: var(--muted); }
dl.about dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
nav { background: var(--soft); border: 1px solid var(--line); border-radius: 8px; padding: 14px 20px 16px; margin-bottom: 32px; }
nav h2 { font-size: 16px; margin-bottom: 6px; }
nav ol { margin: 0; padding-left: 22px; columns: 2 340px; column-gap: 32px; }
nav li { break-inside: avoid; padding: 2px 0; }
nav .status { display: block; color: var(--muted); font-size: 13px; margin-left: 8px; break-inside: avoid; }
nav .status.warn { color: #9a6700; }
section { border-top: 1px solid var(--line); padding-top: 26px; margin-top: 40px; }
section:first-of-type { margin-top: 0; }
.heading { display: flex; flex-wrap: wrap; align-items: baseline; justify-content: space-between; gap: 4px 16px; }
.heading .up { font-size: 13px; }
p.status { color: var(--muted); font-size: 14px; margin: 4px 0 0; }
p.status.warn { display: inline-block; color: #7d4e00; background: var(--warn-bg); border: 1px solid var(--warn-line); border-radius: 6px; padding: 2px 10px; }
p.summary { margin: 14px 0 0; max-width: 80ch; }
.verdict { margin: 16px 0 0; padding: 10px 16px; background: var(--verdict-bg); border-left: 4px solid var(--verdict-line); border-radius: 0 6px 6px 0; font-weight: 600; }
pre { margin: 0; padding: 10px 14px; background: var(--soft); border: 1px solid var(--line); border-radius: 6px; white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.45; }
pre + pre { margin-top: 6px; }
pre.text { white-space: pre; overflow-x: auto; overflow-wrap: normal; font-size: 12.5px; max-height: 520px; }
figure { margin: 16px 0 0; }
figure img { display: block; width: 100%; max-width: 1100px; height: auto; border: 1px solid var(--line); border-radius: 4px; background: #fff; }
figcaption, .caption { color: var(--muted); font-size: 13px; margin-top: 4px; }
.table { margin: 16px 0 0; }
.scroll { overflow-x: auto; max-width: 100%; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; font-size: 13.5px; width: 100%; }
th, td { padding: 4px 12px; text-align: left; white-space: nowrap; border-bottom: 1px solid #eaeef2; }
th { background: var(--soft); font-weight: 600; border-bottom: 1px solid var(--line); }
tbody tr:nth-child(even) td { background: #fafbfc; }
tbody tr:last-child td { border-bottom: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.table .caption { margin: 0 0 4px; font-weight: 600; color: var(--fg); }
.table .note { color: var(--muted); font-size: 13px; margin: 4px 0 0; }
ul.files { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: 6px 8px; }
ul.files li { border: 1px solid var(--line); border-radius: 6px; padding: 2px 10px; font-size: 14px; background: #fff; }
ul.files .size { color: var(--muted); font-size: 12.5px; margin-left: 6px; }
.missing { color: #cf222e; }
footer { margin-top: 48px; padding-top: 14px; border-top: 1px solid var(--line); color: var(--muted); font-size: 13px; }
@media print { nav, .up { display: none; } section { break-before: page; } }
</style>
</head>
<body>
<main>
<header id="{{.AboutID}}">
<h1>{{.Title}}</h1>
<dl class="about">
{{- if .Date}}
<dt>Date</dt><dd>{{.Date}}</dd>{{end}}
{{- if .Version}}
<dt>Version</dt><dd>dstein {{.Version}}</dd>{{end}}
{{- if .MachineLine}}
<dt>Machine</dt><dd>{{.MachineLine}}</dd>{{end}}
{{- if .Command}}
<dt>Command</dt><dd><code>{{.Command}}</code></dd>{{end}}
</dl>
</header>
{{- if .Sections}}
<nav id="{{.ContentsID}}" aria-label="Contents">
<h2>Contents</h2>
<ol>
{{- range .Sections}}
<li><a href="#{{.ID}}">{{.Title}}</a>{{if .Status}}<span class="status{{if .Warn}} warn{{end}}">{{.Status}}</span>{{end}}</li>
{{- end}}
</ol>
</nav>
{{- end}}
{{- range .Sections}}
<section id="{{.ID}}">
<div class="heading"><h2>{{.Title}}</h2><a class="up" href="#{{$.ContentsID}}">↑ contents</a></div>
{{- if .Status}}
<p class="status{{if .Warn}} warn{{end}}">{{.Status}}</p>{{end}}
{{- if .Summary}}
<p class="summary">{{.Summary}}</p>{{end}}
{{- if .Verdict}}
<p class="verdict">{{.Verdict}}</p>{{end}}
{{- if .Commands}}
<h3>Commands</h3>
{{- range .Commands}}
<pre class="command">{{.}}</pre>
{{- end}}
{{- end}}
{{- if .Figures}}
<h3>Figures</h3>
{{- range .Figures}}
<figure>
<a href="{{.Href}}"><img src="{{.Href}}" alt="{{.Alt}}"></a>
<figcaption>{{.Name}}{{if .Missing}} <span class="missing">(missing)</span>{{else}} (click for the full size){{end}}</figcaption>
</figure>
{{- end}}
{{- end}}
{{- if or .Tables .Texts}}
<h3>Tables</h3>
{{- range .Tables}}
<div class="table">
{{- if .Caption}}
<p class="caption">{{.Caption}}</p>{{end}}
<div class="scroll"><table>
{{- if .Header}}
<thead><tr>{{range .Header}}<th{{if .Num}} class="num"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
{{- end}}
<tbody>
{{- range .Rows}}
<tr>{{range .}}<td{{if .Num}} class="num"{{end}}>{{.Text}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table></div>
{{- if .Note}}
<p class="note">{{.Note}}</p>{{end}}
</div>
{{- end}}
{{- end}}
{{- range .Texts}}
<div class="table">
{{- if .Caption}}
<p class="caption">{{.Caption}}</p>{{end}}
<pre class="text">{{.Body}}</pre>
</div>
{{- end}}
{{- if .Files}}
<h3>Files</h3>
<ul class="files">
{{- range .Files}}
<li><a class="mono" href="{{.Href}}">{{.Name}}</a>{{if .Missing}}<span class="size missing">missing</span>{{else if .Size}}<span class="size">{{.Size}}</span>{{end}}</li>
{{- end}}
</ul>
{{- end}}
</section>
{{- end}}
<footer>Made by dstein{{if .Version}} {{.Version}}{{end}}{{if .Date}} on {{.Date}}{{end}}. Every figure, table and file on this page lies beside it; the page works offline.</footer>
</main>
</body>
</html>
`
