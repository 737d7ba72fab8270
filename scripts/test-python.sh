#!/usr/bin/env bash
# Installs the Python package (python/) into a fresh virtual environment that
# sees Debian's numpy, pandas and xarray, as the README's Python section
# does, and runs its tests (python/tests, the README's example included).
# Needs /usr/bin/python3 with python3-venv, python3-setuptools,
# python3-wheel, python3-numpy, python3-pandas and python3-xarray, and Go.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-/usr/bin/python3}
venv=$(mktemp -d)/venv
trap 'rm -rf "$(dirname "$venv")"' EXIT
"$py" -m venv --system-site-packages "$venv"
"$venv/bin/pip" install -q --no-build-isolation ./python
# Build artefacts that pip leaves in the source tree.
rm -rf python/build python/dstein.egg-info
"$venv/bin/python" -m unittest discover -s python/tests -v
