#!/usr/bin/env bash
# Runs every fuzz target of the repository (every `func FuzzXxx(f *testing.F)`
# in a _test.go file, found with grep, so new targets are included), one
# after the other, each for the same time, and prints one line per target:
# target, package, time, execs, new crashers and the outcome. A crasher is
# kept where Go writes it, PKG/testdata/fuzz/FuzzXxx/, the regression corpus
# that plain `go test` runs; commit it with its fix. Full logs go to a
# temporary folder named at the end. Exits 1 when a target failed.
#
# Usage: scripts/fuzz.sh [-p PARALLEL] [-a ADDRESS_SPACE] [-g GOMEMLIMIT]
#                        [-z MINIMIZE_TIME] [-r REGEXP] [DURATION]
#   DURATION  time per target, as go test -fuzztime reads it (default 10m)
#   -p        fuzzing workers per target, go test -parallel (default 1)
#   -a        address space of each fuzzing process (default 4G; K, M, G)
#   -g        Go's soft memory limit in each fuzzing process (default 1GiB)
#   -z        time to minimize an input, -fuzzminimizetime (default 10s,
#             not Go's 60s: no input is fuzzed while one is minimized, and
#             the corpora hold seeds of 200 KB)
#   -r        run only targets whose "package/FuzzXxx" matches REGEXP
#
# Memory is bounded at three levels, so that a blow-up is a fuzz failure
# with its input saved, not the kernel killing the process (or its
# neighbours):
#   1. Each target measures the bytes one input allocates (TotalAlloc of
#      runtime.MemStats, garbage included) and fails when they exceed a
#      bound stated beside it: a multiple of the input's size plus a
#      constant, plus the memory budget where the parser takes one. This
#      catches costs that grow too fast (quadratic in a nesting depth, a
#      count that sizes an allocation) while they are still small.
#   2. GOMEMLIMIT makes the garbage collector of the test binary work to
#      stay under -g, so that garbage from many inputs does not count
#      against the hard limit below.
#   3. prlimit --as (RLIMIT_AS, like `ulimit -v`) caps the address space of
#      the test binary and of the fuzzing workers it starts (they inherit
#      it). An input that allocates past it makes the runtime fail with
#      "out of memory"; the fuzz engine reports the worker's death and
#      writes the input as a crasher. The limit wraps only the test binary
#      (go test -exec), not the compiler. Go reserves little address space
#      up front: a throwaway target that allocated 64 GiB was caught this
#      way in 10 s (crasher written), and every target of this repository
#      fuzzes normally under 4G: measured, the coordinator and its worker
#      each took at most 1.8 GB of address space and 250 MB resident.
set -euo pipefail
cd "$(dirname "$0")/.."

parallel=1
as=4G
gomem=1GiB
minimize=10s
filter=.
while getopts p:a:g:z:r:h opt; do
	case $opt in
	p) parallel=$OPTARG ;;
	a) as=$OPTARG ;;
	g) gomem=$OPTARG ;;
	z) minimize=$OPTARG ;;
	r) filter=$OPTARG ;;
	*)
		sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
		[ "$opt" = h ] && exit 0 || exit 2
		;;
	esac
done
shift $((OPTIND - 1))
duration=${1:-10m}

# prlimit wants bytes.
bytes() {
	local n=${1%[KkMmGg]}
	case $1 in
	*[Kk]) echo $((n << 10)) ;;
	*[Mm]) echo $((n << 20)) ;;
	*[Gg]) echo $((n << 30)) ;;
	*) echo "$1" ;;
	esac
}
asbytes=$(bytes "$as")
command -v prlimit > /dev/null || { echo "fuzz.sh: prlimit (util-linux) is needed for the address-space limit" >&2; exit 2; }

# Every target as "dir name", in a stable order.
targets=$(grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\([A-Za-z0-9_]+ \*testing\.F\)' . |
	grep -v '^\./\.git/' |
	sed -E 's#^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*).*#\1 \2#' |
	sort -u)
if [ -z "$targets" ]; then
	echo "fuzz.sh: no fuzz targets found" >&2
	exit 2
fi

logs=$(mktemp -d "${TMPDIR:-/tmp}/dstein-fuzz.XXXXXX")
failed=0
ran=0
count() {
	if [ -d "$1" ]; then
		find "$1" -maxdepth 1 -type f | wc -l
	else
		echo 0
	fi
}
printf '%-22s %-20s %9s %8s %12s %13s  %s\n' target package fuzztime wall execs "new crashers" outcome
while read -r dir name; do
	if ! [[ "$dir/$name" =~ $filter ]]; then
		continue
	fi
	ran=$((ran + 1))
	corpus=$dir/testdata/fuzz/$name
	before=$(count "$corpus")
	log=$logs/${dir//\//_}.$name.log
	start=$(date +%s)
	outcome=ok
	go test -exec "env GOMEMLIMIT=$gomem prlimit --as=$asbytes --" \
		-run '^$' -fuzz "^$name\$" -fuzztime "$duration" -fuzzminimizetime "$minimize" \
		-parallel "$parallel" "./$dir" > "$log" 2>&1 || outcome=FAIL
	wall=$(($(date +%s) - start))
	execs=$(grep -Eo 'execs: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
	new=$(($(count "$corpus") - before))
	if [ "$outcome" = FAIL ] && [ "$new" -eq 0 ] && grep -q '^    context deadline exceeded$' "$log" &&
		! grep -qE 'Failing input written|hung or terminated|panic:' "$log"; then
		# Go 1.26's coordinator can fail a run at the end of -fuzztime
		# when a worker is still busy (go.dev/issue/75804, fixed in Go
		# 1.27): nothing was found, no input was written.
		outcome="ok (go.dev/issue/75804 at the deadline)"
	fi
	if [ "${outcome%%:*}" = FAIL ]; then
		failed=$((failed + 1))
		why=$(grep -m1 -E 'Failing input written|hung or terminated|--- FAIL|cannot|error' "$log" || true)
		outcome="FAIL: ${why#"${why%%[![:space:]]*}"}"
	fi
	printf '%-22s %-20s %9s %7ss %12s %13s  %s\n' "$name" "$dir" "$duration" "$wall" "${execs:-0}" "$new" "$outcome"
done <<< "$targets"
echo "$ran targets, $failed failed; logs in $logs"
[ "$failed" -eq 0 ]
