#!/usr/bin/python3
"""Independent reference for package diag's golden values.

Written for this project from the definitions of Vehtari, Gelman, Simpson,
Carpenter and Bürkner (2021), "Rank-normalization, folding, and
localization: An improved R-hat for assessing convergence of MCMC",
Bayesian Analysis 16(2), with the conventions that package diag documents
(posterior's loop bounds for Geyer's sequence, the never-NaN rules). It
uses numpy's FFT, scipy's rankdata and ndtri, and numpy's sort, so the Go
code's radix sort, merged folding, normal-score table and gonum FFT are
checked against different machinery.

Run from this directory with Debian's python3 (python3-numpy,
python3-scipy):

    /usr/bin/python3 reference.py

It writes the test sequences (CASE.csv: one column per chain, one row per
draw, shortest round-trip decimals) and golden.csv, which
golden_test.go compares with to 1e-9. ArviZ was not installable here (no
package index reachable), so this script is the only reference.
"""

import csv
import math

import numpy as np
from scipy.special import ndtri
from scipy.stats import rankdata


def split(x):
    """Halves of every chain as chains: first halves, then second halves."""
    n = x.shape[1]
    h = n // 2
    return np.concatenate([x[:, :h], x[:, n - h:]], axis=0)


def z_scale(y):
    S = y.size
    r = rankdata(y.ravel(), method="average").reshape(y.shape)
    return ndtri((r - 0.375) / (S + 0.25))


def row_stats(y):
    """Per-row means and a flag of constant rows (mean = the value)."""
    const = np.ptp(y, axis=1) == 0
    means = np.where(const, y[:, 0], y.mean(axis=1))
    return means, const


def var_of(v):
    return 0.0 if np.all(v == v[0]) else float(np.var(v, ddof=1))


def rhat_of(y):
    k, h = y.shape
    means, const = row_stats(y)
    W = float(np.mean(np.where(const, 0.0, y.var(axis=1, ddof=1))))
    vb = var_of(means)
    if W == 0:
        return 1.0 if vb == 0 else math.inf
    return math.sqrt((h * vb / W + h - 1) / h)


def ess_of(y):
    k, h = y.shape
    S = k * h
    if np.all(y == y.flat[0]):
        return float(S)
    means, _ = row_stats(y)
    c = y - means[:, None]
    L = 2 * h
    f = np.fft.rfft(c, n=L, axis=1)
    acov = np.fft.irfft(np.abs(f) ** 2, n=L, axis=1)[:, :h] / h
    a = acov.mean(axis=0)
    W = a[0] * h / (h - 1)
    var_plus = W * (h - 1) / h + var_of(means)
    rt = 1 - (W - a) / var_plus

    # Pairs (rho_2j, rho_2j+1); pair j can be examined while 2j <= h-4.
    rho = np.zeros(h)
    rho[0], rho[1] = 1.0, rt[1]
    jmax = (h - 4) // 2
    j_last, even, pair = 0, 1.0, 1.0 + rt[1]
    for j in range(1, jmax + 1):
        if not pair > 0:
            break
        even, pair = rt[2 * j], rt[2 * j] + rt[2 * j + 1]
        j_last = j
        if pair >= 0:
            rho[2 * j], rho[2 * j + 1] = rt[2 * j], rt[2 * j + 1]
    T = 2 * j_last
    if even > 0:
        rho[T] = even
    for j in range(1, j_last):
        prev = rho[2 * j - 2] + rho[2 * j - 1]
        if rho[2 * j] + rho[2 * j + 1] > prev:
            rho[2 * j] = rho[2 * j + 1] = prev / 2
    if j_last == 0 and pair > 0:
        tau = 1 + 2 * rho[1]
    else:
        tau = -1 + 2 * rho[:T].sum() + rho[T]
    tau = max(tau, 1 / math.log10(S))
    return S / tau


def quantile7(s, p):
    h = (len(s) - 1) * p
    lo = int(math.floor(h))
    frac = h - lo
    if lo + 1 >= len(s) or frac == 0 or s[lo] == s[lo + 1]:
        return s[lo]
    return s[lo] + frac * (s[lo + 1] - s[lo])


def summary(x):
    # Every diagnostic is unchanged by scaling the draws, the mean and SD
    # scale with them: work with draws scaled by a power of two (exact) so
    # that squares neither overflow nor underflow.
    scale = 2.0 ** -math.frexp(float(np.max(np.abs(x))))[1] if np.any(x) else 1.0
    x = x * scale
    y = split(x)
    allx = x.ravel()
    out = {}
    out["mean"] = float(np.mean(allx)) / scale
    out["sd"] = float(np.std(allx, ddof=1)) / scale
    out["ess_mean"] = ess_of(y)
    out["mcse"] = out["sd"] / math.sqrt(out["ess_mean"])
    zb = z_scale(y)
    out["ess_bulk"] = ess_of(zb)
    out["rhat_bulk"] = rhat_of(zb)
    out["rhat_folded"] = rhat_of(z_scale(split(np.abs(x - np.median(allx)))))
    out["rhat"] = max(out["rhat_bulk"], out["rhat_folded"])
    s = np.sort(allx)
    tail = math.inf
    for p in (0.05, 0.95):
        ind = (y <= quantile7(s, p)).astype(float)
        e = out["ess_bulk"] if (ind.all() or not ind.any()) else ess_of(ind)
        tail = min(tail, e)
    out["ess_tail"] = tail
    return out


def ar1(rng, m, n, phi):
    x = np.empty((m, n))
    x[:, 0] = rng.standard_normal(m)
    for i in range(1, n):
        x[:, i] = phi * x[:, i - 1] + math.sqrt(1 - phi * phi) * rng.standard_normal(m)
    return x


def sticky(rng, m, n, values, stay):
    """A chain on few values that keeps its value with probability stay."""
    x = np.empty((m, n))
    x[:, 0] = rng.choice(values, m)
    for i in range(1, n):
        move = rng.random(m) >= stay
        x[:, i] = np.where(move, rng.choice(values, m), x[:, i - 1])
    return x


def cases():
    rng = np.random.default_rng(20210301)
    c = {}
    c["ar07"] = ar1(rng, 4, 200, 0.7)
    c["discrete"] = sticky(rng, 4, 150, np.array([0.0, 1.0, 2.0]), 0.6)
    c["bernoulli"] = (rng.random((3, 101)) < 0.3).astype(float)
    c["single"] = np.exp(ar1(rng, 1, 301, 0.3))
    sc = rng.standard_normal((4, 100))
    sc[0] *= 3
    c["scale"] = sc
    sh = rng.standard_normal((4, 100))
    sh[0] += 1
    c["shift"] = sh
    c["stuck"] = np.repeat(np.array([[0.0], [1.0], [1.0], [2.5]]), 50, axis=1)
    c["short"] = ar1(rng, 2, 9, 0.5)
    c["antithetic"] = ar1(rng, 2, 64, -0.9)
    c["constant"] = np.full((2, 10), 3.5)
    c["heavy"] = 1e200 * rng.standard_cauchy((4, 250))
    c["slow"] = ar1(rng, 4, 401, 0.97)
    return c


def main():
    fields = ["mean", "sd", "mcse", "ess_mean", "ess_bulk", "ess_tail",
              "rhat", "rhat_bulk", "rhat_folded"]
    with open("golden.csv", "w", newline="") as g:
        gw = csv.writer(g, lineterminator="\n")
        gw.writerow(["case"] + fields)
        for name, x in cases().items():
            with open(name + ".csv", "w", newline="") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow(["chain%d" % i for i in range(x.shape[0])])
                for row in x.T:
                    w.writerow([repr(float(v)) for v in row])
            s = summary(x)
            gw.writerow([name] + [repr(s[k]) for k in fields])


if __name__ == "__main__":
    main()
