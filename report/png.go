package report

import (
	"image"
	"image/color"
	"image/png"
	"io"
	"slices"
)

// writePalettedPNG writes img as an 8-bit paletted PNG, about a third of
// the size of the RGB one that vgimg writes: a figure of lines and text on
// white has a few thousand colours, and the 256 most frequent cover 96–99%
// of its pixels (the rest are the anti-aliased edges' blends, each drawn
// in the nearest of those 256). An image of at most 256 colours is written
// exactly. The palette and the mapping depend only on the pixels, so the
// same figure gives the same bytes.
func writePalettedPNG(w io.Writer, img image.Image) error {
	b := img.Bounds()
	// at reads a pixel; vgimg's canvas is an *image.RGBA, read in place
	// (At would box every pixel in an interface).
	at := func(x, y int) color.RGBA { return rgba(img.At(x, y)) }
	if m, ok := img.(*image.RGBA); ok {
		at = func(x, y int) color.RGBA {
			p := m.Pix[m.PixOffset(x, y):]
			return color.RGBA{p[0], p[1], p[2], p[3]}
		}
	}
	counts := map[color.RGBA]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[at(x, y)]++
		}
	}
	type entry struct {
		c color.RGBA
		n int
	}
	all := make([]entry, 0, len(counts))
	for c, n := range counts {
		all = append(all, entry{c, n})
	}
	// Most frequent first; ties by the colour's value, so that the order
	// does not depend on the map's.
	slices.SortFunc(all, func(a, b entry) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return int(packRGBA(a.c)) - int(packRGBA(b.c))
	})
	pal := make(color.Palette, 0, 256)
	index := map[color.RGBA]uint8{}
	for _, e := range all[:min(256, len(all))] {
		index[e.c] = uint8(len(pal))
		pal = append(pal, e.c)
	}
	out := image.NewPaletted(b, pal)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := at(x, y)
			k, ok := index[c]
			if !ok {
				k = nearest(pal, c)
				index[c] = k
			}
			out.Pix[out.PixOffset(x, y)] = k
		}
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	return enc.Encode(w, out)
}

// nearest returns the index of the palette colour closest to c (squared
// distance in RGBA, the first of equals).
func nearest(pal color.Palette, c color.RGBA) uint8 {
	best, bestD := 0, -1
	for k, p := range pal {
		q := p.(color.RGBA)
		dr, dg, db, da := int(q.R)-int(c.R), int(q.G)-int(c.G), int(q.B)-int(c.B), int(q.A)-int(c.A)
		if d := dr*dr + dg*dg + db*db + da*da; bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	return uint8(best)
}

func rgba(c color.Color) color.RGBA {
	if v, ok := c.(color.RGBA); ok {
		return v
	}
	r, g, b, a := c.RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}

func packRGBA(c color.RGBA) uint32 {
	return uint32(c.R)<<24 | uint32(c.G)<<16 | uint32(c.B)<<8 | uint32(c.A)
}
