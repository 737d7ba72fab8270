package report

import (
	"bufio"
	"context"
	"fmt"
	"image/color"
	"io"
	"math"

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

// Save writes base+".png" and base+".svg". Like every file dstein writes into
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
	return f.add(b, base, true)
}

// AddPNG adds the figure's base+".png" alone to a batch of files.
func (f *Figure) AddPNG(b *safeio.Batch, base string) error {
	return f.add(b, base, false)
}

// add adds the PNG, and the SVG when svg is set.
func (f *Figure) add(b *safeio.Batch, base string, svg bool) error {
	l, err := f.layout()
	if err != nil {
		return err
	}
	png := vgimg.NewWith(vgimg.UseWH(l.W, l.H), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))
	l.draw(draw.New(png))
	if err := b.Replace(base+".png", func(w *bufio.Writer) error {
		return writePalettedPNG(w, png.Image())
	}); err != nil {
		return err
	}
	if !svg {
		return nil
	}
	// The SVG names its fonts (Liberation Serif, metric-compatible with
	// Times) instead of embedding them: a quarter of the size.
	vc := vgsvg.NewWith(vgsvg.UseWH(l.W, l.H), vgsvg.EmbedFonts(false))
	l.draw(draw.New(vc))
	return b.Replace(base+".svg", func(w *bufio.Writer) error {
		_, err := vc.WriteTo(io.Writer(w))
		return err
	})
}

// Glyphs: open shapes drawn with a 1-point line.
