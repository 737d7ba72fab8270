#!/bin/sh
# Installs what the numpy and PyTorch peers of benchmarks/peers need, from
# Debian's archive (bookworm): python3-numpy, python3-torch and the pthread
# build of OpenBLAS that both link through libblas.so.3 (without it Debian
# may pick the reference BLAS, and the peers would time that instead).
#
# Idempotent: packages already installed are reported and left alone;
# apt-get runs only when something is missing. Recommended packages
# (libtorch-dev, build-essential, ...) are not installed: the peers do not
# compile anything.
set -eu

PKGS="python3-numpy python3-torch libopenblas0-pthread"

missing=""
for p in $PKGS; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		echo "install.sh: $p already installed ($(dpkg-query -W -f='${Version}' "$p"))"
	else
		missing="$missing $p"
	fi
done

if [ -n "$missing" ]; then
	echo "install.sh: installing:$missing"
	if [ "$(id -u)" -ne 0 ]; then
		SUDO=sudo
	else
		SUDO=
	fi
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update
	# shellcheck disable=SC2086
	$SUDO apt-get install -y --no-install-recommends $missing
	for p in $missing; do
		echo "install.sh: installed $p $(dpkg-query -W -f='${Version}' "$p")"
	done
else
	echo "install.sh: nothing to install"
fi

# The peers run on Debian's interpreter, whatever python3 is first on PATH.
/usr/bin/python3 -c 'import numpy, torch; print("install.sh: numpy", numpy.__version__, "torch", torch.__version__)'
