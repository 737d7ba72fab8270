#!/usr/bin/env bash
# Measures dstein on a many-core machine that has no Go (the GPU machine's
# 16-core host): the hot-path benchmarks at several GOMAXPROCS, the default
# and parallel tempering as users run them, the peers (numpy, PyTorch) and
# the bit-identity of results across core counts and CPU feature paths.
#
#   scripts/device-cores.sh build [DIR]   # here, with Go: test binaries,
#                                         # dstein and dsteinpeer in DIR
#                                         # (default .device/cores, gzipped)
#   scripts/device-cores.sh run [DIR]     # there: writes $OUT/cores/
#                                         # (default OUT=/tmp/out)
#
# "run" needs only bash and coreutils (taskset pins the 2-core runs, and
# /usr/bin/time adds peak memory, where the machine has them); the peers
# run when $PYTHON (default python3) imports numpy and torch. The binaries
# are built without cgo (no versioned glibc symbols; they load libc
# through purego). NVRTC and cuBLAS are found by soname,
# or in pip's nvidia-* wheels of $PYTHON. It is sized
# to end within 8 minutes on 16 cores (BUDGET seconds, default 450: phases
# that would start after it are skipped and say so in $OUT/cores/log.txt).
# QUICK=1 runs every benchmark once (a check of the script, not a measure).
# Where dstein gpu finds a GPU, the GPU path's tests and benchmarks (GF-SVGD,
# Gibbs), the PyTorch GPU peers and DISCS's targets with Gibbs on the GPU
# run first (about 4 minutes; NO_GPU=1 skips them).
# The numbers go into BENCHMARKS.md ("Many cores") by hand, with the CPU
# model the run records.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:-}
dir=${2:-$root/.device/cores}

# The packages whose benchmarks are the hot paths or whose tests check bits
# on each CPU feature path.
pkgs=(sampler/gfsvgd svgd sampler/pt sampler/gibbs sampler/gwg sampler/dmala sampler/dlmc sampler/pas internal/gemm internal/vexp internal/parallel kernel transform)

build() {
	command -v go >/dev/null || { echo "device-cores.sh build: needs Go" >&2; exit 1; }
	mkdir -p "$dir"
	cd "$root"
	# Without cgo: binaries with no versioned glibc symbols, for whatever
	# glibc the device's image has (with cgo they needed GLIBC_2.34); purego opens the
	# CUDA libraries through its own loader then (the GPU tests pass here
	# built so, on the stand-ins).
	export CGO_ENABLED=0
	for p in "${pkgs[@]}"; do
		name=$(echo "$p" | tr / -)
		go test -c -ldflags='-s -w' -o "$dir/$name.test" "./$p"
	done
	go test -c -ldflags='-s -w' -o "$dir/internal-cuda-gpu.test" ./internal/cuda
	go test -c -ldflags='-s -w' -o "$dir/gpu.test" ./gpu
	go build -ldflags='-s -w' -o "$dir/dstein" ./cmd/dstein
	go build -ldflags='-s -w' -o "$dir/dsteinpeer" ./benchmarks/peers/dsteinpeer
	{
		echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
		git --no-optional-locks status --porcelain 2>/dev/null | sed 's/^/changed: /' | head -20
		echo "$(go env GOVERSION) GOAMD64=$(go env GOAMD64) CGO_ENABLED=0"
	} >"$dir/provenance.txt"
	# Compressed: the device tool carries 64 MiB at most.
	gzip -f -9 "$dir"/*.test "$dir/dstein" "$dir/dsteinpeer"
	du -sh "$dir"
}

run() {
	local out=${OUT:-/tmp/out}/cores budget=${BUDGET:-450} start
	start=$(date +%s)
	mkdir -p "$out"
	exec > >(tee -a "$out/log.txt") 2>&1
	ncpu=$(nproc)
	echo "device-cores.sh run: $(date -u '+%Y-%m-%d %H:%M UTC'), $ncpu CPUs"
	grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ */CPU: /'
	echo "flags: $(grep -m1 '^flags' /proc/cpuinfo | grep -o -w -E 'avx2|fma|avx512f|avx512dq|avx512vl' | tr '\n' ' ')"
	cat "$dir/provenance.txt"
	bin=$(mktemp -d)
	for f in "$dir"/*.gz; do
		gunzip -c "$f" >"$bin/$(basename "$f" .gz)"
		chmod +x "$bin/$(basename "$f" .gz)"
	done
	cp "$dir/provenance.txt" "$bin/"
	dir=$bin
	left() { echo $((budget - ($(date +%s) - start))); }
	phase() { # phase NAME MIN_SECONDS: false (and a line) when too little time is left
		if [ "$(left)" -lt "$2" ]; then
			echo "SKIPPED $1: $(left) s of the budget left, it needs about $2"
			return 1
		fi
		echo "== $1 ($(left) s left)"
	}
	# tmo SECONDS: the smaller of SECONDS and the budget left (at least 1),
	# for timeout: no step runs past the budget.
	tmo() { local l; l=$(left); [ "$l" -lt 1 ] && l=1; [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
	# timed FILE CMD...: runs CMD with its time (and peak memory where
	# /usr/bin/time exists; bash's time otherwise) as FILE's last line.
	timed() {
		local f=$1
		shift
		if [ -x /usr/bin/time ]; then
			/usr/bin/time -f "%e s wall, %U s user, %M KB peak" "$@" 2>"$f"
		else
			local TIMEFORMAT="%R s wall, %U s user, peak not measured (no /usr/bin/time)"
			{ time "$@" 2>/dev/null; } 2>"$f"
		fi
	}
	# The GPU's libraries, where the image has them outside the loader's
	# path (pip's nvidia-cuda-nvrtc and nvidia-cublas wheels).
	# The driver's CUDA major version ("driver …, CUDA 13.0" from dstein
	# gpu) picks the libraries' soname: a newer NVRTC or cuBLAS than the
	# driver does not work with it.
	local gpy=${PYTHON:-python3} lib var found major
	major=$(timeout 30 "$dir/dstein" gpu 2>/dev/null | sed -n 's/^driver .*, CUDA \([0-9][0-9]*\)\..*/\1/p' | head -1 || true)
	for lib in nvrtc:DSTEIN_CUDA_NVRTC cublas:DSTEIN_CUDA_CUBLAS; do
		var=${lib#*:}
		lib=${lib%%:*}
		[ -n "$major" ] || break
		# (grep -q on a pipe under pipefail fails when grep quits early.)
		if [ -z "${!var:-}" ] && ! grep -q "lib$lib\.so\.$major " < <(ldconfig -p 2>/dev/null); then
			found=$("$gpy" -c "import glob, site; print(next(iter(sorted(p for d in site.getsitepackages() for p in glob.glob(d + '/nvidia/**/lib$lib.so.$major', recursive=True))), ''))" 2>/dev/null || true)
			if [ -n "$found" ]; then
				# Its folder too, for the libraries it opens itself
				# (libnvrtc-builtins).
				export "$var=$found" LD_LIBRARY_PATH="$(dirname "$found")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
				echo "$var=$found"
			fi
		fi
	done
	# The GPU loader (issue 33's first step): the driver opened at run time.
	timeout "$(tmo 30)" "$dir/dstein" gpu 2>&1 | tee "$out/gpu.txt" || echo "dstein gpu: exit ${PIPESTATUS[0]}"
	# A kernel compiled by NVRTC, loaded and run through the driver, checked exactly.
	DSTEIN_GPU_TEST=1 timeout "$(tmo 60)" "$dir/internal-cuda-gpu.test" -test.run RealGPU -test.v 2>&1 | tee -a "$out/gpu.txt" || true
	# Issue 33's GF-SVGD: the GPU path against the CPU's on the device (the
	# tests the stand-ins run here), then its iteration's time beside
	# PyTorch's on the same GPU, float64 and float32.
	# The gate: a GPU, and the compiler and cuBLAS beside it ("dstein gpu"
	# lists what it found and exits 0 without them).
	if [ -z "${NO_GPU:-}" ] && timeout "$(tmo 30)" "$dir/dstein" gpu >/dev/null 2>&1 && ! grep -q -E '^(runtime compiler|cuBLAS): none' "$out/gpu.txt"; then
		(cd "$root/gpu" && DSTEIN_GPU_TEST=1 timeout "$(tmo 120)" "$dir/gpu.test" -test.v -test.count 1 2>&1) | tee "$out/gpu-tests.txt" | grep -E '^(---|ok|FAIL|PASS)|largest' || true
		bt=10x
		[ -z "${QUICK:-}" ] || bt=1x
		(cd "$root/gpu" && DSTEIN_GPU_TEST=1 timeout "$(tmo 200)" "$dir/gpu.test" -test.run '^$' -test.bench 'SVGDStep|GibbsSweep' -test.benchtime $bt -test.count 3 2>&1) | tee "$out/gpu-bench.txt" | grep -E '^Benchmark' || true
		if [ "$(left)" -lt 60 ]; then
			echo "SKIPPED the PyTorch GPU peer: $(left) s of the budget left"
		elif "$gpy" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
			for size in "100 100" "1000 100" "1000 1000" "10000 1000"; do
				set -- $size
				for dt in float64 float32; do
					timeout "$(tmo 60)" "$gpy" "$root/benchmarks/peers/gfsvgd_torch_gpu.py" --n "$1" --d "$2" --dtype $dt --time 20 >>"$out/gpu-torch.jsonl" 2>>"$out/gpu-torch.err" ||
						echo "torch n=$1 d=$2 $dt failed: $(tail -1 "$out/gpu-torch.err")"
				done
			done
			for run in "ising --side 10 --chains 10000" "ising --side 10 --chains 1000000" "ising --side 256 --chains 1000" \
				"rbm --chains 10000 --dtype float64" "rbm --chains 10000 --dtype float32"; do
				# shellcheck disable=SC2086
				timeout "$(tmo 60)" "$gpy" "$root/benchmarks/peers/gibbs_torch_gpu.py" $run --time 20 >>"$out/gpu-torch.jsonl" 2>>"$out/gpu-torch.err" ||
					echo "torch gibbs $run failed: $(tail -1 "$out/gpu-torch.err")"
			done
			cut -c1-160 "$out/gpu-torch.jsonl" 2>/dev/null || true
		else
			echo "SKIPPED the PyTorch GPU peer: $gpy has no torch with CUDA"
		fi
		# Issue 29's ESS per second on DISCS's targets with Gibbs on the GPU
		# (full size: 100 chains, the published run's sweeps; seconds).
		if phase "DISCS's targets with Gibbs on the GPU" 30; then
			timeout "$(tmo 180)" "$dir/dstein" experiment discs --device cuda --methods gibbs --out-dir "$out/discs-gpu" >"$out/discs-gpu.txt" 2>&1 ||
				echo "dstein experiment discs --device cuda: exit $?"
			grep -E "^[0-9]\.|^ +gibbs|largest ESS/s|best published" "$out/discs-gpu.txt" || true
		fi
		# The paper's RBM experiment with its GPU paths (quick size): the
		# device_stages column says which methods ran there.
		if phase "rbm-n --quick with its GPU paths" 30; then
			timeout "$(tmo 120)" "$dir/dstein" experiment rbm-n --quick --device cuda --out-dir "$out/rbm-n-gpu" >"$out/rbm-n-gpu.txt" 2>&1 ||
				echo "dstein experiment rbm-n --device cuda: exit $?"
			tail -5 "$out/rbm-n-gpu.txt" || true
		fi
	fi
	procs=(1 2 "$ncpu")
	bench() { # bench PKG PATTERN BENCHTIME COUNT: at each GOMAXPROCS, from the package's directory (testdata)
		local p=$1 pat=$2 bt=$3 count=$4 name
		[ -z "${QUICK:-}" ] || bt=1x count=1
		name=$(echo "$p" | tr / -)
		for g in "${procs[@]}"; do
			[ "$(left)" -ge 5 ] || return 0
		(cd "$root/$p" && GOMAXPROCS=$g timeout "$(tmo 300)" "$dir/$name.test" -test.run '^$' -test.bench "$pat" \
				-test.benchtime "$bt" -test.count "$count" -test.benchmem) |
				grep -E '^Benchmark' | sed "s/^/gomaxprocs=$g /" >>"$out/bench.txt" || true
		done
	}
	# GOMAXPROCS 2 on a 2-CPU mask: the machine's cores as the
	# development machine has them.
	pinned() {
		local p=$1 pat=$2 bt=$3 count=$4 name
		[ -z "${QUICK:-}" ] || bt=1x count=1
		name=$(echo "$p" | tr / -)
		command -v taskset >/dev/null || return 0
		[ "$(left)" -ge 5 ] || return 0
		(cd "$root/$p" && GOMAXPROCS=2 timeout "$(tmo 300)" taskset -c 0,1 "$dir/$name.test" -test.run '^$' -test.bench "$pat" \
			-test.benchtime "$bt" -test.count "$count") |
			grep -E '^Benchmark' | sed "s/^/pinned2 /" >>"$out/bench.txt" || true
	}
	# The same pinned run on the AVX2 kernels (GODEBUG=cpu.avx512f=off), to
	# compare with the AVX-512 ones on this CPU (issue 30).
	pinned_avx2() {
		local p=$1 pat=$2 bt=$3 count=$4 name
		[ -z "${QUICK:-}" ] || bt=1x count=1
		name=$(echo "$p" | tr / -)
		command -v taskset >/dev/null || return 0
		[ "$(left)" -ge 5 ] || return 0
		(cd "$root/$p" && GODEBUG=cpu.avx512f=off GOMAXPROCS=2 timeout "$(tmo 300)" taskset -c 0,1 "$dir/$name.test" -test.run '^$' \
			-test.bench "$pat" -test.benchtime "$bt" -test.count "$count") |
			grep -E '^Benchmark' | sed "s/^/pinned2-avx2 /" >>"$out/bench.txt" || true
	}
	: >"$out/bench.txt"
	if phase "GF-SVGD and its direction" 120; then
		bench sampler/gfsvgd 'StepRBM' 20x 5
		pinned sampler/gfsvgd 'StepRBM' 20x 5
		pinned_avx2 sampler/gfsvgd 'StepRBM' 20x 5
		bench svgd 'Direction/float64' 20x 5
	fi
	if phase "parallel tempering, Gibbs, the gradient samplers" 120; then
		bench sampler/pt 'Iteration$|IterationFourChains' 100x 5
		pinned sampler/pt 'Iteration$|IterationFourChains' 100x 5
		bench sampler/gibbs '.' 50x 5
		bench sampler/gwg 'Sweep$|MultiStep$' 50x 5
		bench sampler/dmala '.' 50x 5
		bench sampler/dlmc 'Step$' 50x 5
		bench sampler/pas '.' 50x 5
	fi
	if phase "kernels (gemm, vexp, RBF, the pool)" 60; then
		bench internal/gemm 'ABt' 20x 3
		pinned internal/gemm 'ABt/dstein|FMAPeak' 20x 3
		pinned_avx2 internal/gemm 'ABt/dstein|FMAPeak' 20x 3
		bench internal/vexp '.' 1000x 3
		bench kernel '.' 20x 3
		bench internal/parallel '.' 1000x 3
	fi
	if phase "dstein sample as users run it" 90; then
		ex=$root/examples
		for g in "${procs[@]}"; do
			for args in "--model $ex/rbm-random.json" "--model $ex/ising-grid.json" \
				"--model $ex/rbm-random.json --method pt --chains 4 --draws 1000"; do
				# shellcheck disable=SC2086
				timed "$out/time.txt" env GOMAXPROCS="$g" timeout "$(tmo 120)" "$dir/dstein" sample $args \
					--seed 1 --out "$out/s.csv" >/dev/null || { cat "$out/time.txt"; continue; }
				echo "gomaxprocs=$g dstein sample $args: $(tail -1 "$out/time.txt")" | sed "s|$ex/||" >>"$out/sample.txt"
				sha256sum "$out/s.csv" | sed "s|  .*| gomaxprocs=$g $args|; s|$ex/||" >>"$out/sample-sha256.txt"
				rm -f "$out/s.csv"
			done
		done
		rm -f "$out/s.csv" "$out/time.txt"
		cat "$out/sample.txt" 2>/dev/null || echo "no run of dstein sample finished"
		[ -s "$out/sample-sha256.txt" ] && echo "identical outputs across GOMAXPROCS: $(awk '{k=$0; sub(/^[^ ]+ gomaxprocs=[0-9]+ /, "", k); h[k]=h[k] " " $1} END{ok=1; for (k in h) {split(h[k], a, " "); for (i in a) if (a[i] != a[1]) ok=0}; print ok ? "yes" : "NO"}' "$out/sample-sha256.txt")"
		true
	fi
	if phase "bit-identity: the determinism tests at each CPU feature path" 60; then
		# Tests that compare results across core counts and against the
		# pure-Go kernels; each GODEBUG switches a CPU feature path off.
		for gd in "" "cpu.avx512f=off" "cpu.avx2=off,cpu.fma=off"; do
			for p in internal/gemm internal/vexp transform svgd sampler/gfsvgd; do
				name=$(echo "$p" | tr / -)
				if [ "$(left)" -lt 10 ]; then
					echo "SKIPPED tests $p GODEBUG=${gd:-none}: $(left) s of the budget left"
					continue
				fi
				rc=0
				(cd "$root/$p" && GODEBUG=$gd GOMAXPROCS=$ncpu timeout "$(tmo 300)" "$dir/$name.test" -test.short -test.count 1 >"$out/test.txt" 2>&1) || rc=$?
				if [ "$rc" = 0 ]; then
					echo "tests $p GODEBUG=${gd:-none} GOMAXPROCS=$ncpu: ok"
				elif [ "$rc" = 124 ]; then
					echo "tests $p GODEBUG=${gd:-none} GOMAXPROCS=$ncpu: stopped at the budget's end (not a failure)"
				else
					echo "tests $p GODEBUG=${gd:-none} GOMAXPROCS=$ncpu: FAILED (exit $rc)"
					tail -20 "$out/test.txt"
				fi
			done
		done | tee "$out/identity.txt"
		rm -f "$out/test.txt"
	fi
	if phase "peers (numpy, PyTorch) at 2 pinned and all cores" 150; then
		local py=${PYTHON:-python3}
		if "$py" -c 'import numpy, torch' 2>/dev/null; then
			for th in 2 "$ncpu"; do
				PYTHON=$py DSTEINPEER=$dir/dsteinpeer THREADS=$th ROUNDS=1 PEERS_OUT="$out/peers-$th" \
					NOTE="device-cores.sh, $th threads" timeout "$(tmo 150)" "$root/benchmarks/peers/run.sh" >"$out/peers-$th.log" 2>&1 ||
					{ echo "peers at $th threads failed:"; tail -5 "$out/peers-$th.log"; }
			done
		else
			echo "SKIPPED peers: $py does not import numpy and torch"
		fi
	fi
	echo "done in $(($(date +%s) - start)) s"
}

case $cmd in
build) build ;;
run) run ;;
*)
	sed -n '2,18p' "$0" >&2
	exit 2
	;;
esac
