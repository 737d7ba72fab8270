package report

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func identity(v float64) float64 { return v }

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
