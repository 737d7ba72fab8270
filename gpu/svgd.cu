// GF-SVGD on an RBM with ±1 units over the binary transform (one cut per
// coordinate, the normal base), the relaxed surrogate and the RBF kernel:
// the kernels of one iteration besides cuBLAS's matrix products. Compiled
// at run time by NVRTC with -DDSTEIN_F32=0 (double) or 1 (float); each
// kernel computes what sampler/gfsvgd, transform and model/rbm compute on
// the CPU, in the same order of operations where the CPU's order is
// fixed (the comments name the Go code). One thread per output element;
// no shared memory and no barriers, so that the same source runs on the
// host, one thread after another, in the tests of machines without a GPU.

#if DSTEIN_F32
typedef float real;
typedef unsigned int rkey;
#define MIN_MEMBERSHIP 1e-30f
#define EXP_MIN -104.0f
static __device__ __forceinline__ rkey key_of(real v) { return __float_as_uint(v); }
#else
typedef double real;
typedef unsigned long long rkey;
#define MIN_MEMBERSHIP 1e-300
#define EXP_MIN -746.0
static __device__ __forceinline__ rkey key_of(real v) { return (rkey)__double_as_longlong(v); }
#endif

#define LOG_SQRT_2PI 0.91893853320467274178032973640561763986139747363778

static __device__ __forceinline__ long long flat_index() {
	return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}

// relax: for each coordinate e = j·d + i of the n×d particles x, the
// soft memberships of its two bins at temperature tau
// (transform.SoftBins.rowMemberships): u = m₊ − m₋ into row j of us, their
// derivative's size dl = L(1−L)/τ, and the spin of Γ(x) (−1 below the cut,
// +1 from it) into row n + j of us.
extern "C" __global__ void relax(int n, int d, const real *__restrict__ x, const real *__restrict__ cut,
		real tau, real *__restrict__ us, real *__restrict__ dl) {
	long long e = flat_index();
	if (e >= (long long)n * d) return;
	int i = (int)(e % d);
	real v = x[e];
	real a = (v - cut[i]) / tau;
	real ex = exp(-fabs(a));
	real big = 1 / (1 + ex), small = ex / (1 + ex);
	real l = a >= 0 ? big : small;
	real lc = a >= 0 ? small : big;
	real m0 = lc;
	real m1 = l < (real)0.5 ? l : 1 - lc;
	if (!(m0 >= MIN_MEMBERSHIP)) m0 = MIN_MEMBERSHIP;
	if (!(m1 >= MIN_MEMBERSHIP)) m1 = MIN_MEMBERSHIP;
	us[e] = m1 - m0;
	dl[e] = l * lc / tau;
	us[(long long)n * d + e] = v < cut[i] ? -1 : 1;
}

// hidden: tanh of the relaxed points' hidden preactivations,
// th = tanh(A + c) for the first n rows of the 2n×M products A.
extern "C" __global__ void hidden(int n, int m, const real *__restrict__ pre, const real *__restrict__ c,
		real *__restrict__ th) {
	long long e = flat_index();
	if (e >= (long long)n * m) return;
	th[e] = tanh(pre[e] + c[e % m]);
}

static __device__ __forceinline__ double log2cosh(double a) {
	a = fabs(a);
	return a + log1p(exp(-2 * a));
}

// rowstats: per particle j, the log weight log ρ/p_c in double
// (gfsvgd's evalParticle): the relaxation's value f = b·u + Σ_k log 2cosh(a_k)
// (rbm's RelaxedLogProbs), the surrogate's log ρ = f + log p0(x)
// (RelaxedSurrogate.chain), log p0(x) again (Transform.LogBase), and
// log p*(Γ(x)) = b·s + Σ_k log 2cosh(s·W + c) (rbm's LogProbs), then
// logw = (log ρ − log p0) − log p*.
extern "C" __global__ void rowstats(int n, int d, int m, const real *__restrict__ x, const real *__restrict__ us,
		const real *__restrict__ pre, const real *__restrict__ b, const real *__restrict__ c, double *__restrict__ logw) {
	long long j = flat_index();
	if (j >= n) return;
	const real *xj = x + j * d, *uj = us + j * d, *sj = us + ((long long)n + j) * d;
	const real *aj = pre + j * m, *tj = pre + ((long long)n + j) * m;
	double f = 0;
	for (int i = 0; i < d; i++) f += (double)b[i] * (double)uj[i];
	for (int k = 0; k < m; k++) f += log2cosh((double)aj[k] + (double)c[k]);
	double lr = f, base = 0;
	for (int i = 0; i < d; i++) {
		double v = xj[i];
		double lb = -0.5 * v * v - LOG_SQRT_2PI;
		lr += lb;
		base += lb;
	}
	double lp = 0;
	for (int i = 0; i < d; i++) lp += (double)b[i] * (double)sj[i];
	for (int k = 0; k < m; k++) lp += log2cosh((double)tj[k] + (double)c[k]);
	logw[j] = (lr - base) - lp;
}

// scores: the surrogate's score at every coordinate
// (RelaxedSurrogate.chain): −x (the normal base's) plus the relaxation's
// gradient v = b_i + (tanh(A)·Wᵀ)_ji through both memberships'
// derivatives, −dl and +dl, whose gradients are −v and +v; a score that
// is not finite sets flag.
extern "C" __global__ void scores(int n, int d, const real *__restrict__ x, const real *__restrict__ dl,
		const real *__restrict__ b, const real *__restrict__ g, real *__restrict__ s, int *__restrict__ flag) {
	long long e = flat_index();
	if (e >= (long long)n * d) return;
	real v = b[e % d] + g[e];
	real dm = dl[e];
	real sc = -x[e];
	if (dm != 0) {
		sc += v * dm;
		sc += v * dm;
	}
	s[e] = sc;
	if (!isfinite(sc)) atomicOr(flag, 1);
}

// norms: the squared norm of each particle (kernel.RBF's normsTask).
extern "C" __global__ void norms(int n, int d, const real *__restrict__ x, real *__restrict__ nrm) {
	long long j = flat_index();
	if (j >= n) return;
	real s = 0;
	for (int i = 0; i < d; i++) {
		real v = x[j * d + i];
		s += v * v;
	}
	nrm[j] = s;
}

// sqdist: the squared distances from the Gram matrix in k, in place
// (kernel.RBF's distTask): for i > j, max(‖x_i‖² + ‖x_j‖² − 2 g_ij, 0)
// written at (i, j) and (j, i), so that the matrix is exactly symmetric;
// zeros on the diagonal. The thread of (i, j) reads only (i, j).
extern "C" __global__ void sqdist(int n, const real *__restrict__ nrm, real *k) {
	long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long i = (long long)blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= n || j >= n || j > i) return;
	if (i == j) {
		k[i * n + i] = 0;
		return;
	}
	real v = nrm[i] + nrm[j] - 2 * k[i * n + j];
	if (v < 0) v = 0;
	k[i * n + j] = v;
	k[j * n + i] = v;
}

// hist: one pass of the radix selection of the median of the distinct
// pairs' squared distances (the strict lower triangle of k): the pairs
// whose bits agree with val under mask are counted by their 16 bits
// at shift.
extern "C" __global__ void hist(int n, const real *__restrict__ k, unsigned long long mask, unsigned long long val,
		int shift, unsigned *__restrict__ counts) {
	long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long i = (long long)blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= n || j >= i) return;
	unsigned long long key = key_of(k[i * n + j]);
	if ((key & mask) != val) return;
	atomicAdd(&counts[(key >> shift) & 0xFFFF], 1u);
}

// hist1: hist over total values of v (the candidates that bracket
// compacted) instead of the matrix.
extern "C" __global__ void hist1(long long total, const real *__restrict__ v, unsigned long long mask,
		unsigned long long val, int shift, unsigned *__restrict__ counts) {
	long long e = flat_index();
	if (e >= total) return;
	unsigned long long key = key_of(v[e]);
	if ((key & mask) != val) return;
	atomicAdd(&counts[(key >> shift) & 0xFFFF], 1u);
}

// gather: s pairs of the strict lower triangle of k, evenly spaced in its
// row order (pair p is (i, j) with i the largest row such that
// i(i−1)/2 ≤ p, and j = p − i(i−1)/2), into out: the sample that brackets
// the median.
extern "C" __global__ void gather(int n, const real *__restrict__ k, long long m, int s, real *__restrict__ out) {
	long long t = flat_index();
	if (t >= s) return;
	long long p = (long long)((double)t * (double)m / (double)s);
	long long i = (long long)((1.0 + sqrt(1.0 + 8.0 * (double)p)) / 2.0);
	while (i * (i - 1) / 2 > p) i--;
	while ((i + 1) * i / 2 <= p) i++;
	out[t] = k[i * n + (p - i * (i - 1) / 2)];
}

// bracket: counts the pairs of the strict lower triangle below lo
// (counts[0]) and copies those in [lo, hi] into cand (counts[1] of them,
// the first cap kept). Thread (x, y) takes column x of rows y·rows …
// y·rows + rows − 1, so that a warp reads consecutive columns, and adds
// its count below lo once.
extern "C" __global__ void bracket(int n, const real *__restrict__ k, int rows, real lo, real hi,
		unsigned long long *__restrict__ counts, real *__restrict__ cand, unsigned long long cap) {
	long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long i0 = ((long long)blockIdx.y * blockDim.y + threadIdx.y) * rows;
	if (j >= n) return;
	unsigned long long below = 0;
	for (long long i = i0 > j + 1 ? i0 : j + 1; i < i0 + rows && i < n; i++) {
		real v = k[i * n + j];
		if (v < lo) {
			below++;
		} else if (v <= hi) {
			unsigned long long pos = atomicAdd(&counts[1], 1ull);
			if (pos < cap) cand[pos] = v;
		}
	}
	if (below) atomicAdd(&counts[0], below);
}

// kexp: the RBF kernel from the squared distances, in place
// (kernel.RBF's expTask): exp(−D/h) off the diagonal (0 where it
// underflows), 1 on it.
extern "C" __global__ void kexp(int n, real *k, real inv) {
	long long e = flat_index();
	if (e >= (long long)n * n) return;
	long long i = e / n, j = e % n;
	if (i == j) {
		k[e] = 1;
		return;
	}
	real a = k[e] * inv;
	k[e] = a > EXP_MIN ? exp(a) : 0;
}

// operand: row j of the direction's right-hand operand, n×(2d+1):
// w_j·s_j, w_j·x_j and w_j (zeros for a particle without weight, whose
// score need not be finite), so that K times it gives Σ_j k_ij w_j s_j,
// Σ_j k_ij w_j x_j and the row sums Σ_j k_ij w_j together.
extern "C" __global__ void operand(int n, int d, const real *__restrict__ s, const real *__restrict__ x,
		const real *__restrict__ w, real *__restrict__ out) {
	long long e = flat_index();
	long long width = 2 * (long long)d + 1;
	if (e >= (long long)n * width) return;
	long long j = e / width, q = e % width;
	real wj = w[j];
	real v = 0;
	if (wj > 0) {
		if (q < d) v = wj * s[j * d + q];
		else if (q < 2 * d) v = wj * x[j * d + q - d];
		else v = wj;
	}
	out[e] = v;
}

// direction: Δx_iq = (K·w·s)_iq + (2/h)(Σ_j k_ij w_j · x_iq − (K·w·x)_iq)
// (svgd's dirTask), from the product p = K·operand (n×(2d+1)).
extern "C" __global__ void direction(int n, int d, const real *__restrict__ p, const real *__restrict__ x,
		real k2, real *__restrict__ dir) {
	long long e = flat_index();
	if (e >= (long long)n * d) return;
	long long i = e / d, q = e % d;
	const real *pi = p + i * (2 * (long long)d + 1);
	dir[e] = pi[q] + k2 * (pi[2 * d] * x[e] - pi[d + q]);
}

// adam: one Adam step along the direction (optim.Adam.Update): the
// moments decay and take in g, x += lr·(m/c1)/(√(v/c2) + ε); |step| into
// step; a position that is not finite sets flag.
extern "C" __global__ void adam(long long total, real *__restrict__ x, const real *__restrict__ g, real *__restrict__ m,
		real *__restrict__ v, real lr, real b1, real b2, real eps, real c1, real c2, real *__restrict__ step,
		int *__restrict__ flag) {
	long long e = flat_index();
	if (e >= total) return;
	real gk = g[e];
	real mk = b1 * m[e] + (1 - b1) * gk;
	real vk = b2 * v[e] + (1 - b2) * gk * gk;
	m[e] = mk;
	v[e] = vk;
	real st = lr * (mk / c1) / (sqrt(vk / c2) + eps);
	real nx = x[e] + st;
	x[e] = nx;
	step[e] = fabs(st);
	if (!isfinite(nx)) atomicOr(flag, 1);
}

// plain: x += lr·g, |step| into step, as adam.
extern "C" __global__ void plain(long long total, real *__restrict__ x, const real *__restrict__ g, real lr,
		real *__restrict__ step, int *__restrict__ flag) {
	long long e = flat_index();
	if (e >= total) return;
	real st = lr * g[e];
	real nx = x[e] + st;
	x[e] = nx;
	step[e] = fabs(st);
	if (!isfinite(nx)) atomicOr(flag, 1);
}

// rowsum: the sum of each row of an n×d matrix, in double.
extern "C" __global__ void rowsum(int n, int d, const real *__restrict__ a, double *__restrict__ out) {
	long long j = flat_index();
	if (j >= n) return;
	double s = 0;
	for (int i = 0; i < d; i++) s += a[j * d + i];
	out[j] = s;
}

// copyto: dst = src, total values.
extern "C" __global__ void copyto(long long total, const real *__restrict__ src, real *__restrict__ dst) {
	long long e = flat_index();
	if (e >= total) return;
	dst[e] = src[e];
}

#ifdef DSTEIN_EMULATE
DSTEIN_EXPORT(relax)
DSTEIN_EXPORT(hidden)
DSTEIN_EXPORT(rowstats)
DSTEIN_EXPORT(scores)
DSTEIN_EXPORT(norms)
DSTEIN_EXPORT(sqdist)
DSTEIN_EXPORT(hist)
DSTEIN_EXPORT(hist1)
DSTEIN_EXPORT(gather)
DSTEIN_EXPORT(bracket)
DSTEIN_EXPORT(kexp)
DSTEIN_EXPORT(operand)
DSTEIN_EXPORT(direction)
DSTEIN_EXPORT(adam)
DSTEIN_EXPORT(plain)
DSTEIN_EXPORT(rowsum)
DSTEIN_EXPORT(copyto)
#endif
