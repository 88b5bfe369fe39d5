#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs every Debian package kwitness needs to build, test, benchmark and
# run its VM tests (Go and golang.org/x/mod only for the tests: the independent
# transparency-log checker tests/go/tlogcheck.go), and the npm package the tests use as an independent RFC
# 8785 implementation (into build/npm, never system-wide). Idempotent. With
# --if-missing it does nothing when everything is already there (so `make
# check` stays fast).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
	build-essential clang llvm make pkg-config libclang-rt-14-dev
	libbpf-dev bpftool libelf-dev zlib1g-dev
	libssl-dev libjansson-dev libcmocka-dev libtss2-dev
	swtpm swtpm-tools tpm2-tools
	iproute2 util-linux procps jq openssl locales libcap2-bin
	qemu-system-x86 busybox-static cpio e2fsprogs xz-utils zstd lz4 binutils
	nodejs
	golang-go golang-golang-x-mod-dev
	runc crun bubblewrap python3 python3-venv python3-pip python3-cryptography man-db systemd auditd
	libsqlite3-dev sqlite3 libpq-dev postgresql chromium
	podman catatonit containerd python3-grpcio python3-grpc-tools python3-kubernetes python3-yaml
	prometheus
	python3-jsonschema
)
# The canonicalize package (Apache-2.0), the test oracle for canonical JSON.
NPM_DIR=build/npm
NPM_PACKAGE=canonicalize
NPM_VERSION=5.1.0
# The OpenTelemetry project's OTLP message types (Apache-2.0; 0.52 is the
# last with the protobufjs-generated root that decodes requests): the
# receiver of tests/helpers/otlp_receiver.js.
NPM_OTLP=@opentelemetry/otlp-transformer
NPM_OTLP_VERSION=0.52.1

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# Some nodejs builds carry npm themselves; Debian's own comes as a package.
command -v npm >/dev/null || missing+=(npm)

npm_installed() {
	[ -f "$NPM_DIR/node_modules/$NPM_PACKAGE/package.json" ] &&
		grep -q "\"version\": *\"$NPM_VERSION\"" "$NPM_DIR/node_modules/$NPM_PACKAGE/package.json" &&
		grep -q "\"version\": *\"$NPM_OTLP_VERSION\"" "$NPM_DIR/node_modules/$NPM_OTLP/package.json" 2>/dev/null
}

if [ "${1:-}" = "--if-missing" ] && [ ${#missing[@]} -eq 0 ] && npm_installed; then
	exit 0
fi

if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
	echo "deps: all ${#PACKAGES[@]} packages installed"
fi

if ! npm_installed; then
	echo "deps: npm $NPM_PACKAGE@$NPM_VERSION $NPM_OTLP@$NPM_OTLP_VERSION into $NPM_DIR"
	mkdir -p "$NPM_DIR"
	npm install --silent --no-audit --no-fund --no-save --no-package-lock \
		--prefix "$NPM_DIR" "$NPM_PACKAGE@$NPM_VERSION" "$NPM_OTLP@$NPM_OTLP_VERSION" >/dev/null
fi
echo "deps: done"
