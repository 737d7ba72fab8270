#!/usr/bin/env python3
"""Markdown tables from the driver's per-trial TSV (model, variant, n, trial, mse, mmd2, sec, ess)."""
import sys, math, collections
rows = collections.defaultdict(dict)  # (model, variant, n) -> trial -> (mse, mmd, sec)
order = []
for path in sys.argv[1:]:
    for line in open(path):
        m, v, n, t, mse, mmd, sec, ess = line.split('\t')
        key = (m, v, int(n))
        rows[key][int(t)] = (float(mse), float(mmd), float(sec))
        if v not in order:
            order.append(v)

def ratio(a, b):
    r = sum(a) / sum(b)
    T = len(a)
    e = [x - r * y for x, y in zip(a, b)]
    var = sum(x * x for x in e) / max(T - 1, 1)
    return r, math.sqrt(var / T) / (sum(b) / T)

models = sorted({k[0] for k in rows})
ns = sorted({k[2] for k in rows})
for m in models:
    T = ",".join(str(len(rows[(m, 'exact', n)])) for n in ns)
    print(f"\n### {m} ({T} paired trials at n = {','.join(map(str, ns))}; ratio to exact i.i.d. at the same n, ± SE; time as ratio to 500 Gibbs sweeps)\n")
    print("| variant | " + " | ".join(f"n={n} MSE" for n in ns) + " | " + " | ".join(f"n={n} MMD²" for n in ns) + " | time ×Gibbs500 (n=" + ",".join(map(str, ns)) + ") |")
    print("|---|" + "---|" * (2 * len(ns) + 1))
    for v in order:
        cells_mse, cells_mmd, cells_t = [], [], []
        ok = True
        for n in ns:
            a, e, g = rows.get((m, v, n)), rows.get((m, 'exact', n)), rows.get((m, 'gibbs500', n))
            if not a:
                ok = False
                break
            tr = sorted(set(a) & set(e) & set(g))
            rm, sm = ratio([a[t][0] for t in tr], [e[t][0] for t in tr])
            rd, sd = ratio([a[t][1] for t in tr], [e[t][1] for t in tr])
            cells_mse.append(f"{rm:.2f}±{sm:.2f}")
            cells_mmd.append(f"{rd:.2f}±{sd:.2f}")
            ta = sum(a[t][2] for t in tr) / len(tr)
            tg = sum(g[t][2] for t in tr) / len(tr)
            cells_t.append(f"{ta / tg:.2g}")
        if ok:
            print(f"| {v} | " + " | ".join(cells_mse) + " | " + " | ".join(cells_mmd) + " | " + ", ".join(cells_t) + " |")
    print()
    for n in ns:
        e = rows[(m, 'exact', n)]
        g = rows[(m, 'gibbs500', n)]
        print(f"- n={n}: exact i.i.d. MSE {sum(x[0] for x in e.values())/len(e):.3g}, MMD² {sum(x[1] for x in e.values())/len(e):.3g}; 500 Gibbs sweeps take {sum(x[2] for x in g.values())/len(g):.3f} s")
