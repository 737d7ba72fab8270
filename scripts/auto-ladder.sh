#!/bin/sh
# Compare the default (8 temperatures) with --auto-ladder, and with an ESS
# target (--ess 400), on targets with exact answers: wall time, the
# iterations per chain, the chosen number of temperatures, the MSE of
# the means against exact means as a multiple of that of 1000 exact draws,
# the coverage of the variables' 90% intervals, and the runs whose R̂ or
# ESS warned (rare-state warnings are not counted).
# Usage: scripts/auto-ladder.sh SEEDS MODEL.json [MODEL.json ...]
# (dstein on PATH or DSTEIN=path; python3 for the table).
set -eu
seeds=$1
shift
dstein=${DSTEIN:-dstein}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for model in "$@"; do
	name=$(basename "$model" .json)
	"$dstein" exact --model "$model" --json "$tmp/$name.exact.json" >/dev/null
	variants="default|auto --auto-ladder|auto-ess --auto-ladder --ess 400"
	if grep -q '"rbm"' "$model"; then # --kernel block applies to RBMs only
		variants="default|default --kernel block|auto --auto-ladder|auto --auto-ladder --kernel block|auto-ess --auto-ladder --ess 400 --kernel block"
	fi
	echo "$variants" | tr '|' '\n' | while read -r variant; do
		label=$(echo "$variant" | cut -d' ' -f1)
		flags=$(echo "$variant" | cut -s -d' ' -f2-)
		case "$variant" in *block*) label="$label+block" ;; esac
		s=1
		while [ "$s" -le "$seeds" ]; do
			out="$tmp/$name.$label.$s.json"
			start=$(date +%s%N)
			# shellcheck disable=SC2086
			"$dstein" sample --model "$model" --seed "$s" $flags --json "$out" >/dev/null 2>&1
			end=$(date +%s%N)
			echo "$name $label $s $(((end - start) / 1000000))" >>"$tmp/times"
			s=$((s + 1))
		done
	done
done
python3 - "$tmp" <<'PY'
import json, sys, glob, os, collections
tmp = sys.argv[1]
times = {}
for line in open(os.path.join(tmp, "times")):
    n, l, s, t = line.split()
    times[(n, l, s)] = float(t) / 1000
rows = collections.defaultdict(list)
for (n, l, s), t in sorted(times.items()):
    ex = json.load(open(os.path.join(tmp, n + ".exact.json")))
    em = ex["means"]
    d = json.load(open(os.path.join(tmp, "%s.%s.%s.json" % (n, l, s))))
    m = d["mean"]
    iid = sum(1 - x * x for x in em) / len(em) / 1000
    mse = sum((a - b) ** 2 for a, b in zip(m, em)) / len(em)
    q = {x["name"]: x for x in d["error_bars"]["quantities"]}
    cov = [q["z%d" % i]["ci90"][0] <= em[i] <= q["z%d" % i]["ci90"][1] for i in range(len(em)) if "z%d" % i in q]
    k = d["stages"][0]["statistics"].get("temperatures", 8)
    warns = d["error_bars"]["warnings"]
    conv = any(w.startswith("R̂") or w.startswith("ESS") or w.startswith("the run reached") for w in warns)
    it = d["iters"]
    rows[(n, l)].append((t, k, mse / iid, sum(cov) / max(len(cov), 1), conv, it))
print("| target | variant | seeds | wall s (mean) | iterations per chain | K (range) | MSE / exact draws (mean) | coverage | runs with R̂/ESS warnings |")
print("|---|---|---|---|---|---|---|---|---|")
for (n, l), r in sorted(rows.items()):
    ks = [x[1] for x in r]
    its = [x[5] for x in r]
    print("| %s | %s | %d | %.2f | %d–%d | %d–%d | %.2f | %.3f | %d |" % (n, l, len(r), sum(x[0] for x in r) / len(r), min(its), max(its), min(ks), max(ks),
          sum(x[2] for x in r) / len(r), sum(x[3] for x in r) / len(r), sum(x[4] for x in r)))
PY
