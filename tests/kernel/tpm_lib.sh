# SPDX-License-Identifier: Apache-2.0
# Helpers for the TPM tests (sourced after tests/lib.sh): a test CA, swtpm
# instances with EK certificates issued by it, each on a free port in a
# private folder. swtpm_cleanup stops every instance started here.
SWTPM_PIDS=()

swtpm_tools_missing() {
	local t
	for t in swtpm swtpm_setup swtpm_localca tpm2_pcrread tpm2_pcrextend openssl jq; do
		command -v "$t" >/dev/null || { echo "$t"; return 0; }
	done
	return 1
}

swtpm_cleanup() {
	local p
	for p in "${SWTPM_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
}

# make_ca DIR NAME: a self-signed CA in DIR (signkey.pem, issuercert.pem) and
# the swtpm_localca/swtpm_setup configuration files that point at it.
make_ca() {
	local dir=$1 name=$2
	mkdir -p "$dir"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/signkey.pem" \
		-out "$dir/issuercert.pem" -days 2 -subj "/CN=$name" \
		-addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null || return 1
	echo 1 >"$dir/certserial"
	cat >"$dir/localca.conf" <<-CONF
	statedir = $dir
	signingkey = $dir/signkey.pem
	issuercert = $dir/issuercert.pem
	certserial = $dir/certserial
	CONF
	: >"$dir/localca.options"
	cat >"$dir/swtpm_setup.conf" <<-CONF
	create_certs_tool = $(command -v swtpm_localca)
	create_certs_tool_config = $dir/localca.conf
	create_certs_tool_options = $dir/localca.options
	active_pcr_banks = sha256
	CONF
}

# swtpm_make DIR CADIR: manufactures a TPM 2.0 state in DIR/state with an RSA
# EK certificate from that CA (also written to DIR/certs/ek-rsa2048.crt).
swtpm_make() {
	mkdir -p "$1/state" "$1/certs"
	swtpm_setup --tpm2 --tpm-state "$1/state" --create-ek-cert --config "$2/swtpm_setup.conf" \
		--write-ek-cert-files "$1/certs" --overwrite >"$1/setup.log" 2>&1
}

# swtpm_start DIR: serves DIR/state on a free port pair; sets TCTI.
swtpm_start() {
	local dir=$1 port pid
	for _ in $(seq 20); do
		port=$((20000 + (RANDOM * 3 + $$) % 40000))
		swtpm socket --tpm2 --tpmstate dir="$dir/state" \
			--server type=tcp,port=$port,bindaddr=127.0.0.1 \
			--ctrl type=tcp,port=$((port + 1)),bindaddr=127.0.0.1 \
			--flags not-need-init,startup-clear >"$dir/swtpm.log" 2>&1 &
		pid=$!
		for _ in $(seq 50); do
			kill -0 $pid 2>/dev/null || break
			if tpm2_pcrread -T "swtpm:host=127.0.0.1,port=$port" sha256:0 >/dev/null 2>&1; then
				SWTPM_PIDS+=("$pid")
				TCTI="swtpm:host=127.0.0.1,port=$port"
				return 0
			fi
			sleep 0.1
		done
		kill $pid 2>/dev/null
		wait $pid 2>/dev/null
	done
	return 1
}

# b64url_file B64URL: decodes base64url (no padding) to stdout.
b64url_dec() {
	local s=$1
	s=$(tr -- '-_' '+/' <<<"$s")
	while [ $(( ${#s} % 4 )) -ne 0 ]; do s="$s="; done
	base64 -d <<<"$s"
}

# thumbprint_of_jwk JSON: RFC 7638 for an OKP key, computed with jq + openssl.
thumbprint_of_jwk() {
	jq -cj '{crv: .crv, kty: .kty, x: .x}' <<<"$1" | openssl dgst -sha256 -binary |
		base64 | tr -- '+/' '-_' | tr -d '=\n'
}
