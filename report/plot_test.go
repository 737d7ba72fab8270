package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// dataOf returns the points of a built panel's markers, in plot
// coordinates (log10 on a log axis).
func dataOf(b *built) []plotter.XY {
	var out []plotter.XY
	for _, p := range b.plotters {
		if sc, ok := p.(*plotter.Scatter); ok {
			out = append(out, sc.XYs...)
		}
	}
	return out
}

func TestLogAxisKeepsPositiveValuesOnly(t *testing.T) {
	p := Panel{Title: "t", LogX: true, LogY: true, Series: []Series{
		{Name: "a", X: []float64{1, 10, 100, -1, 1000}, Y: []float64{0.1, 0, 0.001, 5, math.NaN()}},
		{Name: "b", X: []float64{0, 10}, Y: []float64{1, 2}},
	}}
	b, err := p.build(5 * vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	// Left out: y = 0, x = −1, x = 0 (three); NaN is no value, not counted.
	if b.dropped != 3 {
		t.Errorf("dropped %d points, want 3", b.dropped)
	}
	if !strings.Contains(b.plot.Title.Text, "3 point(s)") || !strings.Contains(b.plot.Title.Text, "left out of the log axis") {
		t.Errorf("title %q does not flag the left-out points", b.plot.Title.Text)
	}
	pts := dataOf(b)
	want := []plotter.XY{{X: 0, Y: -1}, {X: 2, Y: -3}, {X: 1, Y: math.Log10(2)}}
	if len(pts) != len(want) {
		t.Fatalf("points %v, want %v (log10 of the positive ones)", pts, want)
	}
	for k := range want {
		if math.Abs(pts[k].X-want[k].X) > 1e-12 || math.Abs(pts[k].Y-want[k].Y) > 1e-12 {
			t.Errorf("point %d = %v, want %v", k, pts[k], want[k])
		}
	}
	// The axes' ranges hold only positive values' logarithms, and the
	// ticks label values, not logarithms.
	for _, tk := range b.plot.Y.Tick.Marker.Ticks(b.plot.Y.Min, b.plot.Y.Max) {
		if tk.Label == "-1" || tk.Label == "-3" {
			t.Errorf("y tick %q labels a logarithm", tk.Label)
		}
	}
	// A floor leaves out values at or below it, and says so.
	p = Panel{LogY: true, YFloor: 1e-20, Series: []Series{{X: []float64{1, 2}, Y: []float64{1e-33, 1}}}}
	if b, err = p.build(5 * vg.Inch); err != nil {
		t.Fatal(err)
	}
	if b.dropped != 1 || !strings.Contains(b.plot.Title.Text, "1e-20") {
		t.Errorf("floor: dropped %d, title %q; want 1 and the floor named", b.dropped, b.plot.Title.Text)
	}
	// A linear axis keeps zero and negative values.
	p = Panel{Series: []Series{{X: []float64{-1, 0, 1}, Y: []float64{-2, 0, 2}}}}
	if b, err = p.build(5 * vg.Inch); err != nil {
		t.Fatal(err)
	}
	if b.dropped != 0 || len(dataOf(b)) != 3 {
		t.Errorf("linear axes dropped %d points, kept %d; want all 3", b.dropped, len(dataOf(b)))
	}
}

func TestLogErrorBarsReachingZeroAreCut(t *testing.T) {
	p := Panel{LogY: true, Series: []Series{{X: []float64{1, 2}, Y: []float64{0.01, 0.01}, Lo: []float64{-0.005, 0.008}, Hi: []float64{0.02, 0.012}}}}
	b, err := p.build(5 * vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	var bars []errorBar
	for _, pt := range b.plotters {
		if e, ok := pt.(*errorBars); ok {
			bars = append(bars, e.bars...)
		}
	}
	if len(bars) != 2 {
		t.Fatalf("%d error bars, want 2", len(bars))
	}
	// In the data's own units: 0.01 ± 0.015 reaches below 0, cut a decade
	// below the point and left open; 0.01 ± 0.002 keeps both ends.
	if !bars[0].openLo || math.Abs(bars[0].lo-(-3)) > 1e-12 || math.Abs(bars[0].hi-math.Log10(0.02)) > 1e-12 {
		t.Errorf("bar reaching 0: %+v, want lo = log10(0.001), open, hi = log10(0.02)", bars[0])
	}
	if bars[1].openLo || math.Abs(bars[1].lo-math.Log10(0.008)) > 1e-12 {
		t.Errorf("bar above 0: %+v, want lo = log10(0.008), closed", bars[1])
	}
}

func TestStylesDistinctFor20Series(t *testing.T) {
	type key struct{ color, glyph, dashes string }
	keyOf := func(c color.Color, g draw.GlyphDrawer, d []vg.Length) key {
		return key{fmt.Sprint(c), fmt.Sprintf("%T%v", g, g), fmt.Sprint(d)}
	}
	seen := map[key]int{}
	for i := range 20 {
		st := StyleOf(i)
		k := keyOf(st.Color, st.Glyph, st.Dashes)
		if j, ok := seen[k]; ok {
			t.Errorf("series %d and %d share colour, marker and dashes", j, i)
		}
		seen[k] = i
		if i > 0 {
			p := keyOf(StyleOf(i-1).Color, StyleOf(i-1).Glyph, StyleOf(i-1).Dashes)
			if p.color == k.color || p.glyph == k.glyph || p.dashes == k.dashes {
				t.Errorf("series %d and %d share a colour, a marker or dashes", i-1, i)
			}
		}
	}
	// The panel draws each series in its style: 20 series, 20 distinct
	// (colour, marker, dashes) among its lines and markers.
	var ss []Series
	for i := range 20 {
		ss = append(ss, Series{Name: string(rune('a' + i)), X: []float64{1, 2}, Y: []float64{float64(i), float64(i + 1)}, ColorIndex: i})
	}
	b, err := (&Panel{Series: ss}).build(5 * vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	var lines []*plotter.Line
	var scatters []*plotter.Scatter
	for _, p := range b.plotters {
		switch v := p.(type) {
		case *plotter.Line:
			lines = append(lines, v)
		case *plotter.Scatter:
			scatters = append(scatters, v)
		}
	}
	if len(lines) != 20 || len(scatters) != 20 {
		t.Fatalf("%d lines and %d scatters, want 20 each", len(lines), len(scatters))
	}
	drawn := map[key]bool{}
	for k := range lines {
		if fmt.Sprint(lines[k].Color) != fmt.Sprint(scatters[k].GlyphStyle.Color) {
			t.Errorf("series %d: line and markers differ in colour", k)
		}
		drawn[keyOf(lines[k].Color, scatters[k].GlyphStyle.Shape, lines[k].Dashes)] = true
	}
	if len(drawn) != 20 {
		t.Errorf("%d distinct drawn styles among 20 series", len(drawn))
	}
	if len(b.legend) != 20 {
		t.Errorf("%d legend entries, want 20", len(b.legend))
	}
	// A pair given one index on purpose looks alike.
	if keyOf(StyleOf(3).Color, StyleOf(3).Glyph, StyleOf(3).Dashes) != keyOf(StyleOf(3).Color, StyleOf(3).Glyph, StyleOf(3).Dashes) {
		t.Error("one index, two styles")
	}
}

func TestFigureTitleAndSharedLegendAreDrawn(t *testing.T) {
	f := Figure{Title: strings.Repeat("a long figure title that wraps ", 12), SharedLegend: true, Cols: 2, Panels: []Panel{
		{Title: "one", Series: []Series{{Name: "m1", X: []float64{1, 2}, Y: []float64{1, 2}}, {Name: "m2", X: []float64{1, 2}, Y: []float64{2, 1}, ColorIndex: 1}}},
		{Title: "two", Series: []Series{{Name: "m2", X: []float64{1, 2}, Y: []float64{3, 1}, ColorIndex: 1}, {Name: "m3", X: []float64{1, 2}, Y: []float64{1, 1}, ColorIndex: 2}}},
	}}
	l, err := f.layout()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(l.title, "\n")
	if len(lines) < 2 {
		t.Errorf("title not wrapped: %q", l.title)
	}
	for _, ln := range lines {
		if w := titleStyle.Width(ln); w > l.W {
			t.Errorf("title line %q is %v wide, more than the figure's %v", ln, w, l.W)
		}
	}
	if strings.Join(strings.Fields(l.title), " ") != strings.TrimSpace(f.Title) {
		t.Errorf("wrapping changed the title's words")
	}
	if l.titleH <= 0 || l.H != l.titleH+vg.Length(l.rows)*(l.h+l.legendH)+l.sharedH {
		t.Errorf("no room for the title: titleH %v, H %v", l.titleH, l.H)
	}
	// The shared legend: every panel's entries once, by name, in order.
	var names []string
	for _, e := range l.shared {
		names = append(names, e.name)
	}
	if got := strings.Join(names, ","); got != "m1,m2,m3" {
		t.Errorf("shared legend %s, want m1,m2,m3", got)
	}
	// Drawn: the title's text reaches the SVG.
	dir := t.TempDir()
	if err := f.Save(filepath.Join(dir, "fig")); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "fig.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), lines[0]) {
		t.Errorf("the SVG does not hold the title's first line %q", lines[0])
	}
	if _, err := os.Stat(filepath.Join(dir, "fig.png")); err != nil {
		t.Error(err)
	}
}

func TestPerPanelLegendsSitUnderTheData(t *testing.T) {
	f := Figure{Cols: 2, Panels: []Panel{
		{Title: "one", Series: []Series{{Name: "m1", X: []float64{1, 2}, Y: []float64{1, 2}}}},
		{Title: "two", Series: []Series{{Name: "m2", X: []float64{1, 2}, Y: []float64{3, 1}, ColorIndex: 1}, {Name: "m3", X: []float64{1, 2}, Y: []float64{1, 1}, ColorIndex: 2}}},
	}}
	l, err := f.layout()
	if err != nil {
		t.Fatal(err)
	}
	if l.legendH <= 0 || len(l.legends) != 2 || len(l.legends[1]) != 2 {
		t.Fatalf("legends %v with strip %v; want one per panel under it", l.legends, l.legendH)
	}
	// The strip under each panel holds its legend: the panels' own
	// legends stay empty (nothing is drawn on the data).
	if l.panelLegend[1].rows == 0 || l.legendH < l.panelLegend[1].height() {
		t.Errorf("strip %v lower than the legend %v", l.legendH, l.panelLegend[1].height())
	}
}

func TestTicks(t *testing.T) {
	labels := func(ts []plot.Tick) []string {
		var out []string
		for _, tk := range ts {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	// Integer steps print as integers.
	if got := strings.Join(labels(linearTicks{}.Ticks(0, 500)), " "); got != "0 100 200 300 400 500" {
		t.Errorf("linear ticks over [0, 500]: %s", got)
	}
	if got := strings.Join(labels(linearTicks{}.Ticks(-0.02, 1.02)), " "); got != "0.0 0.2 0.4 0.6 0.8 1.0" {
		t.Errorf("linear ticks over [−0.02, 1.02]: %s", got)
	}
	// Decades, as decimals from 0.01 to 1000 and as powers beyond.
	if got := strings.Join(labels(logTicks{}.Ticks(0.001, 1000)), " "); got != "10^−3 0.01 0.1 1 10 100 1000" {
		t.Errorf("log ticks over [0.001, 1000]: %s", got)
	}
	// Less than a decade: 2 and 5 labelled too.
	if got := strings.Join(labels(logTicks{}.Ticks(0.15, 0.6)), " "); got != "0.2 0.5" {
		t.Errorf("log ticks over [0.15, 0.6]: %s", got)
	}
	// Many decades: every few labelled.
	if n := len(labels(logTicks{}.Ticks(1e-30, 1))); n < 3 || n > 8 {
		t.Errorf("%d labels over 30 decades", n)
	}
}
