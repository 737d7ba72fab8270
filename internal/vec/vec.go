package vec

// AddMul4 sets u[i] = (((u[i] + t[0]·w0[i]) + t[1]·w1[i]) + t[2]·w2[i]) +
// t[3]·w3[i] for every i < len(u), each product and sum rounded on its own.
// w0…w3 must be at least as long as u and must not overlap it.
func AddMul4(u []float64, t *[4]float64, w0, w1, w2, w3 []float64) {
	n := len(u)
	w0, w1, w2, w3 = w0[:n], w1[:n], w2[:n], w3[:n]
	i := 0
	if useAsm && n >= 4 {
		i = n &^ 3
		addMul4AVX2(&u[0], t, &w0[0], &w1[0], &w2[0], &w3[0], i/4)
	}
	t0, t1, t2, t3 := t[0], t[1], t[2], t[3]
	for ; i < n; i++ {
		x := u[i] + float64(t0*w0[i])
		x += float64(t1 * w1[i])
		x += float64(t2 * w2[i])
		u[i] = x + float64(t3*w3[i])
	}
}

// AddMul sets u[i] = u[i] + t·w[i] for every i < len(u). w must be at least
// as long as u and must not overlap it.
func AddMul(u []float64, t float64, w []float64) {
	n := len(u)
	w = w[:n]
	i := 0
	if useAsm && n >= 4 {
		i = n &^ 3
		addMulAVX2(&u[0], t, &w[0], i/4)
	}
	for ; i < n; i++ {
		u[i] += float64(t * w[i])
	}
}
