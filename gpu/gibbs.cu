// Gibbs sampling of many independent chains: pairwise models (Ising and
// Potts) by colour classes of a proper colouring of their graph (a
// checkerboard on a grid), and RBMs by blocks (all hidden units given
// the visible ones, then all visible given the hidden). Each update's
// uniform comes from Philox4x32-10 (Salmon et al., SC 2011), a counter-based
// generator: the counter names the chain, the unit, the sweep and the
// phase, the key is the run's, so a draw depends on nothing but those and
// the results are the same on any GPU and in the host emulation. Compiled
// with -DDSTEIN_F32=0 (double) or 1 (float) for the RBM's products; the
// pairwise kernels compute in double. No shared memory, no barriers (see
// svgd.cu).

#if DSTEIN_F32
typedef float real;
#else
typedef double real;
#endif

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

static __device__ __forceinline__ void mulhilo(unsigned a, unsigned b, unsigned *hi, unsigned *lo) {
	unsigned long long p = (unsigned long long)a * b;
	*hi = (unsigned)(p >> 32);
	*lo = (unsigned)p;
}

// philox writes Philox4x32-10 of counter c under key (k0, k1) into c.
static __device__ __forceinline__ void philox(unsigned c[4], unsigned k0, unsigned k1) {
	for (int r = 0; r < 10; r++) {
		unsigned hi0, lo0, hi1, lo1;
		mulhilo(PHILOX_M0, c[0], &hi0, &lo0);
		mulhilo(PHILOX_M1, c[2], &hi1, &lo1);
		unsigned n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
		c[0] = n0;
		c[1] = lo1;
		c[2] = n2;
		c[3] = lo0;
		k0 += PHILOX_W0;
		k1 += PHILOX_W1;
	}
}

// uniform returns a double in (0, 1) from counter (a, b, c, d) under the
// key: the first two words' 53 bits, offset by half a step.
static __device__ __forceinline__ double uniform(unsigned a, unsigned b, unsigned c, unsigned d, unsigned k0, unsigned k1) {
	unsigned ctr[4] = {a, b, c, d};
	philox(ctr, k0, k1);
	unsigned long long bits = ((unsigned long long)ctr[0] << 21) ^ (unsigned long long)(ctr[1] >> 11);
	return ((double)bits + 0.5) * (1.0 / 9007199254740992.0);
}

#define MAX_STATES 64

// colour: one Gibbs update of the sites of one colour class in every
// chain of a Potts model. States are stored site-major, states[i·n + c]
// for site i of chain c (bytes), so that neighbouring threads (chains)
// touch neighbouring bytes. The site's log conditionals are
// fields[i·q + s] plus J·[s = t] for each neighbour j in state t with
// coupling J; the new state is the first s whose cumulative probability
// exceeds the uniform of counter (chain, site, sweep, 0). With beta (not
// null) chain c's log conditionals are multiplied by beta[c]: the
// replicas of parallel tempering, each at its own temperature.
extern "C" __global__ void colour(int n, int count, const int *__restrict__ sites, const int *__restrict__ start,
		const int *__restrict__ nbr, const double *__restrict__ cpl, const double *__restrict__ fields, int q,
		const double *__restrict__ beta, unsigned char *states, unsigned sweep, unsigned k0, unsigned k1) {
	long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (e >= (long long)count * n) return;
	int c = (int)(e % n);
	int i = sites[e / n];
	double lg[MAX_STATES];
	for (int s = 0; s < q; s++) lg[s] = fields[i * q + s];
	for (int k = start[i]; k < start[i + 1]; k++) {
		lg[states[(long long)nbr[k] * n + c]] += cpl[k];
	}
	if (beta)
		for (int s = 0; s < q; s++) lg[s] *= beta[c];
	double top = lg[0];
	for (int s = 1; s < q; s++) top = lg[s] > top ? lg[s] : top;
	double sum = 0;
	for (int s = 0; s < q; s++) {
		lg[s] = exp(lg[s] - top);
		sum += lg[s];
	}
	double u = uniform((unsigned)c, (unsigned)i, sweep, 0u, k0, k1) * sum;
	int pick = q - 1;
	double cum = 0;
	for (int s = 0; s < q - 1; s++) {
		cum += lg[s];
		if (u < cum) {
			pick = s;
			break;
		}
	}
	states[(long long)i * n + c] = (unsigned char)pick;
}

// spins: colour's update for an Ising model (states 0 and 1 for z = ∓1;
// fields[2i + 1] = h_i): with f = h_i + Σ_j J_ij z_j the site takes
// state 0 (z = −1) when the uniform of counter (chain, site, sweep, 0) is
// below σ(−2f), else state 1 (f multiplied by beta[c] when beta is not
// null, as in colour).
extern "C" __global__ void spins(int n, int count, const int *__restrict__ sites, const int *__restrict__ start,
		const int *__restrict__ nbr, const double *__restrict__ cpl, const double *__restrict__ fields,
		const double *__restrict__ beta, unsigned char *states, unsigned sweep, unsigned k0, unsigned k1) {
	long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (e >= (long long)count * n) return;
	int c = (int)(e % n);
	int i = sites[e / n];
	double f = fields[2 * i + 1];
	for (int k = start[i]; k < start[i + 1]; k++) {
		double J = cpl[k];
		f += states[(long long)nbr[k] * n + c] ? J : -J;
	}
	if (beta) f *= beta[c];
	double p0 = 1.0 / (1.0 + exp(2.0 * f));
	states[(long long)i * n + c] = uniform((unsigned)c, (unsigned)i, sweep, 0u, k0, k1) < p0 ? 0 : 1;
}

// energy: log p* of each chain's state (parallel tempering's swaps):
// Σ_{i<j} J_ij z_i z_j + Σ_i h_i z_i for an Ising model (ising = 1,
// fields[2i + 1] = h_i), Σ_{i<j} J_ij [s_i = s_j] + Σ_i h_i(s_i) for a
// Potts model, summed site by site in order.
extern "C" __global__ void energy(int n, int d, const int *__restrict__ start, const int *__restrict__ nbr,
		const double *__restrict__ cpl, const double *__restrict__ fields, int q, int ising,
		const unsigned char *__restrict__ states, double *__restrict__ ll) {
	long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= n) return;
	double e = 0;
	for (int i = 0; i < d; i++) {
		int s = states[(long long)i * n + c];
		e += fields[i * q + s];
		for (int k = start[i]; k < start[i + 1]; k++) {
			int j = nbr[k];
			if (j <= i) continue;
			int t = states[(long long)j * n + c];
			if (ising) e += (s == t) ? cpl[k] : -cpl[k];
			else if (s == t) e += cpl[k];
		}
	}
	ll[c] = e;
}

// units: one block of an RBM's units given the others: unit k of chain c
// takes +1 with probability σ(2β_c(a + bias_k)), a = pre[c·m + k] (the
// product of the other layer with the weights), β_c = beta[c] (1 when beta
// is null: parallel tempering's replicas of the joint have their own),
// from the uniform of counter (chain, unit, sweep, phase); out holds ±1.
extern "C" __global__ void units(int n, int m, const real *__restrict__ pre, const real *__restrict__ bias,
		const double *__restrict__ beta, real *__restrict__ out, unsigned sweep, unsigned phase, unsigned k0, unsigned k1) {
	long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (e >= (long long)n * m) return;
	int c = (int)(e / m), k = (int)(e % m);
	double a = 2.0 * ((double)pre[e] + (double)bias[k]);
	if (beta) a *= beta[c];
	double p = 1.0 / (1.0 + exp(-a));
	out[e] = uniform((unsigned)c, (unsigned)k, sweep, phase, k0, k1) < p ? 1 : -1;
}

// joint: L(z, h) = bᵀz + hᵀ(Wᵀz + c) of each chain c of an RBM, the log
// of its joint density up to a constant, which parallel tempering's swaps
// compare (see sampler/pt's block kernel): z (n×d) and h (n×m) of ±1, preh
// = zW (n×m). One thread per chain, summing in the CPU's order (visible
// units, then hidden).
extern "C" __global__ void joint(int n, int d, int m, const real *__restrict__ z, const real *__restrict__ h,
		const real *__restrict__ preh, const real *__restrict__ b, const real *__restrict__ cb, double *__restrict__ ll) {
	long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= n) return;
	double l = 0;
	for (int i = 0; i < d; i++) l += (double)b[i] * (double)z[c * d + i];
	for (int k = 0; k < m; k++) l += (double)h[c * m + k] * ((double)preh[c * m + k] + (double)cb[k]);
	ll[c] = l;
}

#ifdef DSTEIN_EMULATE
DSTEIN_EXPORT(colour)
DSTEIN_EXPORT(spins)
DSTEIN_EXPORT(energy)
DSTEIN_EXPORT(units)
DSTEIN_EXPORT(joint)
#endif
