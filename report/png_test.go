package report

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

// A figure of at most 256 colours is written exactly; one of more has
// every pixel in the nearest of its 256 most frequent colours; the same
// image gives the same bytes.
func TestPalettedPNG(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for y := range 30 {
		for x := range 40 {
			img.SetRGBA(x, y, color.RGBA{uint8(x * 6), uint8(y * 8), 200, 255}) // 1200 colours
		}
	}
	small := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for y := range 16 {
		for x := range 16 {
			small.SetRGBA(x, y, color.RGBA{uint8(x * 16), uint8(y * 16), 7, 255}) // 256 colours
		}
	}
	for _, c := range []struct {
		img   *image.RGBA
		exact bool
	}{{small, true}, {img, false}} {
		var a, b bytes.Buffer
		if err := writePalettedPNG(&a, c.img); err != nil {
			t.Fatal(err)
		}
		writePalettedPNG(&b, c.img)
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Error("the same image gave different bytes")
		}
		got, err := png.Decode(&a)
		if err != nil {
			t.Fatal(err)
		}
		pal, ok := got.(*image.Paletted)
		if !ok || len(pal.Palette) > 256 {
			t.Fatalf("decoded %T; want a palette of at most 256 colours", got)
		}
		for y := range c.img.Bounds().Dy() {
			for x := range c.img.Bounds().Dx() {
				want, have := c.img.RGBAAt(x, y), rgba(got.At(x, y))
				if c.exact && want != have {
					t.Fatalf("pixel (%d, %d) %v, want %v exactly", x, y, have, want)
				}
				if near := pal.Palette[nearest(pal.Palette, want)].(color.RGBA); !c.exact && have != near {
					t.Fatalf("pixel (%d, %d) %v, want the palette's nearest %v", x, y, have, near)
				}
			}
		}
	}
}
