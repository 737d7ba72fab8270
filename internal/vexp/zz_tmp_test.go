package vexp

import (
	"math"
	"testing"
)

func BenchmarkExp4Tmp(b *testing.B) {
	x := []float64{-0.3, -1.2, 0, -2.5}
	dst := make([]float64, 4)
	b.Run("vexp", func(b *testing.B) {
		for b.Loop() {
			Exp(dst, x)
		}
	})
	b.Run("math", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x {
				dst[i] = math.Exp(v)
			}
		}
	})
}
