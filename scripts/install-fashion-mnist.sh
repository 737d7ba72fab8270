#!/bin/sh
# Installs Fashion-MNIST from the Debian package dataset-fashion-mnist into
# /usr/share/datasets/fashion-mnist, where `dstein bnn train --data fashion`
# looks for it. Needs root (or sudo) and a reachable Debian mirror.
set -eu
if [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
	echo "Fashion-MNIST is already installed in /usr/share/datasets/fashion-mnist"
	exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq dataset-fashion-mnist
ls -l /usr/share/datasets/fashion-mnist
