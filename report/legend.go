package report

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	gtext "gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

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

func (crossGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	glyphLine(c, sty)
	r := sty.Radius * 0.9
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)}, pt.X-r, pt.Y-r, pt.X+r, pt.Y+r)
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)}, pt.X-r, pt.Y+r, pt.X+r, pt.Y-r)
}

func (plusGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	glyphLine(c, sty)
	r := sty.Radius * 1.2
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)}, pt.X-r, pt.Y, pt.X+r, pt.Y)
	c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)}, pt.X, pt.Y-r, pt.X, pt.Y+r)
}

type crossGlyph struct{}

type plusGlyph struct{}

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
