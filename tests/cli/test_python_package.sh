#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python package as a user gets it: `pip install ./clients/python` into a
# fresh virtual environment of Debian's Python, offline (--no-index: nothing
# may come from the network, not even build tools), then the installed
# package (not the source tree) imported from elsewhere, its verify held to
# the CLI's verdicts (clients/python/tests/test_verify.py, test_checkpoints.py), and a clean
# uninstall.
. "$(dirname "$0")/../lib.sh"

PY=/usr/bin/python3
if [ ! -x "$PY" ] || ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then
	skip "Debian's python3 with venv is not installed (scripts/deps.sh: python3-venv)"
	finish
fi
T=$(mktemp -d /tmp/kw-pypkg.XXXXXX)
trap 'rm -rf "$T"' EXIT
# The sources are copied: pip may write build files beside them.
cp -r "$KW_ROOT/clients/python" "$T/src"
rm -rf "$T/src/tests"

"$PY" -m venv --system-site-packages "$T/venv" >"$T/venv.log" 2>&1
expect_eq "a virtual environment of Debian's Python is made" 0 $?
"$T/venv/bin/pip" install --no-index --no-cache-dir "$T/src" >"$T/pip.log" 2>&1
rc=$?
expect_eq "pip install ./clients/python succeeds offline (--no-index)" 0 "$rc"
[ "$rc" -eq 0 ] || sed 's/^/#   /' "$T/pip.log" | tail -20

cd "$T" || exit 1
where=$("$T/venv/bin/python" -c 'import kwitness; print(kwitness.__file__)' 2>&1)
case $where in
"$T/venv/lib/"*/site-packages/kwitness/__init__.py) ok "the installed package is the one imported ($where)" ;;
*) not_ok "the installed package is the one imported (got: $where)" ;;
esac
api=$("$T/venv/bin/python" -c 'import kwitness, inspect
print(",".join(n for n in ("sandbox", "verify", "Session", "cgroup2_mount", "pid_cgroup")
               if callable(getattr(kwitness, n, None)) and inspect.getdoc(getattr(kwitness, n))))')
expect_eq "sandbox, verify, Session and the cgroup helpers are exported, with docstrings" \
	"sandbox,verify,Session,cgroup2_mount,pid_cgroup" "$api"
ver=$("$T/venv/bin/pip" show kwitness 2>/dev/null | sed -n 's/^Version: //p')
want=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$KW_ROOT/clients/python/kwitness/__init__.py")
expect_eq "the installed version is kwitness.__version__" "$want" "$ver"
[ -f "$T/venv/lib/python3.11/site-packages/kwitness/py.typed" ] ||
	ls "$T"/venv/lib/python3*/site-packages/kwitness/py.typed >/dev/null 2>&1
expect_eq "the package carries py.typed (its type hints are used by checkers)" 0 $?

out=$(KW_PY_INSTALLED=1 KW=$KW PYTHONDONTWRITEBYTECODE=1 \
	"$T/venv/bin/python" "$KW_ROOT/clients/python/tests/tap.py" test_verify test_checkpoints 2>&1)
rc=$?
n=$(grep -c '^ok ' <<<"$out")
if [ "$rc" -eq 0 ] && [ "$n" -ge 6 ] && ! grep -q SKIP <<<"$out"; then
	ok "the installed package's verify gives the CLI's reason codes on tampered records and checkpoints ($n tests)"
else
	not_ok "the installed package's verify gives the CLI's reason codes on tampered records and checkpoints"
	sed 's/^/#   /' <<<"$out" | tail -30
fi

"$T/venv/bin/pip" uninstall -y kwitness >"$T/pip-un.log" 2>&1
left=$(find "$T"/venv/lib/python3*/site-packages -maxdepth 1 -iname 'kwitness*' | wc -l)
expect_eq "pip uninstall kwitness leaves nothing of it" 0 "$left"
finish
