#!/usr/bin/env bash
# Compiles dstein's CUDA kernels with NVIDIA's real runtime compiler (NVRTC)
# and assembles them with ptxas for Hopper (sm_90), on a machine without a
# GPU: the check that the kernels the stand-ins run on the host (go test
# ./gpu) are also CUDA that NVIDIA's tools accept. Debian's non-free archive
# has CUDA 11.8: libnvrtc11.2 is installed with apt-get (the non-free
# component is added to the machine's Debian sources for it), ptxas is
# taken out of the nvidia-cuda-toolkit package without installing it (its
# dependencies are 3 GB). Needs root and apt-get; where they are missing or
# the packages cannot be fetched it says so and exits 0 (SKIP), unless
# STRICT=1.
#
#   scripts/check-kernels.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
skip() {
	echo "check-kernels.sh: SKIPPED: $*"
	[ -z "${STRICT:-}" ] || exit 1
	exit 0
}
cache=${CACHE:-/tmp/dstein-cuda-tools}
ptxas=$cache/usr/bin/ptxas
if ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so\.\(11\.2\|12\|13\)' || [ ! -x "$ptxas" ]; then
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || skip "needs root and apt-get to install NVRTC"
	src=/etc/apt/sources.list.d/debian.sources
	if [ -f "$src" ] && ! grep -q 'non-free' "$src"; then
		sed -i 's/^Components: main$/Components: main contrib non-free/' "$src"
	fi
	apt-get update -qq >/dev/null 2>&1 || skip "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libnvrtc11.2 libnvrtc-builtins11.8 >/dev/null 2>&1 ||
		skip "libnvrtc11.2 could not be installed (Debian's non-free archive)"
	mkdir -p "$cache"
	(cd "$cache" && apt-get download nvidia-cuda-toolkit >/dev/null 2>&1 && dpkg-deb -x nvidia-cuda-toolkit_*.deb . && rm -f nvidia-cuda-toolkit_*.deb) ||
		skip "nvidia-cuda-toolkit (for ptxas) could not be fetched"
fi
cd "$root"
PATH=$cache/usr/bin:$PATH DSTEIN_NVRTC_TEST=1 go test -count=1 -run 'KernelsCompile|RealNVRTC' -v ./gpu ./internal/cuda 2>&1 |
	grep -E '^(---|ok|FAIL)|NVRTC [0-9]|assembled|no ptxas'
