package pt

import (
	"math"
	"slices"

	"github.com/dstein/dstein/diag"
	"github.com/dstein/dstein/model"
	"github.com/dstein/dstein/model/potts"
	"github.com/dstein/dstein/sampler/sw"
	"gonum.org/v1/gonum/stat/distuv"
)

// Why one file of about 650 lines: the pilot that sizes the ladder (the barrier Λ, the
// kernel per model, escalation) is one procedure with its documented limits.

// Limits of the ladder that Settings.Auto sizes.
const (
	// MaxLadder is the largest number of temperatures the sizing chooses:
	// enough for a barrier Λ of 15 (K − 1 = 2Λ).
	MaxLadder = 32
	// DefaultAutoTune is the pilot's length (Settings.Tune) with Auto: the
	// plain chains' autocorrelation and the comparison of their mean with
	// the tempered chains' need a few hundred sweeps.
	DefaultAutoTune = 200
	// autoRegrows is how many times a ladder that is still too short for
	// the barrier it measures is grown again, each time after another
	// tuning window of the same length.
	autoRegrows = 2
	// autoAgree is the largest difference, in standard errors, between
	// the plain chains' mean of a statistic and the tempered chains' mean
	// that still lets the plain chains be chosen: a larger one says that
	// the plain chains sit in modes that the tempered ones leave.
	autoAgree = 4
	// autoFamily is the chance that independent variables whose plain and
	// tempered means agree exceed zLimit, one of them or more.
	autoFamily = 1e-3
	// autoMinESS is the smallest ESS per plain chain of the pilot that
	// counts as a measurement of their autocorrelation: a pilot of L
	// iterations measures up to L/(2·autoMinESS) sweeps per draw.
	autoMinESS = 10
	// autoRhat is the largest R̂ of the pilot's plain chains that vouches
	// for them.
	autoRhat = 1.05
	// autoProbation is the length of the plain chains' probation, in
	// multiples of Tune.
	autoProbation = 2
	// autoPilots is how long the pilot may grow, in multiples of Tune: it
	// doubles while the plain chains are neither vouched for nor refused.
	autoPilots = 4
)

// pilot holds what the sizing of the ladder measures during the first
// tuning window, per chain: the shadow replica's log p* and magnetisation
// (Σ_i of the state values) after each iteration's sweep, and the same of
// the β = 1 replica of the ladder.
type pilot struct {
	shadowLL, shadowMag [][]float64
	coldLL, coldMag     [][]float64
	row                 [][]int // a state per chain, for the magnetisation
	// Per chain and variable, the sums of the state values and of their
	// squares over the current window (from the shadow's restart, then
	// the second half of the pilot so far): shadow, then β = 1 replica.
	sum, sq [2][][]float64
	window  []int       // iterations in each chain's window
	m       model.Model // for the variables' state values
}

func newPilot(n, d, iters int) *pilot { // iters: the capacity of the series
	p := &pilot{}
	for _, f := range []*[][]float64{&p.shadowLL, &p.shadowMag, &p.coldLL, &p.coldMag} {
		*f = make([][]float64, n)
		for c := range *f {
			(*f)[c] = make([]float64, 0, min(iters, 1024)) // grown as the pilot goes
		}
	}
	p.row = make([][]int, n)
	for c := range p.row {
		p.row[c] = make([]int, d)
	}
	for w := range 2 {
		p.sum[w], p.sq[w] = make([][]float64, n), make([][]float64, n)
		for c := range n {
			p.sum[w][c], p.sq[w][c] = make([]float64, d), make([]float64, d)
		}
	}
	p.window = make([]int, n)
	return p
}

// restartWindow empties the per-variable sums.
func (p *pilot) restartWindow() {
	for w := range 2 {
		for c := range p.sum[w] {
			clear(p.sum[w][c])
			clear(p.sq[w][c])
		}
	}
	clear(p.window)
}

// replicaState writes replica rep's state indices into dst.
func (s *Sampler) replicaState(ch *chain, rep int, dst []int) {
	switch {
	case s.rbm != nil:
		ch.reps[rep].states(dst)
	case s.spin != nil:
		for i, v := range ch.spins[rep*s.d : (rep+1)*s.d] {
			dst[i] = int(v)
		}
	default:
		copy(dst, ch.tr[rep].State())
	}
}

// magnetisation returns Σ_i of the values of replica rep's states, and
// adds each value and its square to sum and sq when they are not nil.
func (s *Sampler) magnetisation(ch *chain, rep int, row []int, sum, sq []float64) float64 {
	s.replicaState(ch, rep, row)
	var total float64
	for i, z := range row {
		v := s.m.States(i)[z]
		total += v
		if sum != nil {
			sum[i] += v
			sq[i] += v * v
		}
	}
	return total
}

// record adds chain c's pilot statistics of this iteration. A quarter
// of the way through the pilot the shadow replica restarts from the state
// of the replica at level restartLevel(c) of the tempered chain, so that
// the second half, which the sizing measures, shows the plain chain's
// mixing rather than its burn-in, and the plain chains start
// overdispersed (as R̂ wants): chains that all restart at β = 1 start in
// the mode that holds the β = 1 replicas, and a mode of small mass that
// they cannot reach is seen neither by them nor, in a pilot this short,
// by the β = 1 replicas (on a 4×4 UAI grid with evidence, a mode of mass
// 0.005 missed in 44 of 200 seeds).
func (s *Sampler) record(c int) {
	ch, p := &s.chains[c], s.pilot
	row := p.row[c]
	if len(p.shadowLL[c]) == s.tuneLen/4 {
		cold := ch.perm[restartLevel(c, s.n, s.k)]
		switch {
		case s.rbm != nil:
			dst, src := &ch.reps[s.k], &ch.reps[cold]
			copy(dst.z, src.z)
			copy(dst.h, src.h)
			copy(dst.a, src.a)
		case s.spin != nil:
			copy(ch.spins[s.k*s.d:(s.k+1)*s.d], ch.spins[cold*s.d:(cold+1)*s.d])
		default:
			ch.tr[s.k].Reset(ch.tr[cold].State())
		}
		ch.ll[s.k] = ch.ll[cold]
	}
	var sum, sq [2][]float64
	if len(p.shadowLL[c]) >= s.tuneLen/2 {
		p.window[c]++
		sum, sq = [2][]float64{p.sum[0][c], p.sum[1][c]}, [2][]float64{p.sq[0][c], p.sq[1][c]}
	}
	p.shadowLL[c] = append(p.shadowLL[c], ch.ll[s.k])
	p.shadowMag[c] = append(p.shadowMag[c], s.magnetisation(ch, s.k, row, sum[0], sq[0]))
	cold := ch.perm[0]
	p.coldLL[c] = append(p.coldLL[c], ch.ll[cold])
	p.coldMag[c] = append(p.coldMag[c], s.magnetisation(ch, cold, row, sum[1], sq[1]))
}

// restartLevel is the level of the ladder whose state chain c of n
// restarts its shadow replica from: the levels spread evenly from β = 1
// (chain 0) to the hottest of the k (the last chain).
func restartLevel(c, n, k int) int {
	if n < 2 {
		return 0
	}
	return (c*(k-1) + (n-1)/2) / (n - 1)
}

// decide compares plain chains (K = 1) with the pilot's tempered chains (k
// sweeps a round) on what an effective draw at β = 1 costs, in sweeps: the
// chains' length times their number over the bulk ESS of log p* and of the
// magnetisation, over the second half of the pilot, the larger of the two
// statistics. The ESS takes in the spread between chains, so plain chains
// held in different modes cost much.
//
// plain is −1 when the pilot does not vouch for the plain chains. They are
// refused when their mean or variance of either statistic differs from that
// of the tempered chains' β = 1 replicas by more than autoAgree standard
// errors (plain chains that all sit in one of two modes have the tempered
// chains' mean only by chance and a far smaller variance), when some
// variable's mean differs by more than zLimit(d) standard errors (worstZ:
// modes that differ in a few variables, not in log p* or the magnetisation),
// when a variable they never moved was left often by the tempered chains
// (missedState), or when even the cost the pilot measured for them exceeds
// the tempered chains'. They are not yet vouched for (extend is true: a
// longer pilot may) while their R̂ exceeds autoRhat or their ESS is below
// autoMinESS per chain: a slow mode that a short pilot has not crossed shows
// there first.
func (p *pilot) decide(k int) (plain, tempered float64, extend bool) {
	plain, tempered = 1, float64(k)
	refused, unsure := false, false
	for _, pair := range [][2][][]float64{{p.shadowLL, p.coldLL}, {p.shadowMag, p.coldMag}} {
		sh, co := halves(pair[0]), halves(pair[1])
		n := float64(len(sh) * len(sh[0]))
		if constant(sh) && constant(co) && sh[0][0] == co[0][0] {
			continue // nothing moves: no information, no objection
		}
		if constant(sh) || constant(co) {
			return -1, tempered, false
		}
		essS, err1 := diag.BulkESS(sh)
		essC, err2 := diag.BulkESS(co)
		if err1 != nil || err2 != nil || !(essC > 0) || !(essS > 0) {
			return -1, tempered, false
		}
		tempered = max(tempered, float64(k)*n/essC)
		plain = max(plain, n/essS)
		ms, vs := meanVar(sh)
		mc, vc := meanVar(co)
		if math.Abs(ms-mc) > autoAgree*math.Sqrt(vs/essS+vc/essC) ||
			math.Abs(math.Log(vs/vc)) > autoAgree*math.Sqrt(2/essS+2/essC) {
			refused = true
		}
		rh := 1.0
		if len(sh) > 1 {
			var err error
			if rh, err = diag.Rhat(sh); err != nil {
				return -1, tempered, false
			}
		}
		if !(rh <= autoRhat) || essS < autoMinESS*float64(len(sh)) {
			unsure = true
		}
	}
	if len(p.window) > 1 && p.window[0] > 1 {
		l := float64(p.window[0])
		ts, tc := p.betweenWithin(0), p.betweenWithin(1)
		if p.worstZ(ts, tc) > zLimit(len(p.sum[0][0])) || missedState(p.m, p.side(0), p.side(1), ts, tc) {
			refused = true
		}
		plain, tempered = max(plain, ts), max(tempered, float64(k)*tc)
		if ts > l/autoMinESS {
			unsure = true
		}
	}
	switch {
	case refused || plain > tempered:
		return -1, tempered, false
	case unsure:
		return -1, tempered, true
	}
	return plain, tempered, false
}

// betweenWithin estimates the variables' mean integrated autocorrelation
// time over the window of the shadow chains (w = 0) or of the β = 1
// replicas (w = 1): the variance of a chain's mean of L draws is about
// τ·σ²/L, so L·B_i/W_i, with B_i the variance between the chains' means
// of variable i and W_i the mean variance within them, estimates τ_i, and
// averaging over the variables steadies an estimate that has n − 1
// degrees of freedom per variable. A variable that is constant within
// every chain but differs between them counts as the window's length
// (the largest τ it can show); one constant everywhere is left out.
func (p *pilot) betweenWithin(w int) float64 {
	n, l := len(p.window), float64(p.window[0])
	d := len(p.sum[w][0])
	var total float64
	var count int
	for i := range d {
		var mean, within float64
		for c := range n {
			m := p.sum[w][c][i] / l
			mean += m
			within += max(p.sq[w][c][i]-l*m*m, 0) / (l - 1)
		}
		mean /= float64(n)
		within /= float64(n)
		var between float64
		for c := range n {
			dm := p.sum[w][c][i]/l - mean
			between += dm * dm
		}
		between /= float64(n - 1)
		switch {
		case within > 0:
			total += min(l*between/within, l)
		case between > 0:
			total += l
		default:
			continue
		}
		count++
	}
	if count == 0 {
		return 1
	}
	return max(total/float64(count), 1)
}

// zLimit is the largest |z| of worstZ over d variables that lets plain
// chains be chosen: the normal quantile that d independent variables
// exceed with probability autoFamily, and at least autoAgree.
func zLimit(d int) float64 {
	return max(autoAgree, distuv.UnitNormal.Quantile(1-autoFamily/(2*float64(d))))
}

// worstZ returns the largest over the variables of |m_s,i − m_c,i|/SE_i,
// the difference between the plain chains' and the tempered chains' mean
// of variable i over the window, SE_i² = (τ_s·W_s,i + τ_c·W_c,i)/(nL)
// with the variables' mean autocorrelation times τ_s and τ_c
// (betweenWithin) and the within-chain variances W. A variable constant
// in both with different values counts as +Inf.
func (p *pilot) worstZ(ts, tc float64) float64 {
	return zBetween(p.side(0), p.side(1), ts, tc)
}

// side is one set of chains' per-variable sums over a window of l
// iterations.
type side struct {
	sum, sq [][]float64
	l       float64
}

func (p *pilot) side(w int) side { return side{p.sum[w], p.sq[w], float64(p.window[0])} }

// zBetween returns the largest over the variables of the difference
// between the means of a and b over its standard error, with the mean
// autocorrelation times ta and tb (see worstZ).
func zBetween(a, b side, ta, tb float64) float64 {
	d := len(a.sum[0])
	worst := 0.0
	for i := range d {
		var diff, se2 float64
		for w, x := range []side{a, b} {
			n := float64(len(x.sum))
			var mean, within float64
			for c := range x.sum {
				m := x.sum[c][i] / x.l
				mean += m / n
				within += max(x.sq[c][i]-x.l*m*m, 0) / (x.l - 1) / n
			}
			tau := ta
			if w == 1 {
				tau, mean = tb, -mean
			}
			diff += mean
			se2 += tau * within / (n * x.l)
		}
		switch {
		case se2 > 0:
			worst = max(worst, math.Abs(diff)/math.Sqrt(se2))
		case diff != 0:
			return math.Inf(1)
		}
	}
	return worst
}

// missedState reports whether the plain chains (a) never left a value
// that the tempered chains (b) left often enough that missing it is
// implausible: for a variable that sits at one value v in every plain
// chain, the tempered chains' share of other values is at least
// E[(X − v)²]/max_s (s − v)² (exact for two states), from x = share·ESS_b
// effective visits in ESS_b = nL/τ_b effective draws; with p its
// Clopper–Pearson lower bound at level 1 − autoFamily, ESS_a = nL/τ_a
// effective plain draws all miss it with probability (1 − p)^ESS_a, and
// below autoFamily/d that is refused. (A mean test needs the tempered
// chains' few visits to be significant on their own; this one also
// counts the plain chains' many draws that did not visit.)
func missedState(m model.Model, a, b side, ta, tb float64) bool {
	d := len(a.sum[0])
	essA := float64(len(a.sum)) * a.l / max(ta, 1)
	essB := float64(len(b.sum)) * b.l / max(tb, 1)
	for i := range d {
		v := a.sum[0][i] / a.l
		still := true
		for c := range a.sum {
			m := a.sum[c][i] / a.l
			if m != v || a.sq[c][i] != a.l*v*v {
				still = false
				break
			}
		}
		if !still {
			continue
		}
		var dev2 float64 // the tempered chains' mean of (X − v)²
		for c := range b.sum {
			dev2 += (b.sq[c][i] - 2*v*b.sum[c][i] + b.l*v*v) / b.l / float64(len(b.sum))
		}
		var far float64
		for _, st := range m.States(i) {
			far = max(far, (st-v)*(st-v))
		}
		if far == 0 || dev2 <= 0 {
			continue
		}
		x := dev2 / far * essB
		if x < 1 {
			continue
		}
		lo := distuv.Beta{Alpha: x, Beta: essB - x + 1}.Quantile(autoFamily)
		if essA*math.Log1p(-lo) < math.Log(autoFamily/float64(d)) {
			return true
		}
	}
	return false
}

func halves(x [][]float64) [][]float64 {
	h := make([][]float64, len(x))
	for c, v := range x {
		h[c] = v[len(v)/2:]
	}
	return h
}

func constant(x [][]float64) bool {
	for _, v := range x {
		for _, y := range v {
			if y != x[0][0] {
				return false
			}
		}
	}
	return true
}

func meanVar(x [][]float64) (mean, variance float64) {
	var n float64
	for _, v := range x {
		for _, y := range v {
			mean += y
			n++
		}
	}
	mean /= n
	for _, v := range x {
		for _, y := range v {
			variance += (y - mean) * (y - mean)
		}
	}
	return mean, variance / max(n-1, 1)
}

// ladderFor returns the number of temperatures that balances round trips
// and cost for a barrier Λ, K − 1 = ⌈2Λ⌉ (Syed et al.: the round-trip
// rate is within a factor of about 1.5 of its limit 1/(2 + 2Λ) from
// there), between 2 and MaxLadder.
func ladderFor(lambda float64) int {
	return min(max(int(math.Ceil(2*lambda))+1, 2), MaxLadder)
}

// placeLadder returns k inverse temperatures from ladder[0] down to its
// last, placed so that the barrier Λ(β) measured on ladder (rejection
// rates 1 − rate, interpolated linearly in β; splitBarrier, which
// tuner.adapt also uses) is split into k − 1 equal parts. k = 1 gives the
// β = 1 end alone.
func placeLadder(ladder, rate []float64, k int) []float64 {
	if k == 1 {
		return []float64{ladder[0]}
	}
	old := len(ladder)
	if old < 2 {
		return evenLadder(k, 0)
	}
	nb := make([]float64, k)
	if !splitBarrier(nb, make([]float64, old), ladder, rate) {
		return evenLadder(k, ladder[old-1])
	}
	return nb
}

// size ends a tuning window of the auto ladder: the first decides between
// plain chains and parallel tempering from the pilot, later ones grow a
// ladder still too short for its barrier (K − 1 < 1.5Λ). A new ladder
// starts another tuning window of the same length; size reports whether
// the ladder changed.
func (s *Sampler) size() bool {
	lambda := 0.0
	for _, r := range s.rate {
		lambda += 1 - r
	}
	k := ladderFor(lambda)
	s.lambda = lambda
	switch {
	case s.pilot != nil:
		p := s.pilot
		plain, tempered, extend := p.decide(s.k)
		if extend && s.iter < autoPilots*s.tuneLen {
			s.tune.end = min(2*s.iter, autoPilots*s.tuneLen)
			s.pilot.restartWindow() // the next look takes the second half
			return false
		}
		s.plain, s.ptCost = plain, tempered
		s.pilot = nil
		if s.plain > 0 && s.plain <= s.ptCost {
			// Plain chains, on probation: the ladder they would
			// otherwise have had is kept for them, and the tempered
			// chains' means to compare them with.
			s.fallback = placeLadder(s.ladder, s.rate, k)
			if len(s.chains) > 1 {
				s.ref, s.refTau = p.side(1), p.betweenWithin(1)
			}
			s.resize([]float64{1})
			s.probe = newPilot(s.n, s.d, autoProbation*s.tuneLen)
			s.probeEnd = s.iter + autoProbation*s.tuneLen
			return true
		}
	case s.regrows < autoRegrows && float64(s.k-1) < 1.5*lambda && s.k < MaxLadder:
		s.regrows++
	default:
		k = s.k
	}
	if k == s.k && s.shadow == 0 {
		return false
	}
	s.resize(placeLadder(s.ladder, s.rate, k))
	return true
}

// recordProbe adds chain c's statistics of this iteration to the
// probation of plain chains (the pilot's fields of the β = 1 replicas).
func (s *Sampler) recordProbe(c int) {
	ch, p := &s.chains[c], s.probe
	rep := ch.perm[0]
	p.window[c]++
	p.coldLL[c] = append(p.coldLL[c], ch.ll[rep])
	p.coldMag[c] = append(p.coldMag[c], s.magnetisation(ch, rep, p.row[c], p.sum[1][c], p.sq[1][c]))
}

// endProbation looks at the plain chains' first autoProbation·Tune
// iterations, from the tempered states the pilot left: they stay plain
// when log p* and the magnetisation have R̂ ≤ autoRhat and at least
// autoMinESS effective draws per chain and the variables' mean
// autocorrelation time (betweenWithin) is below the window over
// autoMinESS, and no variable's mean over the window differs from the
// pilot's tempered chains' by more than zLimit(d) standard errors;
// otherwise the chains go back to the ladder sized by the
// pilot, and plain_sweeps reads −1. (Chains that have gone to different
// modes since they left the tempered chains show here, over a window
// longer than the pilot's.)
func (s *Sampler) endProbation() {
	p := s.probe
	s.probe = nil
	ok := true
	for _, x := range [][][]float64{p.coldLL, p.coldMag} {
		if constant(x) {
			continue
		}
		ess, err := diag.BulkESS(x)
		if err != nil || !(ess >= autoMinESS*float64(len(x))) {
			ok = false
		}
		if len(x) > 1 {
			if rh, err := diag.Rhat(x); err != nil || !(rh <= autoRhat) {
				ok = false
			}
		}
	}
	if len(p.window) > 1 {
		tau := p.betweenWithin(1)
		if tau > float64(p.window[0])/autoMinESS || zBetween(p.side(1), s.ref, tau, s.refTau) > zLimit(s.d) || missedState(s.m, p.side(1), s.ref, tau, s.refTau) {
			ok = false
		}
	}
	s.ref = side{}
	if !ok {
		s.plain = -1
		s.resize(s.fallback)
	} else {
		s.late = s.fallback
	}
	s.fallback = nil
}

// Escalate sends plain chains that the sizing chose, and that passed
// their probation, back to the ladder the pilot sized for them, and
// reports whether it did (false when the chains are tempered or were not
// chosen by the sizing). A run that diagnoses its own draws calls it when
// they show that the plain chains have not mixed after all (an ESS-target
// run whose window fails R̂: the pilot and the probation average the
// variables' autocorrelation, and a few slow variables can pass them;
// on the d = 100 RBM with W ~ N(0, 0.05), plain block-Gibbs chains chosen
// in 17 of 20 seeds still had R̂ up to 1.02 after 8000 iterations).
// plain_sweeps then reads −1, and the new ladder is tuned for another
// Tune iterations (Tuning reports it).
func (s *Sampler) Escalate() bool {
	if s.late == nil || s.k != 1 || s.probe != nil {
		return false
	}
	ladder := s.late
	s.late = nil
	s.plain = -1
	s.resize(ladder)
	return true
}

// resize moves every chain to a new ladder: the replica at each new level
// starts from the state of the old level nearest in β; the shadow replica
// and the pilot end; swap sums and round trips restart, and a ladder of
// more than one temperature is tuned for another Tune iterations.
func (s *Sampler) resize(ladder []float64) {
	k := len(ladder)
	nearest := make([]int, k)
	for j, b := range ladder {
		best := 0
		for l, ob := range s.ladder {
			if math.Abs(ob-b) < math.Abs(s.ladder[best]-b) {
				best = l
			}
		}
		nearest[j] = best
	}
	row := make([]int, s.d)
	for c := range s.chains {
		ch := &s.chains[c]
		perm := make([]int, k)
		var spins []uint8
		var reps []rbmReplica
		var trs []model.Tracker
		switch {
		case s.rbm != nil:
			reps = make([]rbmReplica, k)
		case s.spin != nil:
			spins = make([]uint8, k*s.d)
		default:
			trs = make([]model.Tracker, k)
		}
		for j := range k {
			perm[j] = j
			rep := ch.perm[nearest[j]]
			switch {
			case s.rbm != nil:
				s.replicaState(ch, rep, row)
				reps[j] = s.rbm.newReplica(row)
			case s.spin != nil:
				copy(spins[j*s.d:(j+1)*s.d], ch.spins[rep*s.d:(rep+1)*s.d])
			default:
				trs[j] = model.NewTracker(s.m, ch.tr[rep].State())
			}
		}
		ll := make([]float64, k)
		for j := range k {
			ll[j] = ch.ll[ch.perm[nearest[j]]]
		}
		ch.perm, ch.spins, ch.reps, ch.tr = perm, spins, reps, trs
		ch.ll, ch.acc, ch.trip, ch.trips = ll, make([]float64, max(k-1, 0)), make([]int8, k), 0
	}
	s.k, s.ladder, s.shadow, s.pilot = k, slices.Clone(ladder), 0, nil
	s.attempts, s.rate = make([]int64, max(k-1, 0)), make([]float64, max(k-1, 0))
	if s.spin != nil {
		s.spin = newSpinKernel(s.spinModel, k)
	}
	if s.cluster != nil {
		// Built from a model whose couplings were checked: no error.
		s.cluster, _ = sw.NewKernel(s.d, s.edges, s.spin.H, k)
	}
	if s.pcluster != nil {
		pm := s.m.(*potts.Potts)
		s.pcluster, _ = sw.NewPottsKernel(s.d, pm.Q(), pm.Edges(), pm.Fields(), k)
	}
	s.fillKernels()
	s.tune = nil
	if k > 1 {
		s.tune = newTunerAt(s.iter, s.iter+s.tuneLen, k)
	}
}
