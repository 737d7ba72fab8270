#!/usr/bin/env python3
"""Run `dstein sample` over many seeds on a model with exact means and score it.

Usage: scripts/seeds.py DSTEIN MODEL.json SEEDS [sample flags...]

For each seed 1..SEEDS it runs `DSTEIN sample --model MODEL.json --seed S
--json ... [flags]` and compares the means with the exact ones (`DSTEIN
exact`). A run is *wrong* when its summed squared error of the means exceeds
the 99% quantile of that of 1000 exact draws (frequencies; 300 runs of
`--method exact --n 1000 --estimates frequencies`). It prints the MSE of the
means over that of 1000 exact draws, the wrong runs and how many of them
warned (R̂, ESS, a limit reached, or parallel tempering's ladder too short for
its barrier), the runs that warned, the share of
variables whose 90% interval holds the exact mean in the runs that did not
warn (issue 27's targets), and the mean wall time of a run (the summary's
`seconds`) with the wall time it would need to reach the MSE of 1000 exact
draws if its MSE fell as 1/time (wall × the MSE ratio).

With SEEDS_REF=analytic in the environment the 300 exact runs are skipped
(for models whose exact sampling is slow, such as RBMs with many hidden
units): the MSE of 1000 exact draws is then its expectation for ±1
variables, Σ (1 − m_i²)/1000, and wrong runs are not counted.
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    dstein, model, seeds, flags = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    tmp = tempfile.mkdtemp()
    out = os.path.join(tmp, "o.json")
    subprocess.run([dstein, "exact", "--model", model, "--json", out], stdout=subprocess.DEVNULL, check=True)
    exact = json.load(open(out))["means"]

    def sse(flags, seed):
        subprocess.run([dstein, "sample", "--model", model, "--seed", str(seed), "--json", out] + flags,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        d = json.load(open(out))
        return sum((a - b) ** 2 for a, b in zip(d["mean"], exact)), d

    if os.environ.get("SEEDS_REF") == "analytic":
        q99, ref_mean = float("inf"), sum(1 - m * m for m in exact) / 1000
    else:
        ref = sorted(sse(["--method", "exact", "--n", "1000", "--estimates", "frequencies"], s)[0] for s in range(1, 301))
        q99, ref_mean = ref[296], sum(ref) / len(ref)
    rows = []
    for s in range(1, seeds + 1):
        e, d = sse(flags, s)
        q = {x["name"]: x for x in d["error_bars"]["quantities"]}
        cov = [q["z%d" % i]["ci90"][0] <= exact[i] <= q["z%d" % i]["ci90"][1] for i in range(len(exact)) if "z%d" % i in q]
        warned = any(w.startswith(("R̂", "ESS", "the run reached", "pt:")) for w in d["error_bars"]["warnings"])
        rows.append((e, warned, sum(cov) / max(len(cov), 1), d["seconds"]))
    wrong = [r for r in rows if r[0] > q99]
    clean = [r for r in rows if not r[1]]
    print("flags: %s" % " ".join(flags))
    print("exact draws: mean SSE %.4g, 99%% quantile %.4g (300 runs of 1000)" % (ref_mean, q99))
    ratio = sum(r[0] for r in rows) / len(rows) / ref_mean
    wall = sum(r[3] for r in rows) / len(rows)
    print("MSE over exact draws: %.3g" % ratio)
    print("wall time: %.3g s a run; to reach the MSE of 1000 exact draws: %.3g s" % (wall, wall * ratio))
    print("wrong runs: %d of %d, %d of them warned; runs that warned: %d" % (len(wrong), len(rows), sum(r[1] for r in wrong), sum(r[1] for r in rows)))
    print("coverage in runs without warnings: %.3f (%d runs)" % (sum(r[2] for r in clean) / max(len(clean), 1), len(clean)))


if __name__ == "__main__":
    main()
