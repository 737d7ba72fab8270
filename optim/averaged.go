package optim

// Averaged is a Robbins–Monro recursion with Polyak averaging for one
// tuning parameter x over Steps steps: after step t of 1…Steps, x moves
// by Gain·(a − Target) for the observed rate a, clamped to [Lo, Hi]; after
// the last step x is fixed at its average over the second half of the
// steps (the values with which steps Steps/2+1 … Steps ran), so that what
// follows is time-homogeneous. DMALA adapts its move penalty 1/α with it
// (Gain < 0: a low acceptance rate raises the penalty) and DLMC its log h
// (Gain > 0 lowers h).
type Averaged struct {
	X, Gain, Target, Lo, Hi float64
	Steps                   int
	sum                     float64
}

// Update records the rate a observed at step t (1…Steps) with the current
// X and returns the X for the next step; done reports that t was the last
// adaptive step (X is then the average and stays).
func (r *Averaged) Update(t int, a float64) (x float64, done bool) {
	if t > r.Steps/2 {
		r.sum += r.X // the value with which step t ran
	}
	u := r.X + r.Gain*(a-r.Target)
	if t == r.Steps {
		u = r.sum / float64(r.Steps-r.Steps/2)
	}
	r.X = min(max(u, r.Lo), r.Hi)
	return r.X, t == r.Steps
}
