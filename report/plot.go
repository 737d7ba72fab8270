package report

import (
	"bufio"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dstein/dstein/internal/safeio"
)

// Series is one line of a panel: points (X[i], Y[i]) with optional error
// bars from Lo[i] to Hi[i] (absolute values on the y axis). NaN points are
// left out.
type Series struct {
	Name       string
	X, Y       []float64
	Lo, Hi     []float64
	Points     bool // draw points only, no line
	Dashed     bool
	ColorIndex int // index into the palette; series with the same index share a colour
}

// palette has ten colours that stay apart from each other (the
// "Tableau 10" set), so that figures with up to ten methods never give two
// methods the same colour.
var palette = []color.RGBA{
	{0x4E, 0x79, 0xA7, 0xFF}, {0xF2, 0x8E, 0x2B, 0xFF}, {0xE1, 0x57, 0x59, 0xFF}, {0x76, 0xB7, 0xB2, 0xFF},
	{0x59, 0xA1, 0x4F, 0xFF}, {0xED, 0xC9, 0x48, 0xFF}, {0xB0, 0x7A, 0xA1, 0xFF}, {0xFF, 0x9D, 0xA7, 0xFF},
	{0x9C, 0x75, 0x5F, 0xFF}, {0x79, 0x70, 0x6E, 0xFF},
}

func seriesColor(i int) color.Color {
	if i < 0 {
		i = -i
	}
	return palette[i%len(palette)]
}

// Bars is a group of bars at categorical positions.
type Bars struct {
	Name       string
	Values     []float64
	ColorIndex int
}

// Panel is one plot.
type Panel struct {
	Title, XLabel, YLabel string
	LogX                  bool
	Series                []Series
	// Bars and Labels draw grouped bar charts instead of lines.
	Bars   []Bars
	Labels []string
	// YMin and YMax fix the y range when YMax > YMin.
	YMin, YMax float64
	// LegendBottom and LegendLeft move the legend from the top right.
	LegendBottom, LegendLeft bool
	// XLabels, when set, name the x positions 1, 2, …, len(XLabels) of
	// series whose x is a category (written slanted, so that long names
	// fit).
	XLabels []string
}

// Figure is a grid of panels saved as PNG and SVG.
type Figure struct {
	Panels        []Panel
	Cols          int
	Width, Height vg.Length // of one panel; defaults 5 × 3.8 inches
	// SharedLegend draws one legend, that of the first panel, in a strip
	// under the panels instead of a legend inside each panel, so that no
	// legend covers data.
	SharedLegend bool
}

func (p *Panel) build() (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.Legend.Top = !p.LegendBottom
	pl.Legend.Left = p.LegendLeft
	if p.LogX {
		pl.X.Scale = plot.LogScale{}
		// Label every x of the data: the settings are few.
		seen := map[float64]bool{}
		var ticks []plot.Tick
		for _, s := range p.Series {
			for _, x := range s.X {
				if !seen[x] && x > 0 {
					seen[x] = true
					ticks = append(ticks, plot.Tick{Value: x, Label: FormatValue(x)})
				}
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
		pl.X.Min, pl.X.Max = 0.5, float64(len(p.XLabels))+0.5
	}
	for _, s := range p.Series {
		var pts plotter.XYs
		var errs plotter.YErrors
		for i := range s.X {
			if math.IsNaN(s.Y[i]) || math.IsInf(s.Y[i], 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: s.X[i], Y: s.Y[i]})
			if s.Lo != nil {
				errs = append(errs, struct{ Low, High float64 }{s.Y[i] - s.Lo[i], s.Hi[i] - s.Y[i]})
			}
		}
		if len(pts) == 0 {
			continue
		}
		c := seriesColor(s.ColorIndex)
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Color = c
		sc.GlyphStyle.Shape = plotutil.Shape(s.ColorIndex)
		sc.GlyphStyle.Radius = vg.Points(2.5)
		switch {
		case s.Points:
			pl.Add(sc)
			pl.Legend.Add(s.Name, sc)
		case len(pts) > 40:
			// A dense curve: a line without markers.
			ln, err := newLine(pts, c, s.Dashed)
			if err != nil {
				return nil, err
			}
			pl.Add(ln)
			pl.Legend.Add(s.Name, ln)
		default:
			ln, err := newLine(pts, c, s.Dashed)
			if err != nil {
				return nil, err
			}
			pl.Add(ln, sc)
			pl.Legend.Add(s.Name, ln, sc)
		}
		if errs != nil {
			eb := &plotter.YErrorBars{XYs: copyXYs(pts), YErrors: errs, LineStyle: draw.LineStyle{Color: c, Width: vg.Points(1)}, CapWidth: vg.Points(5)}
			pl.Add(eb)
		}
	}
	if len(p.Bars) > 0 {
		w := vg.Points(30 / float64(len(p.Bars)))
		for k, b := range p.Bars {
			bc, err := plotter.NewBarChart(plotter.Values(b.Values), w)
			if err != nil {
				return nil, err
			}
			bc.Color = seriesColor(b.ColorIndex)
			bc.LineStyle.Width = 0
			bc.Offset = vg.Length(float64(k)-float64(len(p.Bars)-1)/2) * w
			pl.Add(bc)
			pl.Legend.Add(b.Name, bc)
		}
		pl.NominalX(p.Labels...)
	}
	if p.YMax > p.YMin {
		pl.Y.Min, pl.Y.Max = p.YMin, p.YMax
	}
	pl.Add(plotter.NewGrid())
	return pl, nil
}

func copyXYs(p plotter.XYs) plotter.XYs { return append(plotter.XYs(nil), p...) }

func newLine(pts plotter.XYs, c color.Color, dashed bool) (*plotter.Line, error) {
	ln, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	ln.Color = c
	ln.Width = vg.Points(1.4)
	if dashed {
		ln.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	}
	return ln, nil
}

// Save writes base+".png" and base+".svg" (fonts embedded in the SVG so
// that viewers do not substitute them).
func (f *Figure) Save(base string) error {
	cols := f.Cols
	if cols < 1 {
		cols = min(len(f.Panels), 2)
	}
	rows := (len(f.Panels) + cols - 1) / cols
	w, h := f.Width, f.Height
	if w == 0 {
		w = 5 * vg.Inch
	}
	if h == 0 {
		h = 3.8 * vg.Inch
	}
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	var legend plot.Legend
	for k := range f.Panels {
		pl, err := f.Panels[k].build()
		if err != nil {
			return fmt.Errorf("plot %q: %w", f.Panels[k].Title, err)
		}
		if f.SharedLegend {
			if k == 0 {
				legend = pl.Legend
			}
			pl.Legend = plot.NewLegend()
		}
		plots[k/cols][k%cols] = pl
	}
	W, H := w*vg.Length(cols), h*vg.Length(rows)
	var strip vg.Length
	if f.SharedLegend {
		strip = legendHeight(&legend) + 6*vg.Millimeter
		H += strip
	}
	draw1 := func(c draw.Canvas) {
		if f.SharedLegend {
			lc := c
			lc.Max.Y = c.Min.Y + strip
			lc.Min.X += 12 * vg.Millimeter
			lc.Min.Y += 3 * vg.Millimeter
			legend.Top, legend.Left = true, true
			legend.Draw(lc)
			c.Min.Y += strip
		}
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
			PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
		cs := plot.Align(plots, tiles, c)
		for r := range plots {
			for k, pl := range plots[r] {
				if pl != nil {
					pl.Draw(cs[r][k])
				}
			}
		}
	}
	png := vgimg.NewWith(vgimg.UseWH(W, H), vgimg.UseDPI(110), vgimg.UseBackgroundColor(color.White))
	draw1(draw.New(png))
	if err := safeio.Replace(base+".png", func(w *bufio.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: png}.WriteTo(w)
		return err
	}); err != nil {
		return err
	}
	svg := vgsvg.NewWith(vgsvg.UseWH(W, H), vgsvg.EmbedFonts(true))
	draw1(draw.New(svg))
	return safeio.Replace(base+".svg", func(w *bufio.Writer) error {
		_, err := svg.WriteTo(io.Writer(w))
		return err
	})
}

// legendHeight is the height of a legend drawn with its entries stacked.
func legendHeight(l *plot.Legend) vg.Length {
	c := draw.New(vgimg.New(10*vg.Inch, 10*vg.Inch))
	r := l.Rectangle(c)
	return r.Max.Y - r.Min.Y
}
