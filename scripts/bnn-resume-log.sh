#!/usr/bin/env bash
# Writes the log of EXPERIMENTS.md's "Interrupting and resuming" (binarized
# networks): a GF-SVGD run stopped by SIGINT in its second epoch and
# resumed, and a BENN run killed with SIGKILL in its second member and
# resumed, each beside the same run uninterrupted. The resumed runs must end
# with the uninterrupted runs' accuracy and weights digest.
#
#   scripts/bnn-resume-log.sh [LOG]   # default docs/results/bnn/resume-log.txt
#
# Beside LOG it writes the GF-SVGD runs' result.json as
# resume-uninterrupted.json and resume-interrupted-resumed.json.
# About 5 minutes on 2 cores. DSTEIN names the binary (default: built here).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
log=$(realpath -m "${1:-$root/docs/results/bnn/resume-log.txt}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=${DSTEIN:-}
if [ -z "$bin" ]; then
	bin=$work/dstein
	(cd "$root" && go build -o "$bin" ./cmd/dstein)
fi
cd "$work"

# stop SIGNAL AFTER_LINE DELAY ARGS...: runs dstein ARGS, sends SIGNAL
# DELAY seconds after a stderr line matching AFTER_LINE, and logs it all.
stop() {
	local sig=$1 after=$2 delay=$3
	shift 3
	"$bin" "$@" >out.txt 2>err.txt &
	local pid=$!
	until grep -q -E "$after" err.txt 2>/dev/null || ! kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
	sleep "$delay"
	kill -s "$sig" "$pid" 2>/dev/null || true
	local code=0
	wait "$pid" || code=$?
	cat err.txt out.txt
	echo "interrupted run exit code $code"
}

gf=(bnn train --data mnist --arch cnn --method gfsvgd --ensemble 2 --epochs 2 --train-limit 12800 --seed 3)
benn=(bnn train --data mnist --arch cnn --method benn --ensemble 2 --epochs 2 --train-limit 6400 --seed 4)
{
	echo "# scripts/bnn-resume-log.sh, $(date -u '+%Y-%m-%d'), dstein $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo
	echo "== uninterrupted: dstein ${gf[*]} --out-dir resA"
	"$bin" "${gf[@]}" --out-dir resA 2>&1
	echo
	echo "== the same with --out-dir resB, interrupted by SIGINT 8 s into epoch 2"
	stop INT '^epoch 1/2' 8 "${gf[@]}" --out-dir resB
	echo
	echo "== the same with --out-dir resB --resume"
	"$bin" "${gf[@]}" --out-dir resB --resume 2>&1
	echo
	echo "== SIGKILL, a method that trains networks one after another: dstein ${benn[*]} --out-dir kA (uninterrupted)"
	"$bin" "${benn[@]}" --out-dir kA 2>&1
	echo
	echo "== the same with --out-dir kB, killed with SIGKILL 2 s into member 2's second epoch"
	stop KILL '^member 2/2 epoch 1/2' 2 "${benn[@]}" --out-dir kB
	echo
	echo "== the same with --out-dir kB --resume"
	"$bin" "${benn[@]}" --out-dir kB --resume 2>&1
	echo
	for p in resA:resB kA:kB; do
		a=$(grep -o '"weights_sha256": *"[0-9a-f]*"' "${p%%:*}/result.json")
		b=$(grep -o '"weights_sha256": *"[0-9a-f]*"' "${p#*:}/result.json")
		[ "$a" = "$b" ] && echo "${p#*:} resumed to ${p%%:*}'s weights: $b" || echo "${p#*:} DIFFERS from ${p%%:*}: $a against $b"
	done
} | sed "s|$work/||g" >"$work/log.txt"
mv "$work/log.txt" "$log"
cp resA/result.json "$(dirname "$log")/resume-uninterrupted.json"
cp resB/result.json "$(dirname "$log")/resume-interrupted-resumed.json"
echo "wrote $log"
