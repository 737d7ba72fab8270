// Package vexp evaluates the exponential over slices, bit for bit as
// math.Exp does element by element, four or eight elements at a time where
// the CPU allows.
//
// On amd64 with AVX2 and FMA, math.Exp runs a fixed sequence of scalar
// operations (argument reduction by ln 2 in two parts with fused
// multiply-adds, a degree-8 polynomial at x/16, four squarings and a scaling
// by a power of two). Exp runs the same operations on four lanes of a YMM
// register, or eight of a ZMM register where the CPU also has AVX-512F
// (GODEBUG=cpu.avx512f=off keeps it to four): each lane sees the same
// roundings in the same order, so every result has the same bits as
// math.Exp's. Groups with an argument outside [−708, 709] (where math.Exp
// takes its overflow, subnormal, NaN and infinity branches) are evaluated by
// math.Exp itself. On other CPUs, other architectures and in purego builds,
// Exp calls math.Exp for every element. Callers therefore get the same bits
// on every path, and switching a loop from math.Exp to Exp changes no
// result.
package vexp
