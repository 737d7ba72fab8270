#!/usr/bin/python3
"""Gibbs sweeps of many chains in PyTorch on a GPU: the peers of dstein's
BenchmarkGibbsSweep (issue 33), written as a user would in a few lines.

- ising: a checkerboard sampler on an L x L torus (L even) with uniform
  coupling J and no field, C chains as a (C, L, L) tensor of +-1: each
  colour's local fields by rolling the lattice, one uniform per site.
- rbm: block Gibbs on an RBM with +-1 units (784 visible, 500 hidden by
  default, W ~ N(0, 0.05^2), biases ~ N(0, 0.1^2)), C chains: h | z then
  z | h, each a matrix product and one uniform per unit.

Usage:
  gibbs_torch_gpu.py ising --side 10 --chains 1000000 --dtype float32
  gibbs_torch_gpu.py rbm --chains 10000 --dtype float32
Prints one JSON object: the median milliseconds per sweep, and site
updates per second (ising) or sweeps per second (rbm).
"""

import argparse
import json
import time

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", choices=("ising", "rbm"))
    ap.add_argument("--side", type=int, default=10)
    ap.add_argument("--chains", type=int, default=10000)
    ap.add_argument("--visible", type=int, default=784)
    ap.add_argument("--hidden", type=int, default=500)
    ap.add_argument("--coupling", type=float, default=0.4)
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float32")
    ap.add_argument("--time", type=int, default=20, metavar="R", help="timed sweeps")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", default="cuda", help="cuda, or cpu to check the script")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device(args.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    dt = getattr(torch, args.dtype)
    torch.manual_seed(1)
    if args.model == "ising":
        L, C, J = args.side, args.chains, args.coupling
        if L % 2:
            raise SystemExit("gibbs_torch_gpu.py: the checkerboard needs an even side")
        z = torch.where(torch.rand(C, L, L, device=dev) < 0.5, 1.0, -1.0).to(dt)
        ii, jj = torch.meshgrid(torch.arange(L, device=dev), torch.arange(L, device=dev), indexing="ij")
        masks = [((ii + jj) % 2 == k).to(dt) for k in (0, 1)]

        def sweep():
            for m in masks:
                f = J * (z.roll(1, 1) + z.roll(-1, 1) + z.roll(1, 2) + z.roll(-1, 2))
                p = torch.sigmoid(2.0 * f)
                new = torch.where(torch.rand(C, L, L, device=dev, dtype=dt) < p, 1.0, -1.0).to(dt)
                z.mul_(1 - m).add_(new * m)

        per_sweep = float(L * L * C)
    else:
        C, D, M = args.chains, args.visible, args.hidden
        W = (0.05 * torch.randn(D, M, device=dev)).to(dt)
        b = (0.1 * torch.randn(D, device=dev)).to(dt)
        c = (0.1 * torch.randn(M, device=dev)).to(dt)
        z = torch.where(torch.rand(C, D, device=dev) < 0.5, 1.0, -1.0).to(dt)

        def sweep():
            h = torch.where(torch.rand(C, M, device=dev, dtype=dt) < torch.sigmoid(2.0 * (z @ W + c)), 1.0, -1.0).to(dt)
            z.copy_(torch.where(torch.rand(C, D, device=dev, dtype=dt) < torch.sigmoid(2.0 * (h @ W.T + b)), 1.0, -1.0))

        per_sweep = 1.0
    with torch.inference_mode():
        for _ in range(args.warmup):
            sweep()
        sync()
        times = []
        for _ in range(args.time):
            t0 = time.perf_counter()
            sweep()
            sync()
            times.append((time.perf_counter() - t0) * 1e3)
    ms = sorted(times)[len(times) // 2]
    res = {"impl": "torch-" + dev.type, "model": args.model, "chains": args.chains, "dtype": args.dtype,
           "torch": torch.__version__, "ms_per_sweep": ms, "all_ms": times}
    if args.model == "ising":
        res["side"] = args.side
        res["site_updates_per_s"] = per_sweep / (ms / 1e3)
    else:
        res["visible"], res["hidden"] = args.visible, args.hidden
        res["sweeps_per_s"] = 1e3 / ms
    print(json.dumps(res))


if __name__ == "__main__":
    main()
