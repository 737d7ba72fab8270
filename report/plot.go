package report

import (
	"bufio"
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	gtext "gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dstein/dstein/internal/safeio"
)

// Series is one line of a panel: points (X[i], Y[i]) with optional error
// bars from Lo[i] to Hi[i] (absolute values on the y axis, in the data's
// own units also on a log axis; a NaN end means no bar at that point). NaN
// and infinite points are left out.
type Series struct {
	Name   string
	X, Y   []float64
	Lo, Hi []float64
	Points bool // draw points only, no line
	// LineOnly draws the line without markers (a reference level).
	LineOnly bool
	// Dashed draws the line with long dashes whatever its style index.
	Dashed bool
	// ColorIndex is the series' style index: its colour, marker shape and
	// dash pattern all follow from it (StyleOf), so that series with
	// different indices below 210 never share all three, and the same
	// method keeps its look in every panel of a figure. Series given the
	// same index on purpose (a pair) share colour, marker and dashes.
	ColorIndex int
}

// palette has ten colours that stay apart from each other (the
// "Tableau 10" set).
var palette = []color.RGBA{
	{0x4E, 0x79, 0xA7, 0xFF}, {0xF2, 0x8E, 0x2B, 0xFF}, {0xE1, 0x57, 0x59, 0xFF}, {0x76, 0xB7, 0xB2, 0xFF},
	{0x59, 0xA1, 0x4F, 0xFF}, {0xED, 0xC9, 0x48, 0xFF}, {0xB0, 0x7A, 0xA1, 0xFF}, {0xFF, 0x9D, 0xA7, 0xFF},
	{0x9C, 0x75, 0x5F, 0xFF}, {0x79, 0x70, 0x6E, 0xFF},
}

// glyphs are seven open marker shapes: open, so that markers of two
// series at the same point both stay visible.
var glyphs = []draw.GlyphDrawer{ringGlyph{}, squareGlyph{}, triangleGlyph{up: true}, crossGlyph{}, diamondGlyph{}, triangleGlyph{}, plusGlyph{}}

// dashPatterns are three line patterns: solid, dashed and dotted.
var dashPatterns = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(1.5), vg.Points(2.5)}}

// longDashes is the pattern of Series.Dashed.
var longDashes = []vg.Length{vg.Points(4), vg.Points(2)}

// Style is how a series is drawn.
type Style struct {
	Color  color.Color
	Glyph  draw.GlyphDrawer
	Dashes []vg.Length
}

// StyleOf returns the style of index i: colour, marker and dash pattern
// cycle over i with periods 10, 7 and 3, which are pairwise coprime, so
// the first 10·7·3 = 210 indices all get different combinations (the
// Chinese remainder theorem) and any two consecutive indices differ in all
// three.
func StyleOf(i int) Style {
	if i < 0 {
		i = -i
	}
	return Style{
		Color:  palette[i%len(palette)],
		Glyph:  glyphs[i%len(glyphs)],
		Dashes: dashPatterns[i%len(dashPatterns)],
	}
}

func seriesColor(i int) color.Color { return StyleOf(i).Color }

// Bars is a group of bars at categorical positions, with optional error
// bars from Lo[i] to Hi[i] (NaN: none at that position).
type Bars struct {
	Name       string
	Values     []float64
	Lo, Hi     []float64
	ColorIndex int
}

// Panel is one plot.
type Panel struct {
	Title, XLabel, YLabel string
	// LogX and LogY draw that axis on a log scale, labelled in the data's
	// units (0.01, 1, 100, 10^−6). Only positive values can be drawn
	// there: points with a non-positive coordinate on a log axis (or a y at
	// or below YFloor) are left out and the panel's title says how many,
	// and error bars whose lower end reaches a decade below the point or
	// lower (on a log y axis, an end at or below 0 is −∞) are cut there and
	// drawn without a cap, so that an open end means "reaches further
	// down".
	//
	// The panel plots log10 of the values on a linear axis whose ticks
	// carry the values, which draws the same picture as a log-scale axis:
	// gonum's plot.LogScale places an axis label's glyph box at the
	// arithmetic midpoint of the range, which on a log scale lies at the
	// far end and pads the panel by half the label's length.
	LogX, LogY bool
	// YFloor, on a log y axis, leaves out values at or below it as zero
	// (such as errors at machine zero, which would stretch the axis over
	// decades that say nothing); 0 leaves out only values ≤ 0.
	YFloor float64
	// XTicksAtData labels every x of the data on a log x axis (a few
	// settings such as sample sizes) instead of decades; XTicks, when set,
	// are the x values to label on any x axis (such as ensemble sizes).
	XTicksAtData bool
	XTicks       []float64
	Series       []Series
	// Bars and Labels draw grouped bar charts instead of lines.
	Bars   []Bars
	Labels []string
	// YMin and YMax fix the y range when YMax > YMin (on a log axis only
	// when YMin > 0 too); error bars beyond it end open at the frame.
	YMin, YMax float64
	// XLabels, when set, name the x positions 1, 2, …, len(XLabels) of
	// series whose x is a category (written slanted, so that long names
	// fit).
	XLabels []string
	// Dodge moves series k of n sideways by (k − (n−1)/2) · 0.7% of the
	// x range (LineOnly series, levels, stay), so that the markers and error bars of several methods at
	// the same setting do not cover each other; the shift is far below
	// the spacing of the settings, whose ticks stay at the true x.
	Dodge bool
}

// Figure is a grid of panels saved as PNG and SVG. Legends never sit on
// the data: each panel's legend is drawn under it, or, with SharedLegend,
// one legend for all panels is drawn under the grid.
type Figure struct {
	// Title is drawn above the panels, wrapped to the figure's width
	// ("\n" starts a new line): what a reader needs to know to read the
	// figure alone (model, sizes, trials, seed).
	Title         string
	Panels        []Panel
	Cols          int
	Width, Height vg.Length // of one panel; defaults 5 × 3.8 inches
	// SharedLegend draws one legend, the entries of every panel by name
	// (the first panel's first), in a strip under the panels instead of a
	// legend under each panel.
	SharedLegend bool
}

// built is a panel made into a plot, with its legend entries and how many
// points a log axis left out.
type built struct {
	plot     *plot.Plot
	plotters []plot.Plotter // what was added to plot, in order
	legend   []legendEntry
	dropped  int
}

func (b *built) add(ps ...plot.Plotter) {
	b.plot.Add(ps...)
	b.plotters = append(b.plotters, ps...)
}

func (p *Panel) build(width vg.Length) (*built, error) {
	pl := plot.New()
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.X.Tick.Marker = linearTicks{}
	pl.Y.Tick.Marker = linearTicks{}
	b := &built{plot: pl}
	b.add(plotter.NewGrid())
	// fx and fy map data to plot coordinates: log10 on a log axis.
	fx, fy := identity, identity
	if p.LogX {
		fx = math.Log10
		pl.X.Tick.Marker = log10Ticks{}
		pl.X.Tick.Label.Handler = powers
	}
	if p.LogY {
		fy = math.Log10
		pl.Y.Tick.Marker = log10Ticks{}
		pl.Y.Tick.Label.Handler = powers
	}
	xticks := p.XTicks
	if p.XTicksAtData && len(xticks) == 0 {
		// Label every x of the data: the settings are few.
		seen := map[float64]bool{}
		for _, s := range p.Series {
			for _, x := range s.X {
				if !seen[x] {
					seen[x] = true
					xticks = append(xticks, x)
				}
			}
		}
	}
	if len(xticks) > 0 {
		var ticks []plot.Tick
		for _, x := range xticks {
			if finite(x) && (x > 0 || !p.LogX) {
				ticks = append(ticks, plot.Tick{Value: fx(x), Label: FormatValue(x)})
			}
		}
		pl.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	if len(p.XLabels) > 0 {
		ticks := make([]plot.Tick, len(p.XLabels))
		for k, l := range p.XLabels {
			ticks[k] = plot.Tick{Value: float64(k + 1), Label: l}
		}
		pl.X.Tick.Marker = plot.ConstantTicks(ticks)
		pl.X.Tick.Label.Rotation = math.Pi / 6
		pl.X.Tick.Label.XAlign = draw.XRight
		pl.X.Tick.Label.YAlign = draw.YCenter
	}
	fixedY := p.YMax > p.YMin
	dodge := make([]float64, len(p.Series))
	if p.Dodge && len(p.Series) > 1 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range p.Series {
			for _, x := range s.X {
				if finite(x) && (x > 0 || !p.LogX) {
					lo, hi = math.Min(lo, fx(x)), math.Max(hi, fx(x))
				}
			}
		}
		// Levels (LineOnly) stay in place; the others spread in order.
		var moved []int
		for k, s := range p.Series {
			if !s.LineOnly {
				moved = append(moved, k)
			}
		}
		if hi > lo {
			for j, k := range moved {
				dodge[k] = (float64(j) - float64(len(moved)-1)/2) * 0.007 * (hi - lo)
			}
		}
	}
	for si, s := range p.Series {
		st := StyleOf(s.ColorIndex)
		if s.Dashed {
			st.Dashes = longDashes
		}
		var pts plotter.XYs
		var bars errorBars
		for i := range s.X {
			x, y := s.X[i], s.Y[i]
			if !finite(x) || !finite(y) {
				continue
			}
			if (p.LogX && x <= 0) || (p.LogY && (y <= 0 || y <= p.YFloor)) {
				b.dropped++
				continue
			}
			pts = append(pts, plotter.XY{X: fx(x) + dodge[si], Y: fy(y)})
			if s.Lo == nil || s.Hi == nil || !finite(s.Lo[i]) || !finite(s.Hi[i]) {
				continue
			}
			lo, hi := math.Min(s.Lo[i], y), math.Max(s.Hi[i], y)
			bar := errorBar{x: fx(x) + dodge[si], lo: fy(lo), hi: fy(hi)}
			if p.LogY && lo <= y/10 {
				// A lower end at or below 0 lies at −∞ on a log axis, and
				// one far below the point would stretch the axis over
				// decades that hold no data: cut the bar a decade below
				// the point and leave that end open (no cap).
				bar.lo, bar.openLo = fy(y)-1, true
			}
			bars.bars = append(bars.bars, bar)
		}
		if len(pts) == 0 {
			continue
		}
		line := &draw.LineStyle{Color: st.Color, Width: vg.Points(1.4), Dashes: st.Dashes}
		glyph := &draw.GlyphStyle{Color: st.Color, Radius: vg.Points(3), Shape: st.Glyph}
		switch {
		case s.Points:
			line = nil
		case len(pts) > 40 || s.LineOnly:
			glyph = nil // a dense curve or a level: a line without markers
		}
		if line != nil {
			ln, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			ln.LineStyle = *line
			b.add(ln)
		}
		if len(bars.bars) > 0 {
			bars.style = draw.LineStyle{Color: st.Color, Width: vg.Points(1)}
			bars.capWidth = vg.Points(5)
			b.add(&bars)
		}
		if glyph != nil {
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = *glyph
			b.add(sc)
		}
		b.legend = append(b.legend, legendEntry{name: s.Name, thumb: thumb{line: line, glyph: glyph}})
	}
	if len(p.Bars) > 0 {
		w := vg.Points(30 / float64(len(p.Bars)))
		for k, bs := range p.Bars {
			bc, err := plotter.NewBarChart(plotter.Values(bs.Values), w)
			if err != nil {
				return nil, err
			}
			bc.Color = seriesColor(bs.ColorIndex)
			bc.LineStyle.Width = 0
			bc.Offset = vg.Length(float64(k)-float64(len(p.Bars)-1)/2) * w
			b.add(bc)
			if bs.Lo != nil && bs.Hi != nil {
				eb := &errorBars{offset: bc.Offset, style: draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}, capWidth: w * 0.6}
				for i, v := range bs.Values {
					if finite(v) && finite(bs.Lo[i]) && finite(bs.Hi[i]) {
						eb.bars = append(eb.bars, errorBar{x: float64(i), lo: math.Min(bs.Lo[i], v), hi: math.Max(bs.Hi[i], v)})
					}
				}
				b.add(eb)
			}
			b.legend = append(b.legend, legendEntry{name: bs.Name, thumb: thumb{fill: bc.Color}})
		}
		pl.NominalX(p.Labels...)
	}
	if len(p.XLabels) > 0 {
		pl.X.Min, pl.X.Max = 0.5, float64(len(p.XLabels))+0.5
	} else {
		padRange(&pl.X)
	}
	switch {
	case fixedY && (!p.LogY || p.YMin > 0):
		pl.Y.Min, pl.Y.Max = fy(p.YMin), fy(p.YMax)
	default:
		padRange(&pl.Y)
	}
	title := p.Title
	if b.dropped > 0 {
		what := "x or y"
		switch {
		case !p.LogX:
			what = "y"
		case !p.LogY:
			what = "x"
		}
		limit := "0"
		if p.LogY && p.YFloor > 0 {
			limit = FormatValue(p.YFloor)
		}
		title += fmt.Sprintf(" [%d point(s) with %s ≤ %s left out of the log axis]", b.dropped, what, limit)
	}
	pl.Title.Text = wrapText(title, pl.Title.TextStyle, width)
	return b, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func identity(v float64) float64 { return v }

// padRange widens an axis's data range by 4% on each side, so that markers
// and error bar caps do not sit on the frame; an axis without data gets
// the range [0, 1].
func padRange(a *plot.Axis) {
	lo, hi := a.Min, a.Max
	if !finite(lo) || !finite(hi) || lo > hi {
		a.Min, a.Max = 0, 1
		return
	}
	if hi-lo < 1e-12*math.Max(1, math.Abs(hi)) {
		d := math.Max(math.Abs(hi)*0.1, 1)
		a.Min, a.Max = lo-d, hi+d
		return
	}
	pad := 0.04 * (hi - lo)
	a.Min, a.Max = lo-pad, hi+pad
}

// errorBar is one vertical error bar; openLo marks a lower end that was
// cut (drawn without a cap).
type errorBar struct {
	x, lo, hi float64
	openLo    bool
}

// errorBars draws vertical error bars with caps at the ends that are the
// data's own; an end cut by the axis range is drawn without a cap. offset
// moves them sideways (onto a bar of a group).
type errorBars struct {
	bars     []errorBar
	style    draw.LineStyle
	capWidth vg.Length
	offset   vg.Length
}

func (e *errorBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, b := range e.bars {
		lo, hi := b.lo, b.hi
		openLo, openHi := b.openLo, false
		if lo < p.Y.Min {
			lo, openLo = p.Y.Min, true
		}
		if hi > p.Y.Max {
			hi, openHi = p.Y.Max, true
		}
		if lo > hi {
			continue
		}
		x, ylo, yhi := trX(b.x)+e.offset, trY(lo), trY(hi)
		c.StrokeLine2(e.style, x, ylo, x, yhi)
		if !openLo {
			c.StrokeLine2(e.style, x-e.capWidth/2, ylo, x+e.capWidth/2, ylo)
		}
		if !openHi {
			c.StrokeLine2(e.style, x-e.capWidth/2, yhi, x+e.capWidth/2, yhi)
		}
	}
}

func (e *errorBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, b := range e.bars {
		xmin, xmax = math.Min(xmin, b.x), math.Max(xmax, b.x)
		ymin, ymax = math.Min(ymin, b.lo), math.Max(ymax, b.hi)
	}
	return
}

// powers renders the tick labels of log axes: a label "B^E" is B with
// the exponent E raised in a smaller font (the figures' font has no
// superscript minus, zero or nine); other labels are plain text.
var powers = powerText{gtext.Plain{Fonts: font.DefaultCache}}

type powerText struct{ gtext.Plain }

func splitPower(txt string) (base, exp string, ok bool) {
	base, exp, ok = strings.Cut(txt, "^")
	return base, exp, ok && !strings.Contains(txt, "\n")
}

func (h powerText) small(fnt font.Font) font.Font {
	fnt.Size *= 0.72
	return fnt
}

func (h powerText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	base, exp, ok := splitPower(txt)
	if !ok {
		return h.Plain.Box(txt, fnt)
	}
	face := h.Fonts.Lookup(fnt, fnt.Size)
	sm := h.small(fnt)
	sface := h.Fonts.Lookup(sm, sm.Size)
	ext := face.Extents()
	return face.Width(base) + sface.Width(exp), max(ext.Ascent, 0.42*fnt.Size+sface.Extents().Ascent), ext.Descent
}

func (h powerText) Draw(c vg.Canvas, txt string, sty gtext.Style, pt vg.Point) {
	base, exp, ok := splitPower(txt)
	if !ok || sty.Rotation != 0 {
		h.Plain.Draw(c, txt, sty, pt)
		return
	}
	w, ht, d := h.Box(txt, sty.Font)
	face := h.Fonts.Lookup(sty.Font, sty.Font.Size)
	sm := h.small(sty.Font)
	sface := h.Fonts.Lookup(sm, sm.Size)
	c.SetColor(sty.Color)
	at := vg.Point{X: pt.X + vg.Length(sty.XAlign)*w, Y: pt.Y + vg.Length(sty.YAlign)*(ht+d) + d}
	c.FillString(face, at, base)
	c.FillString(sface, vg.Point{X: at.X + face.Width(base), Y: at.Y + 0.42*sty.Font.Size}, exp)
}

// log10Ticks marks an axis of log10 values with logTicks of the values.
type log10Ticks struct{}

func (log10Ticks) Ticks(lo, hi float64) []plot.Tick {
	ticks := logTicks{}.Ticks(math.Pow(10, lo), math.Pow(10, hi))
	for k := range ticks {
		ticks[k].Value = math.Log10(ticks[k].Value)
	}
	return ticks
}

// logTicks marks a log axis: powers of ten labelled (every second or
// third when there are many), the multiples 2…9 in between as minor ticks;
// over less than a decade the multiples 2 and 5 (or all of 1…9) are
// labelled too.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	kmin := int(math.Floor(math.Log10(lo) + 1e-9))
	kmax := int(math.Ceil(math.Log10(hi) - 1e-9))
	in := func(v float64) bool { return v >= lo*(1-1e-9) && v <= hi*(1+1e-9) }
	count := func(mult []int) int {
		n := 0
		for k := kmin; k <= kmax; k++ {
			for _, m := range mult {
				if in(float64(m) * math.Pow10(k)) {
					n++
				}
			}
		}
		return n
	}
	labelled := map[int]bool{1: true}
	switch {
	case count([]int{1}) >= 2:
	case count([]int{1, 2, 5}) >= 2:
		labelled[2], labelled[5] = true, true
	case count([]int{1, 2, 3, 4, 5, 6, 7, 8, 9}) >= 2:
		for m := 2; m <= 9; m++ {
			labelled[m] = true
		}
	default:
		// Narrower than from one multiple to the next: linear ticks.
		return linearTicks{}.Ticks(lo, hi)
	}
	step, minor := 1, true
	if n := count([]int{1}); n > 7 {
		step = (n + 5) / 6
	}
	if kmax-kmin > 8 {
		minor = false // too many to read: decades only
	}
	var ticks []plot.Tick
	for k := kmin; k <= kmax; k++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(k)
			if !in(v) {
				continue
			}
			t := plot.Tick{Value: v}
			if labelled[m] && (m != 1 || ((k%step)+step)%step == 0) {
				t.Label = logLabel(m, k)
			}
			if t.Label != "" || minor || m == 1 {
				ticks = append(ticks, t)
			}
		}
	}
	return ticks
}

// logLabel writes m·10^k: as a decimal number for 10⁻² ≤ 10^k ≤ 10³
// ("0.01", "1", "500") and for m > 1 at 10⁻³ ("0.002"), else as "10^k" or "m×10^k" for powerText (with
// a true minus sign).
func logLabel(m, k int) string {
	if (k >= -2 || (k == -3 && m > 1)) && k <= 3 {
		return strconv.FormatFloat(float64(m)*math.Pow10(k), 'f', max(0, -k), 64)
	}
	if m == 1 {
		return "10^" + exponent(k)
	}
	return fmt.Sprintf("%d×10^%s", m, exponent(k))
}

func exponent(k int) string { return strings.Replace(strconv.Itoa(k), "-", "−", 1) }

// linearTicks marks a linear axis with four to seven labelled ticks at 1, 2
// or 5 times a power of ten, written with no more decimals than they need
// (250, not 250.00), and one minor tick between labels.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return nil
	}
	raw := (hi - lo) / 6
	mag := math.Pow10(int(math.Floor(math.Log10(raw))))
	step := mag
	for _, f := range []float64{1, 2, 5, 10} {
		if f*mag >= raw {
			step = f * mag
			break
		}
	}
	dec := 0
	for dec < 12 && math.Abs(step*math.Pow10(dec)-math.Round(step*math.Pow10(dec))) > 1e-9*step*math.Pow10(dec) {
		dec++
	}
	var ticks []plot.Tick
	minor := step / 2
	for i := math.Ceil(lo/minor - 1e-9); i*minor <= hi+1e-9*minor; i++ {
		v := i * minor
		t := plot.Tick{Value: v}
		if math.Mod(math.Abs(i), 2) == 0 {
			if math.Abs(v) < step*1e-9 {
				v = 0
			}
			t.Label = strconv.FormatFloat(v, 'f', dec, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// wrapText breaks a text at spaces into lines no wider than width in the
// given style (a word longer than the width gets a line of its own).
// Line breaks already in the text are kept.
func wrapText(s string, sty gtext.Style, width vg.Length) string {
	if s == "" || width <= 0 {
		return s
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		words := strings.Fields(para)
		line := ""
		for _, w := range words {
			if line != "" && sty.Width(line+" "+w) > width {
				out = append(out, line)
				line = w
				continue
			}
			if line != "" {
				line += " "
			}
			line += w
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// legendEntry is one line of a legend.
type legendEntry struct {
	name  string
	thumb thumb
}

// thumb draws a legend entry's sample: a line with its dashes, a marker,
// or a filled box for bars.
type thumb struct {
	line  *draw.LineStyle
	glyph *draw.GlyphStyle
	fill  color.Color
}

func (t thumb) draw(c draw.Canvas) {
	if t.fill != nil {
		r := vg.Rectangle{Min: vg.Point{X: c.Min.X + c.Size().X/4, Y: c.Min.Y}, Max: vg.Point{X: c.Max.X - c.Size().X/4, Y: c.Max.Y}}
		c.SetColor(t.fill)
		c.Fill(r.Path())
	}
	mid := c.Center()
	if t.line != nil {
		c.StrokeLine2(*t.line, c.Min.X, mid.Y, c.Max.X, mid.Y)
	}
	if t.glyph != nil {
		c.DrawGlyph(*t.glyph, mid)
	}
}

// legendStyle is the text of legends.
var legendStyle = gtext.Style{Font: font.From(plot.DefaultFont, 11), Handler: plot.DefaultTextHandler}

const (
	thumbWidth = 28 // points
	thumbGap   = 5
	columnGap  = 16
)

// legendLayout places entries in columns, filled top to bottom, as many
// columns as fit the width.
type legendLayout struct {
	cols, rows int
	colW, rowH vg.Length
}

func layoutLegend(es []legendEntry, width vg.Length) legendLayout {
	if len(es) == 0 {
		return legendLayout{}
	}
	var w vg.Length
	for _, e := range es {
		w = max(w, vg.Points(thumbWidth+thumbGap)+legendStyle.Width(e.name))
	}
	colW := w + vg.Points(columnGap)
	cols := max(1, min(len(es), int((width+vg.Points(columnGap))/colW)))
	rows := (len(es) + cols - 1) / cols
	// Rebalance: as few columns as the rows need.
	cols = (len(es) + rows - 1) / rows
	rowH := legendStyle.Height("Ag") + vg.Points(3)
	return legendLayout{cols: cols, rows: rows, colW: colW, rowH: rowH}
}

func (l legendLayout) height() vg.Length { return vg.Length(l.rows) * l.rowH }

// drawLegend draws the entries from the top left corner of c.
func drawLegend(c draw.Canvas, es []legendEntry, l legendLayout) {
	for k, e := range es {
		col, row := k/l.rows, k%l.rows
		x := c.Min.X + vg.Length(col)*l.colW
		top := c.Max.Y - vg.Length(row)*l.rowH
		th := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: top - l.rowH + vg.Points(2)},
			Max: vg.Point{X: x + vg.Points(thumbWidth), Y: top - vg.Points(1)},
		}}
		e.thumb.draw(th)
		sty := legendStyle
		sty.YAlign = draw.YCenter
		c.FillText(sty, vg.Point{X: x + vg.Points(thumbWidth+thumbGap), Y: th.Center().Y}, e.name)
	}
}

// titleStyle is the text of a figure's title.
var titleStyle = gtext.Style{Font: font.From(plot.DefaultFont, 14), Handler: plot.DefaultTextHandler, XAlign: draw.XCenter}

// layout is a figure ready to draw.
type layout struct {
	W, H             vg.Length
	w, h             vg.Length
	rows, cols       int
	title            string
	titleH           vg.Length
	plots            [][]*plot.Plot
	legends          [][]legendEntry // per panel (without SharedLegend)
	panelLegend      []legendLayout
	legendH          vg.Length // per panel row
	shared           []legendEntry
	sharedLayout     legendLayout
	sharedH          vg.Length
	sharedLegendLeft vg.Length
}

const margin = 5 * vg.Millimeter

func (f *Figure) layout() (*layout, error) {
	l := &layout{cols: f.Cols, w: f.Width, h: f.Height}
	if l.cols < 1 {
		l.cols = min(len(f.Panels), 2)
	}
	if l.cols < 1 {
		l.cols = 1
	}
	l.rows = (len(f.Panels) + l.cols - 1) / l.cols
	if l.w == 0 {
		l.w = 5 * vg.Inch
	}
	if l.h == 0 {
		l.h = 3.8 * vg.Inch
	}
	l.W = l.w * vg.Length(l.cols)
	l.plots = make([][]*plot.Plot, l.rows)
	for r := range l.plots {
		l.plots[r] = make([]*plot.Plot, l.cols)
	}
	seen := map[string]bool{}
	for k := range f.Panels {
		b, err := f.Panels[k].build(l.w - 8*vg.Millimeter)
		if err != nil {
			return nil, fmt.Errorf("plot %q: %w", f.Panels[k].Title, err)
		}
		l.plots[k/l.cols][k%l.cols] = b.plot
		if f.SharedLegend {
			for _, e := range b.legend {
				if !seen[e.name] {
					seen[e.name] = true
					l.shared = append(l.shared, e)
				}
			}
			continue
		}
		lay := layoutLegend(b.legend, l.w-14*vg.Millimeter)
		l.legends = append(l.legends, b.legend)
		l.panelLegend = append(l.panelLegend, lay)
		if lay.rows > 0 {
			l.legendH = max(l.legendH, lay.height()+2*vg.Millimeter)
		}
	}
	if f.SharedLegend && len(l.shared) > 0 {
		l.sharedLayout = layoutLegend(l.shared, l.W-2*margin)
		l.sharedH = l.sharedLayout.height() + 2*margin
		// Centre the columns under the panels.
		used := vg.Length(l.sharedLayout.cols)*l.sharedLayout.colW - vg.Points(columnGap)
		l.sharedLegendLeft = max(margin, (l.W-used)/2)
	}
	if f.Title != "" {
		l.title = wrapText(f.Title, titleStyle, l.W-2*margin)
		l.titleH = titleStyle.Height(l.title) + 2.5*margin
	}
	l.H = l.titleH + vg.Length(l.rows)*(l.h+l.legendH) + l.sharedH
	return l, nil
}

func (l *layout) draw(c draw.Canvas) {
	if l.title != "" {
		sty := titleStyle
		sty.YAlign = draw.YTop
		c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Max.Y - margin}, l.title)
		c.Max.Y -= l.titleH - margin
	}
	if l.sharedH > 0 {
		lc := c
		lc.Max.Y = c.Min.Y + l.sharedH - margin
		lc.Min.X += l.sharedLegendLeft
		drawLegend(lc, l.shared, l.sharedLayout)
		c.Min.Y += l.sharedH
	}
	tiles := draw.Tiles{Rows: l.rows, Cols: l.cols, PadX: 4 * vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 2 * vg.Millimeter}
	// Every tile loses the same strip at its bottom for its legend, which
	// keeps the panels of a row aligned.
	cs := plot.Align(l.plots, tiles, c)
	for r := range l.plots {
		for k, pl := range l.plots[r] {
			if pl == nil {
				continue
			}
			pc := cs[r][k]
			if l.legendH > 0 {
				lc := pc
				lc.Max.Y = pc.Min.Y + l.legendH
				pc.Min.Y += l.legendH
				lc.Min.X = pl.DataCanvas(pc).Min.X
				i := r*l.cols + k
				drawLegend(lc, l.legends[i], l.panelLegend[i])
			}
			pl.Draw(pc)
		}
	}
}

// Save writes base+".png" and base+".svg" (fonts embedded in the SVG so
// that viewers do not substitute them). Like every file dstein writes into
// an output directory, each replaces an existing file only when the
// directory's record holds it unchanged (safeio.Replace).
func (f *Figure) Save(base string) error {
	var b safeio.Batch
	if err := f.AddTo(&b, base); err != nil {
		b.Abort()
		return err
	}
	return b.Commit(context.Background())
}

// AddTo adds the figure's base+".png" and base+".svg" to a batch of files
// written together (see Save).
func (f *Figure) AddTo(b *safeio.Batch, base string) error {
	l, err := f.layout()
	if err != nil {
		return err
	}
	png := vgimg.NewWith(vgimg.UseWH(l.W, l.H), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))
	l.draw(draw.New(png))
	if err := b.Replace(base+".png", func(w *bufio.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: png}.WriteTo(w)
		return err
	}); err != nil {
		return err
	}
	svg := vgsvg.NewWith(vgsvg.UseWH(l.W, l.H), vgsvg.EmbedFonts(true))
	l.draw(draw.New(svg))
	return b.Replace(base+".svg", func(w *bufio.Writer) error {
		_, err := svg.WriteTo(io.Writer(w))
		return err
	})
}

// Glyphs: open shapes drawn with a 1-point line.

func glyphLine(c *draw.Canvas, sty draw.GlyphStyle) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)})
}

type ringGlyph struct{}

func (ringGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	glyphLine(c, sty)
	var p vg.Path
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

type squareGlyph struct{}

func (squareGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	glyphLine(c, sty)
	r := sty.Radius * 0.9
	polygon(c, pt, []vg.Point{{X: -r, Y: -r}, {X: r, Y: -r}, {X: r, Y: r}, {X: -r, Y: r}})
}

type diamondGlyph struct{}

func (diamondGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	glyphLine(c, sty)
	r := sty.Radius * 1.25
	polygon(c, pt, []vg.Point{{X: 0, Y: -r}, {X: r, Y: 0}, {X: 0, Y: r}, {X: -r, Y: 0}})
}

type triangleGlyph struct{ up bool }

func (g triangleGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	glyphLine(c, sty)
	r := sty.Radius * 1.2
	s := vg.Length(1)
	if !g.up {
		s = -1
	}
	h := r * vg.Length(math.Sqrt(3)/2)
	polygon(c, pt, []vg.Point{{X: 0, Y: s * r}, {X: -h, Y: -s * r / 2}, {X: h, Y: -s * r / 2}})
}

type crossGlyph struct{}

func (crossGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	glyphLine(c, sty)
	r := sty.Radius * 0.9
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)}, pt.X-r, pt.Y-r, pt.X+r, pt.Y+r)
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)}, pt.X-r, pt.Y+r, pt.X+r, pt.Y-r)
}

type plusGlyph struct{}

func (plusGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	glyphLine(c, sty)
	r := sty.Radius * 1.2
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)}, pt.X-r, pt.Y, pt.X+r, pt.Y)
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)}, pt.X, pt.Y-r, pt.X, pt.Y+r)
}

func polygon(c *draw.Canvas, at vg.Point, pts []vg.Point) {
	var p vg.Path
	for k, q := range pts {
		q = vg.Point{X: at.X + q.X, Y: at.Y + q.Y}
		if k == 0 {
			p.Move(q)
		} else {
			p.Line(q)
		}
	}
	p.Close()
	c.Stroke(p)
}
