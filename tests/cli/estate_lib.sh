# SPDX-License-Identifier: Apache-2.0
# Synthetic kwitnessd state folders for the estate suites: kw-loggen logs
# and records really built and signed. Source it after tests/lib.sh with T
# (the test's folder), LOGGEN, IMAGE, $T/bundle and BH (its sha256 hex) set.

# estate_session HOST N SEED SIGN [LOGGEN ARGS]: a session of N decisions in
# host folder $T/hosts/HOST, signed by HOST's key ($T/HOST.pem, trusted in
# $T/trust); `SIGN HOST UNSIGNED RECORD` turns the built record into the
# signed one. Prints the session id.
estate_session() {
	local h=$1 n=$2 seed=$3 sign=$4 sid th c
	shift 4
	mkdir -p "$T/hosts/$h/records" "$T/hosts/$h/logs" "$T/hosts/$h/policies" "$T/trust"
	cp "$T/bundle" "$T/hosts/$h/policies/$BH"
	[ -f "$T/$h.pem" ] || {
		"$KW" keygen --out "$T/$h.pem" >/dev/null
		"$KW" key show --key "$T/$h.pem" --jwk >"$T/trust/$h.jwk"
	}
	sid=$(printf '%s-%s' "$h" "$seed" | sha256sum | cut -c1-32)
	"$LOGGEN" --decisions "$n" --session "$sid" --sandbox-id "spiffe://t/$h/$seed" \
		--bundle-hash "sha256:$BH" --image-digest "$IMAGE" --seed "$seed" --hostname "$h" \
		--machine-id "mid-$h" --hash-out "$T/hash" "$@" >"$T/hosts/$h/logs/$sid.jsonl"
	read -r th c <"$T/hash"
	"$KW" record build --sandbox-id "spiffe://t/$h/$seed" --image-digest "$IMAGE" --policy "$T/bundle" \
		--transcript-hash "$th" --call-count "$c" --enforcement-mode enforce \
		--model-provider anthropic --model-id claude-x >"$T/unsigned"
	"$sign" "$h" "$T/unsigned" "$T/hosts/$h/records/$sid.json"
	echo "$sid"
}

# A SIGN for estate_session: `kwitness sign` alone (no transparency).
estate_sign_plain() { "$KW" sign --key "$T/$1.pem" "$2" >"$3"; }
