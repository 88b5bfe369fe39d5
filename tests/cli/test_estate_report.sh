#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Reports that never overstate (issue 31), read as an auditor would, in
# headless Chromium's DOM: an advisory session's denials are marked "not
# enforced" in every table and on the timeline, with the enforcement mode
# at the top; a record that does not verify leads with INVALID and the
# failing step, nothing on its page is styled as verified (no green in the
# DOM's classes nor in the screenshot's pixels) and its content is shown only
# as claimed by the record; the model provider, model id and data class are
# shown. Synthetic sessions (kw-loggen), really signed; from files and from
# the estate database.
source "$(dirname "$0")/../lib.sh"

LOGGEN=$KW_BUILD/tests/kw-loggen
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ ! -x "$KW" ] || [ ! -x "$LOGGEN" ]; then
	not_ok "kwitness or kw-loggen is not built"
	finish
fi
if [ -z "$CHROMIUM" ]; then
	not_ok "chromium not installed (scripts/deps.sh installs it)"
	finish
fi
T=$(mktemp -d /tmp/kw-estate-report.XXXXXX)
trap 'rm -rf "$T"' EXIT
printf '{"kwitness_policy":1,"mode":"advisory","net":{"connect":["10.0.0.0/8:443"]}}\n' >"$T/bundle"
BH=$(sha256sum "$T/bundle" | cut -c1-64)
IMAGE=sha256:$(printf 'a%.0s' $(seq 64))
"$KW" keygen --out "$T/key.pem" >/dev/null
mkdir -p "$T/trust" "$T/st/records" "$T/st/logs" "$T/st/policies"
"$KW" key show --key "$T/key.pem" --jwk >"$T/trust/h.jwk"
cp "$T/bundle" "$T/st/policies/$BH"

# make_session MODE SEED: a signed session in $T/st; prints its id.
make_session() {
	local mode=$1 seed=$2 sid th c
	sid=$(printf 'report-%s' "$seed" | sha256sum | cut -c1-32)
	"$LOGGEN" --decisions 40 --session "$sid" --sandbox-id "spiffe://t/r/$seed" --mode "$mode" \
		--bundle-hash "sha256:$BH" --image-digest "$IMAGE" --seed "$seed" --hostname h \
		--machine-id mid-h --hash-out "$T/hash" >"$T/st/logs/$sid.jsonl"
	read -r th c <"$T/hash"
	"$KW" record build --sandbox-id "spiffe://t/r/$seed" --image-digest "$IMAGE" --policy "$T/bundle" \
		--transcript-hash "$th" --call-count "$c" --enforcement-mode "$mode" \
		--model-provider acme-models --model-id acme-7b --data-class confidential >"$T/unsigned"
	"$KW" sign --key "$T/key.pem" "$T/unsigned" >"$T/st/records/$sid.json"
	echo "$sid"
}
chrome() { # ARGS...
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" \
		--disable-background-networking --disable-component-update --disable-sync --no-first-run \
		--disable-default-apps --disable-extensions --no-default-browser-check \
		--host-resolver-rules="MAP * ~NOTFOUND" "$@" 2>/dev/null
}
# The DOM's text of element id ID (tags dropped).
text_of() { python3 -c "$TEXT_PY" "$2" <<<"$1"; } # DOM ID
TEXT_PY=$(cat <<'PY'
import sys, html.parser
want = sys.argv[1]
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.depth = 0; s.out = []
    def handle_starttag(s, tag, attrs):
        if s.depth: s.depth += 1; s.out.append(" " if tag in ("td", "th", "tr", "p") else "")
        elif dict(attrs).get("id") == want: s.depth = 1
    def handle_endtag(s, tag):
        if s.depth: s.depth -= 1
    def handle_data(s, d):
        if s.depth: s.out.append(d)
p = P(); p.feed(sys.stdin.read()); print(" ".join("".join(p.out).split()))
PY
)

ADV=$(make_session advisory 1)
DENIED=$(grep -c '"decision":"deny"' "$T/st/logs/$ADV.jsonl")
check "the advisory session has denials (they were logged, not enforced)" test "$DENIED" -gt 0

# advisory_suite LABEL HTML
advisory_suite() {
	local l=$1 dom
	dom=$(chrome --dump-dom "file://$2")
	check "$l: chromium renders the page" grep -q 'id="verdict"' <<<"$dom"
	check "$l: the enforcement mode is at the top, before the verification" \
		bash -c 'head -c "$(grep -bo "<h2>Verification" <<<"$1" | cut -d: -f1)" <<<"$1" | grep -q "id=\"mode\""' _ "$dom"
	check "$l: the mode line says advisory and that $DENIED denials were not enforced" \
		grep -q "^Enforcement mode: advisory\. $DENIED denials were not enforced" <<<"$(text_of "$dom" mode)"
	check "$l: the denials heading says not enforced" grep -q "Denials ($DENIED, not enforced)" <<<"$dom"
	expect_eq "$l: every row of the denials table says not enforced" "$DENIED" \
		"$(grep -o '<td class="warn">not enforced</td>' <<<"$(text_of_html "$dom" denials)" | wc -l)"
	expect_eq "$l: every deny mark of the timeline says not enforced" "$DENIED $DENIED" \
		"$(grep -c '<rect class="mark deny" data-enforced="no"' <<<"$dom") $(grep -o 'deny (not enforced)' <<<"$dom" | wc -l)"
	check "$l: the per-tool table counts them not enforced" \
		grep -q "net.connect [0-9]* $DENIED $DENIED not enforced" <<<"$(text_of "$dom" tools)"
	check "$l: model provider, model id and data class shown" \
		grep -q "model provider acme-models model id acme-7b data class confidential" <<<"$(text_of "$dom" session)"
}
# The HTML inside element id ID.
text_of_html() { tr '\n' ' ' <<<"$1" | grep -o "id=\"$2\".*" | sed 's,</table>.*,,'; }

"$KW" report --html "$T/adv.html" --key "$T/trust/h.jwk" --log "$T/st/logs/$ADV.jsonl" \
	--policy "$T/bundle" "$T/st/records/$ADV.json"
expect_eq "report: the advisory session verifies" 0 $?
advisory_suite "report" "$T/adv.html"
"$KW" estate ingest --create --db "sqlite:$T/e.sqlite" --trust "$T/trust" "$T/st" >/dev/null
"$KW" estate report --db "sqlite:$T/e.sqlite" --trust "$T/trust" --session "$ADV" --html "$T/adv-db.html"
expect_eq "estate report: the stored advisory session verifies" 0 $?
advisory_suite "estate report" "$T/adv-db.html"
out=$("$KW" report --key "$T/trust/h.jwk" --log "$T/st/logs/$ADV.jsonl" --policy "$T/bundle" "$T/st/records/$ADV.json")
check "report (text): the mode with its unenforced denials, the model" \
	bash -c 'grep -q "^mode: advisory ($2 denials not enforced)" <<<"$1" && grep -q "^model: acme-models acme-7b" <<<"$1" &&
		grep -q "^data class: confidential" <<<"$1" && grep -q "^denied (not enforced): " <<<"$1"' _ "$out" "$DENIED"

# A record whose log was changed after signing: a permit turned into a
# deny (still canonical), so the transcript hash no longer matches.
BAD=$(make_session enforce 2)
sed -i '0,/"decision":"permit","enforced":false/s//"decision":"deny","enforced":false/' "$T/st/logs/$BAD.jsonl"
"$KW" report --html "$T/bad.html" --key "$T/trust/h.jwk" --log "$T/st/logs/$BAD.jsonl" \
	--policy "$T/bundle" "$T/st/records/$BAD.json"
expect_eq "report: the tampered session exits 1" 1 $?
dom=$(chrome --dump-dom "file://$T/bad.html")
expect_eq "invalid: the first thing the page says is INVALID" \
	"INVALID: the record does not verify" "$(text_of "$dom" verdict)"
check "invalid: the verdict comes right after the title" \
	bash -c 'tr "\n" " " <<<"$1" | grep -q "</h1> *<p id=\"verdict\" class=\"invalid\">INVALID"' _ "$dom"
check "invalid: the failing step and its reason code" \
	grep -q "^Failed step: the decision log against the record's transcript hash: transcript_mismatch" <<<"$(text_of "$dom" failed)"
check "invalid: nothing is styled as verified (no class valid or ok)" \
	bash -c '! grep -Eq "class=\"(valid|ok)\"" <<<"$1"' _ "$dom"
check "invalid: the session, timeline, denials, tools and policy are claimed by the record" \
	bash -c '[ "$(grep -c "<h2>Claimed by the record: " <<<"$1")" -eq 6 ] && grep -q "id=\"claimed\"" <<<"$1"' _ "$dom"
check "invalid: ...and nothing of them outside the claimed section" \
	bash -c '! tr "\n" " " <<<"$1" | sed "s,<div id=\"claimed\".*,," | grep -Eq "id=\"(session|denials|tools|timeline|policy)\""' _ "$dom"
chrome --window-size=1200,2400 --screenshot="$T/bad.png" "file://$T/bad.html" >/dev/null
# green_pixels PNG: pixels of the page's green (#0a0 and its antialiased
# edges: green high, red and blue low), decoded with Python's zlib alone.
green_pixels() { python3 -c "$GREEN_PY" "$1"; }
GREEN_PY=$(cat <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, w = 8, b"", 0
while pos < len(d):
    n, t = struct.unpack(">I4s", d[pos:pos + 8]); c = d[pos + 8:pos + 8 + n]; pos += 12 + n
    if t == b"IHDR": w, h, depth, ctype = struct.unpack(">IIBB", c[:10])
    if t == b"IDAT": idat += c
bpp = {2: 3, 6: 4}[ctype]; assert depth == 8
raw = zlib.decompress(idat); stride = w * bpp; prev = bytearray(stride); n = 0; i = 0
for y in range(h):
    f = raw[i]; line = bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0; b = prev[x]; cc = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - cc; pa, pb, pc = abs(p - a), abs(p - b), abs(p - cc)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else cc)) & 255
    for x in range(0, stride, bpp):
        r, g, bl = line[x], line[x + 1], line[x + 2]
        n += g > 120 and r < 80 and bl < 80
    prev = line
print(n)
PY
)
green=$(green_pixels "$T/bad.png")
expect_eq "invalid: the screenshot has no green pixel" 0 "$green"
mkdir -p "$KW_BUILD/test-artifacts" && cp "$T/bad.png" "$KW_BUILD/test-artifacts/estate-report-invalid.png"
# The control: a valid page does show green (the check can see it).
"$KW" report --html "$T/adv.html" --key "$T/trust/h.jwk" --log "$T/st/logs/$ADV.jsonl" \
	--policy "$T/bundle" "$T/st/records/$ADV.json" >/dev/null
chrome --window-size=1200,2400 --screenshot="$T/good.png" "file://$T/adv.html" >/dev/null
expect_eq "(control) the valid page's screenshot has green pixels" 1 \
	"$(test "$(green_pixels "$T/good.png")" -gt 0 && echo 1)"
finish
