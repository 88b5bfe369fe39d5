#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A clean stop with no session left removes kwitnessd's pins (issue 38: a
# stop left 20 pinned maps behind): the maps, the global links and the pin
# folder itself. A stop with a session open keeps them (the session stays
# enforced for the next start), and once that session is closed, the next
# clean stop removes them.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/kwd_lib.sh"

kwd_require
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mountpoint -q /sys/fs/bpf || kt_skip_all "no bpffs at /sys/fs/bpf"
KT_PIN=/sys/fs/bpf/kwitness-test-pins-$$
POLICY=$(policy_file p '{"kwitness_policy":1,"mode":"enforce","net":{"connect":[]}}')

kwd_start --pin-dir "$KT_PIN"
n=$(find "$KT_PIN" -maxdepth 1 ! -type d | wc -l)
check "running: the maps are pinned ($n)" test "$n" -gt 0
kwd_stop
expect_eq "a clean stop with no session: exit 0, the pin folder is gone" "0 gone" \
	"$? $(test -e "$KT_PIN" && echo "left: $(find "$KT_PIN" | wc -l) entries" || echo gone)"

kwd_start --pin-dir "$KT_PIN"
CG=$(cg_make s1)
SID=$(session_open "$CG" "$POLICY")
check "a session opens" test -n "$SID"
kwd_stop
check "a stop with a session open keeps its pins" test -d "$KT_PIN/sessions"
kwd_start --pin-dir "$KT_PIN"
session_close "$SID" >/dev/null
expect_eq "the resumed session closes" 0 "$?"
kwd_stop
check "the stop after its close removes the pins" test ! -e "$KT_PIN"
finish
