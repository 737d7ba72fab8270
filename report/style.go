package report

import (
	"image/color"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

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
