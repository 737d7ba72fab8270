#!/usr/bin/python3
"""One GF-SVGD iteration's direction on an RBM target, in numpy (float64).

Written from the paper's GF-SVGD update (method section, Algorithm 1) and
dstein's documented defaults; it computes the quantity that dstein's
gfsvgd sampler hands to its optimizer:

  RBM      p*(z) ∝ exp(bᵀz + Σ_k log 2cosh((Wᵀz)_k + c_k)),  z ∈ {−1, +1}^d
  Γ        z_i = +1 if x_i ≥ 0 else −1 (even partition of N(0, 1) into 2 bins)
  p_c      p_c(x) ∝ p0(x) p*(Γ(x)),  p0 = N(0, I)
  ρ        ρ(x) = p0(x) p̃*(u(x)): the soft memberships of the two bins are
           m+ = σ(x/τ), m− = σ(−x/τ) (each floored at 1e-300), the soft spin
           u = m+ − m− = tanh(x/(2τ)), and p̃* is the RBM's formula at u
  score    ∇log ρ(x) = −x + 2 σ'(x) ⊙ (b + W tanh(Wᵀu + c)),
           σ'(x) = σ(x/τ) σ(−x/τ)/τ (the derivative of m+; m− has −σ')
  weights  log w_j = log p̃*(u(x_j)) − log p*(Γ(x_j)) = log ρ/p_c + const,
           w = softmax(log w) (self-normalised: Σ_j w_j = 1)
  kernel   k(x, y) = exp(−‖x − y‖²/h), h = med²/log(n+1), med² the median of
           ‖x_i − x_j‖² over the n(n−1)/2 distinct pairs (mean of the two
           middle values for an even count); h = 1 if that is not > 0
  Δx_i     Σ_j w_j [k(x_j, x_i) ∇log ρ(x_j) + ∇_{x_j} k(x_j, x_i)]
         = Σ_j a_ij s_j + (2/h) (x_i Σ_j a_ij − Σ_j a_ij x_j),  a_ij = k_ij w_j

The weights already sum to one, so there is no further division by Σ w_j
(nor the paper's 1/n, which dstein folds into the step size).

Usage:
  gfsvgd_numpy.py PROBLEM.npz --check           compare with dstein's direction
  gfsvgd_numpy.py PROBLEM.npz --time 20         median ms per iteration
Prints one JSON object. BLAS threads: OPENBLAS_NUM_THREADS/OMP_NUM_THREADS
(default 2, set here before numpy is imported).
"""

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "2")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

MIN_MEMBERSHIP = 1e-300


def sigmoid(a):
    """1/(1+e^(−a)) without overflow, elementwise."""
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def log2cosh(a):
    a = np.abs(a)
    return a + np.log1p(np.exp(-2.0 * a))


def score_and_weights(W, b, c, tau, X):
    """Surrogate scores S (n×d) and normalised weights w (n) at X."""
    a = X / tau
    sp, sm = sigmoid(a), sigmoid(-a)
    U = np.maximum(sp, MIN_MEMBERSHIP) - np.maximum(sm, MIN_MEMBERSHIP)
    dm = sp * sm / tau
    pre = U @ W + c  # n×M hidden preactivations at the soft spins
    G = b + np.tanh(pre) @ W.T  # ∂ log p̃*/∂u, n×d
    S = -X + 2.0 * dm * G
    Z = np.where(X >= 0, 1.0, -1.0)  # Γ(x) as spins
    log_relaxed = U @ b + log2cosh(pre).sum(axis=1)
    log_target = Z @ b + log2cosh(Z @ W + c).sum(axis=1)
    logw = log_relaxed - log_target
    w = np.exp(logw - logw.max())
    w /= w.sum()
    return S, w


def svgd_direction(X, S, w):
    """The kernel with dstein's default bandwidth and the direction."""
    n = X.shape[0]
    sq = np.einsum("ij,ij->i", X, X)
    D2 = sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)
    np.maximum(D2, 0.0, out=D2)
    iu = np.triu_indices(n, 1)
    med2 = np.median(D2[iu]) if n > 1 else 0.0
    h = med2 / np.log(n + 1.0)
    if not h > 0:
        h = 1.0
    K = np.exp(-D2 / h)
    np.fill_diagonal(K, 1.0)
    A = K * w[None, :]
    phi = A @ S + (2.0 / h) * (A.sum(axis=1)[:, None] * X - A @ X)
    return phi, h


def full(W, b, c, tau, X):
    S, w = score_and_weights(W, b, c, tau, X)
    phi, h = svgd_direction(X, S, w)
    return phi, h, S, w


def blas_library():
    """The BLAS shared library this process has loaded (from its maps)."""
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1]
                if "blas" in p.lower() or "mkl" in p.lower():
                    libs.add(os.path.realpath(p))
    except OSError:
        pass
    return sorted(libs)


def rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("problem")
    ap.add_argument("--check", action="store_true", help="compare with the file's direction")
    ap.add_argument("--tol", type=float, default=1e-10, help="relative tolerance of --check")
    ap.add_argument("--time", type=int, default=0, metavar="R", help="timed repetitions")
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()

    f = np.load(args.problem)
    W, b, c, X = (np.ascontiguousarray(f[k], dtype=np.float64) for k in ("W", "b", "c", "X"))
    tau = float(f["tau"])
    n, d = X.shape
    res = {"impl": "numpy", "n": n, "d": d, "numpy": np.__version__,
           "threads": os.environ["OPENBLAS_NUM_THREADS"]}
    phi, h, S, w = full(W, b, c, tau, X)
    res["h"] = h
    ok = True
    if args.check:
        res["rel_diff"] = rel(phi, f["direction"])
        res["rel_diff_score"] = rel(S, f["score"])
        res["rel_diff_weights"] = rel(w, f["weights"])
        res["rel_diff_h"] = abs(h - float(f["h"])) / float(f["h"])
        ok = res["rel_diff"] <= args.tol
    if args.time > 0:
        for _ in range(args.warmup):
            full(W, b, c, tau, X)
        t_full = []
        for _ in range(args.time):
            t0 = time.perf_counter()
            full(W, b, c, tau, X)
            t_full.append((time.perf_counter() - t0) * 1e3)
        for _ in range(args.warmup):
            svgd_direction(X, S, w)
        t_dir = []
        for _ in range(args.time):
            t0 = time.perf_counter()
            svgd_direction(X, S, w)
            t_dir.append((time.perf_counter() - t0) * 1e3)
        res["full_ms"], res["direction_ms"] = float(np.median(t_full)), float(np.median(t_dir))
        res["full_all_ms"], res["direction_all_ms"] = t_full, t_dir
    res["blas"] = blas_library()
    print(json.dumps(res))
    if not ok:
        print("gfsvgd_numpy.py: direction differs from dstein's by %.3g (relative) > %g"
              % (res["rel_diff"], args.tol), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
