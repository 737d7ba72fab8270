#!/usr/bin/python3
"""One GF-SVGD iteration's direction on an RBM target, in PyTorch on the CPU
(float64, torch.set_num_threads(2) unless --threads says otherwise).

It computes the same quantity as gfsvgd_numpy.py (see its docstring for
the equations): the relaxed surrogate's scores at temperature τ, the
self-normalised weights ρ/p_c, the RBF kernel with h = med²/log(n+1) over
the distinct pairs, and Δx_i = Σ_j w_j [k(x_j, x_i) ∇log ρ(x_j) +
∇_{x_j} k(x_j, x_i)]. The scores are written out by hand (no autograd),
as in dstein. torch.median returns the lower middle value, so the median
of an even count is taken with two kthvalue calls and averaged, as dstein
and numpy do.

Usage:
  gfsvgd_torch.py PROBLEM.npz --check
  gfsvgd_torch.py PROBLEM.npz --time 20
Prints one JSON object.
"""

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "2")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

MIN_MEMBERSHIP = 1e-300


def log2cosh(a):
    a = a.abs()
    return a + torch.log1p(torch.exp(-2.0 * a))


def score_and_weights(W, b, c, tau, X):
    a = X / tau
    sp, sm = torch.sigmoid(a), torch.sigmoid(-a)
    U = sp.clamp_min(MIN_MEMBERSHIP) - sm.clamp_min(MIN_MEMBERSHIP)
    dm = sp * sm / tau
    pre = U @ W + c
    G = b + torch.tanh(pre) @ W.T
    S = -X + 2.0 * dm * G
    Z = torch.where(X >= 0, 1.0, -1.0).to(X.dtype)
    log_relaxed = U @ b + log2cosh(pre).sum(dim=1)
    log_target = Z @ b + log2cosh(Z @ W + c).sum(dim=1)
    logw = log_relaxed - log_target
    w = torch.exp(logw - logw.max())
    w = w / w.sum()
    return S, w


def median_pairs(D2):
    """Median of the strict upper triangle of D2 (mean of the two middle
    values for an even count)."""
    n = D2.shape[0]
    if n < 2:
        return 0.0
    iu = torch.triu_indices(n, n, 1)
    v = D2[iu[0], iu[1]]
    m = v.numel()
    lo = torch.kthvalue(v, (m - 1) // 2 + 1).values
    hi = lo if m % 2 == 1 else torch.kthvalue(v, m // 2 + 1).values
    return float((lo + hi) / 2)


def svgd_direction(X, S, w):
    n = X.shape[0]
    sq = (X * X).sum(dim=1)
    D2 = (sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)).clamp_min_(0.0)
    h = median_pairs(D2) / math.log(n + 1.0)
    if not h > 0:
        h = 1.0
    K = torch.exp(-D2 / h)
    K.fill_diagonal_(1.0)
    A = K * w[None, :]
    phi = A @ S + (2.0 / h) * (A.sum(dim=1)[:, None] * X - A @ X)
    return phi, h


def full(W, b, c, tau, X):
    S, w = score_and_weights(W, b, c, tau, X)
    phi, h = svgd_direction(X, S, w)
    return phi, h, S, w


def blas_library():
    """The BLAS shared libraries this process has loaded (from its maps)."""
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                p = line.split()[-1]
                if any(k in p.lower() for k in ("blas", "mkl", "dnnl")):
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
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    f = np.load(args.problem)
    W, b, c, X = (torch.from_numpy(np.ascontiguousarray(f[k], dtype=np.float64)) for k in ("W", "b", "c", "X"))
    tau = float(f["tau"])
    n, d = X.shape
    res = {"impl": "torch", "n": n, "d": d, "torch": torch.__version__,
           "threads": torch.get_num_threads()}
    with torch.inference_mode():
        phi, h, S, w = full(W, b, c, tau, X)
        res["h"] = h
        ok = True
        if args.check:
            res["rel_diff"] = rel(phi.numpy(), f["direction"])
            res["rel_diff_score"] = rel(S.numpy(), f["score"])
            res["rel_diff_weights"] = rel(w.numpy(), f["weights"])
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
        print("gfsvgd_torch.py: direction differs from dstein's by %.3g (relative) > %g"
              % (res["rel_diff"], args.tol), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
