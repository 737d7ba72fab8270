package ising

import (
	"math"
	"testing"

	"github.com/dstein/dstein/rng"
)

// The fields are −a + 2a·u for the model stream's uniforms in order, the
// draw that model files' "random" and the experiments made before this
// generator existed (their published results depend on it).
func TestUniformFieldsDraw(t *testing.T) {
	f, err := UniformFields(50, 0.3, 9)
	if err != nil {
		t.Fatal(err)
	}
	r := rng.NewKey(9).For(rng.Model).Rand()
	for i, v := range f {
		if want := -0.3 + 0.6*r.Float64(); v != want {
			t.Fatalf("field %d = %v; want %v", i, v, want)
		}
		if math.Abs(v) >= 0.3 {
			t.Fatalf("field %d = %v outside (−0.3, 0.3)", i, v)
		}
	}
	for _, a := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := UniformFields(3, a, 1); err == nil {
			t.Errorf("range %v accepted", a)
		}
	}
}

func TestRandomGridAndSpinGlass(t *testing.T) {
	g, err := RandomGrid(3, 0.5, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range g.Fields() {
		if h != 0 {
			t.Fatalf("a = 0 gave field %v", h)
		}
	}
	if _, err := RandomGrid(0, 0.5, 0.1, 1); err == nil {
		t.Error("side 0 accepted")
	}
	sg, err := SpinGlassGrid(6, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	plus := 0
	for _, e := range sg.Edges() {
		switch e.Coupling {
		case 1:
			plus++
		case -1:
		default:
			t.Fatalf("coupling %v; want ±1", e.Coupling)
		}
	}
	// 60 edges, each +1 with probability ½: 30 ± 3.9 (one SD); 5 SD bounds.
	if n := len(sg.Edges()); n != 60 || plus < 10 || plus > 50 {
		t.Fatalf("%d edges, %d positive; want 60 edges, about half positive", n, plus)
	}
}
