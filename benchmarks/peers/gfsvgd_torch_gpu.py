#!/usr/bin/python3
"""One GF-SVGD iteration on an RBM target in PyTorch on a GPU: the peer of
dstein's `gpu` package (BenchmarkSVGDStep) for issue 33.

The iteration is the one gfsvgd_torch.py writes out (the relaxed
surrogate's scores at temperature tau, self-normalised weights rho/p_c, the
RBF kernel with h = med^2/log(n+1) over the distinct pairs, the direction
sum_j w_j [k(x_j, x_i) grad log rho(x_j) + grad_{x_j} k(x_j, x_i)]) followed by
an Adam step, as dstein's GPU iteration is. The RBM has M = 25 hidden
units, W ~ N(0, 0.3^2) and biases ~ N(0, 0.2^2), the particles N(0, 1):
the sizes of dstein's benchmark, not its numbers (timing only; dstein's
GPU results are checked against its CPU path by its own tests). TF32 is
off, so float32 products are float32's.

Usage:
  gfsvgd_torch_gpu.py --n 1000 --d 1000 --dtype float64 --time 20
Prints one JSON object: the median milliseconds per iteration and each
repetition's.
"""

import argparse
import json
import math
import time

import torch

MIN_MEMBERSHIP = {torch.float64: 1e-300, torch.float32: 1e-30}


def log2cosh(a):
    a = a.abs()
    return a + torch.log1p(torch.exp(-2.0 * a))


def scores_weights(W, b, c, tau, X):
    a = X / tau
    sp, sm = torch.sigmoid(a), torch.sigmoid(-a)
    lo = MIN_MEMBERSHIP[X.dtype]
    U = sp.clamp_min(lo) - sm.clamp_min(lo)
    pre = U @ W + c
    S = -X + 2.0 * (sp * sm / tau) * (b + torch.tanh(pre) @ W.T)
    Z = torch.where(X >= 0, 1.0, -1.0).to(X.dtype)
    logw = (U @ b + log2cosh(pre).sum(dim=1)) - (Z @ b + log2cosh(Z @ W + c).sum(dim=1))
    w = torch.exp(logw - logw.max())
    return S, w / w.sum()


def median_distinct(D2):
    n = D2.shape[0]
    iu = torch.triu_indices(n, n, 1, device=D2.device)
    v = D2[iu[0], iu[1]]
    m = v.numel()
    lo = torch.kthvalue(v, (m - 1) // 2 + 1).values
    hi = lo if m % 2 == 1 else torch.kthvalue(v, m // 2 + 1).values
    return (lo + hi) / 2


def direction(X, S, w):
    n = X.shape[0]
    sq = (X * X).sum(dim=1)
    D2 = (sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)).clamp_min_(0.0)
    h = median_distinct(D2) / math.log(n + 1.0)
    K = torch.exp(-D2 / h)
    K.fill_diagonal_(1.0)
    A = K * w[None, :]
    return A @ S + (2.0 / h) * (A.sum(dim=1)[:, None] * X - A @ X)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--d", type=int, default=1000)
    ap.add_argument("--m", type=int, default=25)
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    ap.add_argument("--time", type=int, default=20, metavar="R", help="timed iterations")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", default="cuda", help="cuda, or cpu to check the script")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device(args.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    dt = getattr(torch, args.dtype)
    g = torch.Generator(device="cpu").manual_seed(1)
    W = (0.3 * torch.randn(args.d, args.m, generator=g, dtype=torch.float64)).to(dev, dt)
    b = (0.2 * torch.randn(args.d, generator=g, dtype=torch.float64)).to(dev, dt)
    c = (0.2 * torch.randn(args.m, generator=g, dtype=torch.float64)).to(dev, dt)
    X = torch.randn(args.n, args.d, generator=g, dtype=torch.float64).to(dev, dt)
    tau, lr, b1, b2, eps = 0.25, 0.1, 0.9, 0.999, 1e-8
    m1, m2 = torch.zeros_like(X), torch.zeros_like(X)
    it = 0

    def step():
        nonlocal it
        S, w = scores_weights(W, b, c, tau, X)
        g = direction(X, S, w)
        it += 1
        m1.mul_(b1).add_((1 - b1) * g)
        m2.mul_(b2).add_((1 - b2) * g * g)
        X.add_(lr * (m1 / (1 - b1 ** it)) / ((m2 / (1 - b2 ** it)).sqrt() + eps))

    with torch.inference_mode():
        for _ in range(args.warmup):
            step()
        sync()
        times = []
        for _ in range(args.time):
            t0 = time.perf_counter()
            step()
            sync()
            times.append((time.perf_counter() - t0) * 1e3)
    times_sorted = sorted(times)
    print(json.dumps({"impl": "torch-" + dev.type, "n": args.n, "d": args.d, "m": args.m, "dtype": args.dtype,
                      "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0) if dev.type == "cuda" else "none",
                      "ms": times_sorted[len(times) // 2], "all_ms": times}))


if __name__ == "__main__":
    main()
