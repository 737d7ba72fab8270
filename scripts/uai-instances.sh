#!/usr/bin/env bash
# Scores dstein's samplers and exact inference on UAI instances against their
# reference marginals (the .MAR files of the UAI competitions).
# Usage: scripts/uai-instances.sh DIR_WITH_UAI_FILES OUT_DIR
# For each NAME.uai with NAME.uai.MAR (and NAME.uai.evid when present) it runs
# exact inference, GF-SVGD with the transport preset (base and relaxed
# surrogates; n = 100, 500
# iterations) and Gibbs (100 chains) with the same number of log-density
# evaluations as relaxed GF-SVGD, Gibbs with 500 sweeps, the tempering preset
# (rounds one and two's default, which the published table's last column
# names) and today's default, each with 400 draws, and prints one compare-mar
# line per run.
set -euo pipefail
src=$1; out=$2
mkdir -p "$out"
bin=$(mktemp -d)/dstein
go build -o "$bin" ./cmd/dstein
# run LABEL BASE FLAGS…: one dstein sample run of the current network with
# seed 1, its marginals in OUT/BASE.MAR, its JSON in OUT/BASE.json and its
# printed summary in OUT/BASE.txt, and one line: the compare-mar errors and
# the number of warning lines, or "failed:" and dstein's message (a run
# whose draws all have probability zero, say), after which the others go on.
run() {
	local label=$1 base=$2
	shift 2
	rm -f "$out/$base.MAR" "$out/$base.json"
	if "$bin" sample --model "$net" "${ev[@]}" --seed 1 "$@" --mar "$out/$base.MAR" --json "$out/$base.json" > "$out/$base.txt" 2>&1; then
		echo "$label: $("$bin" compare-mar "$out/$base.MAR" "$ref"); $(grep -c '^warning' "$out/$base.txt" || true) warning line(s)"
	else
		echo "$label: failed: $(tail -1 "$out/$base.txt")"
	fi
}
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
		run "gfsvgd, transport preset ($sur, n = 100, 500 iterations)" "$name.gfsvgd-$sur" \
			--method transport --surrogate $sur --n 100 --iters 500
	done
	if [ -n "$d" ]; then
		# relaxed GF-SVGD evaluates log p* and its relaxation once per particle and
		# iteration: 2·100·500 = 100,000; Gibbs evaluates one conditional per site.
		sweeps=$(( (100000 + 100 * d - 1) / (100 * d) ))
		run "gibbs (100 chains, $sweeps sweeps: the same 100,000 evaluations)" "$name.gibbs-budget" --method gibbs --n 100 --iters $sweeps
	fi
	run "gibbs (100 chains, 500 sweeps)" "$name.gibbs-500" --method gibbs --n 100 --iters 500
	# Parallel tempering, 4 chains of 100 draws: the tempering preset (a
	# fixed ladder of 8 temperatures, 1000 rounds of warm-up, every 25th)
	# and today's default (the ladder sized by a pilot, run to its ESS
	# target); their warnings (R̂, ESS, the ladder) are counted.
	for preset in tempering default; do
		run "$preset preset (pt, 4 chains × 100 draws)" "$name.$preset" --method $preset --n 400
	done
done
