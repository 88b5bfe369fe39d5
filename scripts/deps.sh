#!/usr/bin/env bash
# Installs every Debian package kwitness needs to build, test, benchmark and
# run its VM tests. Idempotent. With --if-missing it does nothing when all the
# packages are already installed (so `make check` stays fast).
set -euo pipefail

PACKAGES=(
	build-essential clang llvm make pkg-config
	libbpf-dev bpftool libelf-dev zlib1g-dev
	libssl-dev libjansson-dev libcmocka-dev libtss2-dev
	swtpm swtpm-tools tpm2-tools
	iproute2 util-linux procps jq openssl
	qemu-system-x86 busybox-static cpio
)

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ "${1:-}" = "--if-missing" ] && [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#PACKAGES[@]} packages installed"
	exit 0
fi

echo "deps: installing ${missing[*]}"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
