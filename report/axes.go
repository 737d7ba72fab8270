package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	gtext "gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

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
