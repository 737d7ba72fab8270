#!/usr/bin/env bash
# Scores dstein's samplers and exact inference on UAI instances against their
# reference marginals (the .MAR files of the UAI competitions).
# Usage: scripts/uai-instances.sh DIR_WITH_UAI_FILES OUT_DIR
# For each NAME.uai with NAME.uai.MAR (and NAME.uai.evid when present) it runs
# exact inference, GF-SVGD with the transport preset (base and relaxed
# surrogates; n = 100, 500
# iterations) and Gibbs (100 chains) with the same number of log-density
# evaluations as relaxed GF-SVGD, Gibbs with 500 sweeps, and dstein's default
# preset with 400 draws, and prints one compare-mar line per run.
set -euo pipefail
src=$1; out=$2
mkdir -p "$out"
bin=$(mktemp -d)/dstein
go build -o "$bin" ./cmd/dstein
for net in "$src"/*.uai; do
	name=$(basename "$net" .uai)
	ref="$net.MAR"
	[ -f "$ref" ] || continue
	ev=()
	[ -f "$net.evid" ] && ev=(--evidence "$net.evid")
	echo "== $name"
	if "$bin" exact --model "$net" "${ev[@]}" --mar "$out/$name.exact.MAR" > "$out/$name.exact.txt" 2>&1; then
		echo "exact: $("$bin" compare-mar "$out/$name.exact.MAR" "$ref")"
	else
		echo "exact: $(tail -1 "$out/$name.exact.txt")"
	fi
	d=$(grep -m1 -o '([0-9]* free)' "$out/$name.exact.txt" | tr -dc 0-9 || true)
	for sur in base relaxed; do
		"$bin" sample --model "$net" "${ev[@]}" --method transport --surrogate $sur --n 100 --iters 500 --seed 1 \
			--mar "$out/$name.gfsvgd-$sur.MAR" --json "$out/$name.gfsvgd-$sur.json" > /dev/null
		echo "gfsvgd, transport preset ($sur, n = 100, 500 iterations): $("$bin" compare-mar "$out/$name.gfsvgd-$sur.MAR" "$ref")"
	done
	if [ -n "$d" ]; then
		# relaxed GF-SVGD evaluates log p* and its relaxation once per particle and
		# iteration: 2·100·500 = 100,000; Gibbs evaluates one conditional per site.
		sweeps=$(( (100000 + 100 * d - 1) / (100 * d) ))
		"$bin" sample --model "$net" "${ev[@]}" --method gibbs --n 100 --iters $sweeps --seed 1 --mar "$out/$name.gibbs-budget.MAR" > /dev/null
		echo "gibbs (100 chains, $sweeps sweeps: the same 100,000 evaluations): $("$bin" compare-mar "$out/$name.gibbs-budget.MAR" "$ref")"
	fi
	"$bin" sample --model "$net" "${ev[@]}" --method gibbs --n 100 --iters 500 --seed 1 --mar "$out/$name.gibbs-500.MAR" > /dev/null
	echo "gibbs (100 chains, 500 sweeps): $("$bin" compare-mar "$out/$name.gibbs-500.MAR" "$ref")"
	# dstein's default preset (parallel tempering, 4 chains of draws): 400
	# draws; its warnings (R̂, ESS, the ladder) are kept in NAME.default.txt.
	"$bin" sample --model "$net" "${ev[@]}" --method default --n 400 --seed 1 --mar "$out/$name.default.MAR" \
		--json "$out/$name.default.json" > "$out/$name.default.txt" 2>&1
	echo "default preset (pt, 4 chains × 100 draws): $("$bin" compare-mar "$out/$name.default.MAR" "$ref"); $(grep -c '^warning' "$out/$name.default.txt" || true) warning line(s)"
done
