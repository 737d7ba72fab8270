#!/usr/bin/env bash
# Checks dstein's error bars on a model small enough for dstein exact: runs
# dstein sample with seeds 1..SEEDS (and the flags given after the model),
# and counts how often each variable's 90% interval (ci90) misses the exact
# mean or marginal. Prints the miss rate over all runs and over the runs
# that gave no warning, each with a standard error taken across runs (the
# quantities of one run move together), and the root mean square of
# (estimate − exact)/MCSE (1 when the MCSE is right).
#
#   scripts/coverage.sh [-n SEEDS] [-o DIR] MODEL [dstein sample flags …]
#   scripts/coverage.sh -n 100 examples/ising-grid.json --method gibbs --chains 4 --draws 1000
#
# DSTEIN names the binary (default: built here from ./cmd/dstein). Needs
# python3 (no packages). The runs' JSON stay in DIR (default: a temporary
# directory, removed).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=50 dir=""
while getopts "n:o:" opt; do
	case $opt in
	n) seeds=$OPTARG ;;
	o) dir=$OPTARG ;;
	*) echo "usage: $0 [-n SEEDS] [-o DIR] MODEL [dstein sample flags …]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
	echo "usage: $0 [-n SEEDS] [-o DIR] MODEL [dstein sample flags …]" >&2
	exit 2
fi
model=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$dir" ]; then
	dir=$tmp/runs
fi
mkdir -p "$dir"
bin=${DSTEIN:-}
if [ -z "$bin" ]; then
	bin=$tmp/dstein
	go build -o "$bin" ./cmd/dstein
fi
"$bin" exact --model "$model" --json "$dir/exact.json" >/dev/null
for s in $(seq 1 "$seeds"); do
	"$bin" sample --model "$model" --seed "$s" --json "$dir/run-$s.json" "$@" >/dev/null
done
python3 - "$dir" "$seeds" <<'EOF'
import json, math, sys
d, n = sys.argv[1], int(sys.argv[2])
ex = json.load(open(d + "/exact.json"))
# The exact value of each variable quantity: a two-state variable's mean,
# else each state's marginal, in the order the run lists them.
truth = {}
for name, marg, mean in zip(ex["names"], ex["marginals"], ex["means"]):
    truth[name] = [mean] if len(marg) == 2 else marg
runs = []
for s in range(1, n + 1):
    r = json.load(open("%s/run-%d.json" % (d, s)))
    eb = r["error_bars"]
    if eb is None:
        sys.exit("run %d has no error bars (too few draws?)" % s)
    miss = cnt = 0
    z2 = []
    seen = {}
    for q in eb["quantities"]:
        name = q["name"].split("=")[0]
        if name not in truth:
            continue  # log_p, observables
        k = seen.get(name, 0)
        seen[name] = k + 1
        t = truth[name][k]
        lo, hi = q["ci90"]
        cnt += 1
        miss += not (lo - 1e-12 <= t <= hi + 1e-12)
        if q["mcse"] > 0:
            z2.append(((q["mean"] - t) / q["mcse"]) ** 2)
    runs.append((miss / cnt, bool(eb["warnings"]), z2))

def line(label, rs):
    if not rs:
        print("%-12s no runs" % label)
        return
    f = [r[0] for r in rs]
    m = sum(f) / len(f)
    se = math.sqrt(sum((x - m) ** 2 for x in f) / max(len(f) - 1, 1) / len(f))
    z2 = [z for r in rs for z in r[2]]
    print("%-12s %3d runs: 90%% intervals miss %.3f ± %.3f (nominal 0.100), rms z %.2f" % (label, len(rs), m, se, math.sqrt(sum(z2) / max(len(z2), 1))))

line("all", runs)
line("no warning", [r for r in runs if not r[1]])
EOF
