#!/bin/sh
# Runs dstein and its numpy and PyTorch peers on the same GF-SVGD problems,
# side by side, and writes benchmarks/peers/results.md and results.csv.
#
#   benchmarks/peers/run.sh                  # from anywhere in the repository
#   NOTE="quiet machine" benchmarks/peers/run.sh
#
# 1. builds benchmarks/peers/dsteinpeer;
# 2. checks that both peers compute dstein's direction: on n = 20, d = 10
#    (and n = 22, d = 7, whose number of pairs is odd) the largest absolute
#    difference over the largest absolute value must be ≤ 1e-10 (TOL), and
#    dstein's own computation must match one step of its gfsvgd sampler;
#    any failure stops the script with a non-zero status;
# 3. times one iteration's direction (each peer first checks its direction
#    against dstein's on the timed problem too, with the same tolerance) for (n, d) = (100, 100), (1000, 100),
#    (1000, 1000) with each implementation on the same cores (taskset -c
#    0-(THREADS−1) when available and THREADS < CPUs), THREADS threads each (default 2), in ROUNDS rounds
#    (default 2; the order of the implementations is reversed every other
#    round so that a drift in the machine's load does not favour one of
#    them), and reports the median over all repetitions.
#
# Environment: THREADS, ROUNDS, TOL, NOTE (a sentence put in results.md),
# SIZES (default "100x100x30 1000x100x10 1000x1000x5": n x d x repetitions),
# PYTHON (default /usr/bin/python3, where install.sh puts numpy and torch),
# DSTEINPEER (a dsteinpeer binary built elsewhere, for a machine without Go:
# see scripts/device-cores.sh; its provenance is read from provenance.txt
# beside it), PEERS_OUT (the directory of results.md and results.csv,
# default benchmarks/peers). Fewer THREADS than CPUs pins every
# implementation to CPUs 0 … THREADS−1 (taskset); as many runs unpinned.
# About 2–3 minutes on 2 cores.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
peers=benchmarks/peers
PYTHON=${PYTHON:-/usr/bin/python3}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-2}
TOL=${TOL:-1e-10}
NOTE=${NOTE:-}
SIZES=${SIZES:-100x100x30 1000x100x10 1000x1000x5}
PEERS_OUT=${PEERS_OUT:-$peers}
DSTEINPEER=${DSTEINPEER:-}
export GOFLAGS=-buildvcs=false
export GOMAXPROCS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS" OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS"

fail() {
	echo "run.sh: FAILED: $*" >&2
	exit 1
}

if ! "$PYTHON" -c 'import numpy, torch' 2>/dev/null; then
	fail "$PYTHON cannot import numpy and torch: run $peers/install.sh first"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

if [ -n "$DSTEINPEER" ]; then
	cp "$DSTEINPEER" "$work/dsteinpeer"
	prov=$(dirname "$DSTEINPEER")/provenance.txt
	provenance="a binary built elsewhere ($(head -1 "$prov" 2>/dev/null || echo "no provenance.txt"))"
	goversion=$(sed -n 's/^\(go[0-9.]*\) GOAMD64=.*/\1/p' "$prov" 2>/dev/null || true)
	goamd64=$(sed -n 's/.*GOAMD64=//p' "$prov" 2>/dev/null || true)
else
	echo "run.sh: building dsteinpeer"
	go build -o "$work/dsteinpeer" ./$peers/dsteinpeer
	goversion=$(go env GOVERSION)
	goamd64=$(go env GOAMD64)
fi

# Which dstein was timed: the commit, and the uncommitted changes (tests
# excluded) in the packages the program is built from. Read-only git calls.
if [ -z "$DSTEINPEER" ]; then
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
specs=""
for dir in $(go list -deps -f '{{if .Module}}{{if eq .Module.Path "github.com/dstein/dstein"}}{{.Dir}}{{end}}{{end}}' ./$peers/dsteinpeer |
	sed "s|^$root/||" | grep -v "^$peers"); do
	specs="$specs :(glob)$dir/*"
done
# shellcheck disable=SC2086
dirty=$(git --no-optional-locks status --porcelain --untracked-files=all -- $specs 2>/dev/null |
	awk '{print $NF}' | grep -v '_test\.go$' | tr '\n' ' ' | sed 's/ *$//' || true)
if [ -n "$dirty" ]; then
	provenance="working tree at commit $commit with uncommitted changes to $dirty"
else
	provenance="commit $commit (no uncommitted changes in the packages it uses)"
fi
fi
echo "run.sh: dstein: $provenance"

pin=""
cpus="all $(nproc) CPUs (no taskset)"
mask="0-$((THREADS - 1))"
if [ "$THREADS" -lt "$(nproc)" ] && command -v taskset >/dev/null 2>&1 && taskset -c "$mask" true 2>/dev/null; then
	pin="taskset -c $mask"
	cpus="CPUs $mask (taskset -c $mask)"
fi

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
# The share of the CPUs other processes keep busy right now, over one
# second (the load average lags: it still counts work that just ended).
busy_start=$(awk '/^cpu /{t=0; for(i=2;i<=NF;i++) t+=$i; print t, $5+$6}' /proc/stat; sleep 1; awk '/^cpu /{t=0; for(i=2;i<=NF;i++) t+=$i; print t, $5+$6}' /proc/stat)
busy_start=$(echo "$busy_start" | awk 'NR==1{t0=$1; i0=$2} NR==2{printf "%.2f", 1 - ($2-i0)/($1-t0)}')
date_start=$(date -u '+%Y-%m-%d %H:%M UTC')
t_start=$(date +%s)

# --- agreement -----------------------------------------------------------
for c in "20 10 1" "22 7 2"; do
	set -- $c
	f="$work/check_$1_$2.npz"
	$pin "$work/dsteinpeer" -n "$1" -d "$2" -seed "$3" -out "$f" -check-sampler >"$work/check_$1_$2.dstein.json" ||
		fail "dstein's direction (n=$1, d=$2) does not match its gfsvgd sampler's step"
	for impl in numpy torch; do
		if ! $pin "$PYTHON" "$peers/gfsvgd_$impl.py" "$f" --check --tol "$TOL" >"$work/check_$1_$2.$impl.json"; then
			cat "$work/check_$1_$2.$impl.json" >&2
			fail "the $impl peer's direction differs from dstein's on n=$1, d=$2 (tolerance $TOL)"
		fi
		echo "run.sh: agreement n=$1 d=$2 $impl: $(cut -c1-200 "$work/check_$1_$2.$impl.json")"
	done
done

# --- timing --------------------------------------------------------------
: >"$work/timings.jsonl"
for c in $SIZES; do
	set -- $(echo "$c" | tr x ' ')
	n=$1 d=$2 reps=$3
	f="$work/p_${n}_$d.npz"
	"$work/dsteinpeer" -n "$n" -d "$d" -seed 1 -out "$f" >/dev/null
	r=1
	while [ "$r" -le "$ROUNDS" ]; do
		if [ $((r % 2)) -eq 1 ]; then order="dstein numpy torch"; else order="torch numpy dstein"; fi
		for impl in $order; do
			echo "run.sh: timing n=$n d=$d $impl (round $r, $reps repetitions)"
			case $impl in
			dstein) $pin "$work/dsteinpeer" -n "$n" -d "$d" -seed 1 -repeats "$reps" >>"$work/timings.jsonl" ;;
			numpy) $pin "$PYTHON" "$peers/gfsvgd_numpy.py" "$f" --check --tol "$TOL" --time "$reps" >>"$work/timings.jsonl" ||
				fail "the numpy peer's direction differs from dstein's on n=$n, d=$d (tolerance $TOL)" ;;
			torch) $pin "$PYTHON" "$peers/gfsvgd_torch.py" "$f" --check --tol "$TOL" --time "$reps" --threads "$THREADS" >>"$work/timings.jsonl" ||
				fail "the torch peer's direction differs from dstein's on n=$n, d=$d (tolerance $TOL)" ;;
			esac
		done
		r=$((r + 1))
	done
done

load_end=$(cut -d' ' -f1-3 /proc/loadavg)
elapsed=$(($(date +%s) - t_start))
cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
flags=$(grep -m1 '^flags' /proc/cpuinfo | grep -o -w -E 'avx2|fma|avx512f' | tr '\n' ' ' || true)

# --- table ---------------------------------------------------------------
PROVENANCE="$provenance" GOAMD64="${goamd64:-?}" THREADS="$THREADS" TOL="$TOL" NOTE="$NOTE" CPU="$cpu" FLAGS="$flags" NCPU="$(nproc)" CPUS="$cpus" DATE="$date_start" LOAD_START="$load_start" BUSY_START="$busy_start" \
	LOAD_END="$load_end" ELAPSED="$elapsed" GOVERSION="${goversion:-?}" WORK="$work" PEERS="$peers" \
	"$PYTHON" - <<'EOF'
import csv, glob, json, os, statistics

env = os.environ
work, peers, threads = env["WORK"], env["PEERS"], env["THREADS"]
rows = [json.loads(l) for l in open(os.path.join(work, "timings.jsonl")) if l.strip()]
times = {}
info = {}
for r in rows:
    key = (r["n"], r["d"], r["impl"])
    t = times.setdefault(key, {"full": [], "direction": []})
    t["full"] += r["full_all_ms"]
    t["direction"] += r["direction_all_ms"]
    info[r["impl"]] = r
checks = []
for p in sorted(glob.glob(os.path.join(work, "check_*.json"))):
    checks.append(json.load(open(p)))

sizes = sorted({(n, d) for n, d, _ in times}, key=lambda s: (s[0], s[1]))
impls = ["dstein", "numpy", "torch"]
med = {k: {w: statistics.median(v[w]) for w in v} for k, v in times.items()}

with open(os.path.join(work, "results.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["n", "d", "impl", "part", "median_ms", "repetitions", "ratio_to_dstein"])
    for n, d in sizes:
        for part in ("full", "direction"):
            base = med[(n, d, "dstein")][part]
            for impl in impls:
                m = med[(n, d, impl)][part]
                w.writerow([n, d, impl, part, "%.4g" % m, len(times[(n, d, impl)][part]), "%.3g" % (m / base)])

ncpu = int(env["NCPU"])
L = []
L.append("# dstein against numpy and PyTorch: one GF-SVGD iteration's direction\n")
L.append("Written by `benchmarks/peers/run.sh` (see `benchmarks/peers/README.md` for what each "
         "implementation computes). Times are medians over all repetitions, in milliseconds per "
         "iteration; ratios above 1 mean the peer is slower than dstein.\n")
L.append("## Machine\n")
L.append("- date: %s; the run took %s s" % (env["DATE"], env["ELAPSED"]))
L.append("- CPU: %s (%s), %d CPUs visible; every implementation ran on %s with %s threads"
         % (env["CPU"], env["FLAGS"].strip() or "flags unknown", ncpu, env["CPUS"], threads))
L.append("- load average (1, 5, 15 min): %s at the start, %s at the end"
         % (env["LOAD_START"], env["LOAD_END"]))
busy = float(env["BUSY_START"])
L.append("- CPUs busy with other work in the second before the run: %.0f%%" % (100 * busy))
if busy > 0.2:
    L.append("- **the machine was not idle** (%.0f%% of %d CPUs busy at the start): other jobs "
             "competed for the same cores, so these numbers are noisy and unfair to code whose "
             "threads wait for each other (OpenMP barriers, as in PyTorch); measure again on a "
             "quiet machine before quoting them" % (100 * busy, ncpu))
if env.get("NOTE"):
    L.append("- note: %s" % env["NOTE"])
d0 = info.get("dstein", {})
L.append("- dstein: %s, GOMAXPROCS %s, GOAMD64=%s; built from the %s"
         % (env["GOVERSION"], d0.get("gomaxprocs", "?"), env["GOAMD64"], env["PROVENANCE"]))
n0 = info.get("numpy", {})
L.append("- numpy %s, BLAS: %s" % (n0.get("numpy", "?"), ", ".join(os.path.basename(b) for b in n0.get("blas", [])) or "?"))
t0 = info.get("torch", {})
L.append("- PyTorch %s (CPU), %s threads, libraries: %s"
         % (t0.get("torch", "?"), t0.get("threads", "?"), ", ".join(os.path.basename(b) for b in t0.get("blas", [])) or "?"))
L.append("")
L.append("## Problem\n")
L.append("RBM target with d visible and M = 25 hidden units (`rbm.Random(d, 25, 0.2236, 1, seed 1)`), "
         "relaxed surrogate at τ = %s, n particles from N(0, 1), self-normalised weights, RBF kernel "
         "with h = med²/log(n+1) over the distinct pairs, float64. *full*: scores, weights, kernel and "
         "direction from the particles; *direction*: the kernel and the direction given the scores and "
         "weights (what `svgd.Direction.Compute` does).\n" % d0.get("tau", "0.25"))
L.append("## Agreement (checked before timing)\n")
L.append("max |Δx_peer − Δx_dstein| / max |Δx_dstein| (tolerance %s); dstein's direction is also compared "
         "with one step of its gfsvgd sampler (plain steps, learning rate 1) on the two small cases. The "
         "timed problems are checked too, before their timing.\n" % env.get("TOL", "1e-10"))
L.append("| n | d | numpy | torch | dstein vs its sampler |")
L.append("|---|---|---|---|---|")
byc = {}
for c in checks:
    byc.setdefault((c["n"], c["d"]), {})[c["impl"]] = c
for r in rows:
    if r["impl"] != "dstein":
        byc.setdefault((r["n"], r["d"]), {}).setdefault(r["impl"], r)
for (n, d), c in sorted(byc.items()):
    smp = c.get("dstein", {}).get("sampler_rel_diff")
    L.append("| %d | %d | %.2g | %.2g | %s |" % (n, d, c["numpy"]["rel_diff"], c["torch"]["rel_diff"],
                                               "%.2g" % smp if smp is not None else "–"))
L.append("")
L.append("## Times (ms per iteration)\n")
L.append("| n | d | part | dstein | numpy | torch | numpy / dstein | torch / dstein |")
L.append("|---|---|---|---|---|---|---|---|")
for n, d in sizes:
    for part in ("full", "direction"):
        m = [med[(n, d, i)][part] for i in impls]
        L.append("| %d | %d | %s | %.3g | %.3g | %.3g | %.2f | %.2f |" % (n, d, part, m[0], m[1], m[2], m[1] / m[0], m[2] / m[0]))
L.append("")
reps = {(n, d): len(times[(n, d, "dstein")]["full"]) for n, d in sizes}
L.append("Repetitions per median: %s (after 2 warm-up calls per process). The CSV "
         "(`results.csv`) has the same medians." % ", ".join("%d at n=%d, d=%d" % (r, n, d) for (n, d), r in reps.items()))
open(os.path.join(work, "results.md"), "w").write("\n".join(L) + "\n")
EOF

mkdir -p "$PEERS_OUT"
for f in results.csv results.md; do
	cp "$work/$f" "$PEERS_OUT/.$f.tmp"
	mv "$PEERS_OUT/.$f.tmp" "$PEERS_OUT/$f"
done
echo "run.sh: wrote $PEERS_OUT/results.md and $PEERS_OUT/results.csv ($elapsed s)"
cat "$PEERS_OUT/results.md"
