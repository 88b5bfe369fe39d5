# SPDX-License-Identifier: Apache-2.0
"""RFC 8785 (JSON Canonicalization Scheme) serialisation, standard library only.

What differs from ``json.dumps(sort_keys=True)``: object members are sorted by
their UTF-16 code units (not by code points), and numbers are written the way
ECMAScript's Number.prototype.toString writes them (shortest round-trip digits,
exponent form only below 1e-6 or from 1e21). Strings escape only '"', '\\' and
the controls below U+0020 (\\b \\t \\n \\f \\r, else \\u00xx); everything else is
written as UTF-8. Numbers must be integers or finite floats within IEEE 754
double range; integers beyond 2^53 are refused, as the I-JSON profile
RFC 8785 builds on asks.
"""

from __future__ import annotations

import decimal
import json
import math
from typing import Any

__all__ = ["canonicalize", "CanonicalizationError", "parse_strict", "MAX_DEPTH"]

# The nesting kwitness's own parser accepts (docs/canonical-json.md).
MAX_DEPTH = 128

_MAX_SAFE = 2**53 - 1

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n",
            "\f": "\\f", "\r": "\\r"}


class CanonicalizationError(ValueError):
    """A value RFC 8785 cannot represent (NaN, infinity, a huge integer, a non-string key)."""


def _string(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch < " ":
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _number(v: float) -> str:
    if isinstance(v, bool):
        raise CanonicalizationError("bool is not a number")
    if isinstance(v, int):
        if abs(v) > _MAX_SAFE:
            raise CanonicalizationError(f"integer {v} is beyond 2^53-1")
        return str(v)
    if not math.isfinite(v):
        raise CanonicalizationError("NaN and infinity have no JSON form")
    if v == 0:
        return "0"
    sign = "-" if v < 0 else ""
    # repr gives the shortest digits that round-trip: value = digits * 10^exp
    t = decimal.Decimal(repr(abs(v))).as_tuple()
    digits = "".join(map(str, t.digits)).lstrip("0")
    exp = t.exponent + (len(t.digits) - len("".join(map(str, t.digits)).rstrip("0")))
    digits = digits.rstrip("0")
    k = len(digits)
    n = k + exp
    # ECMAScript Number::toString, steps 6-10 (n is the exponent of 10 such
    # that the value is 0.digits * 10^n)
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * (-n) + digits
    else:
        exp_s = n - 1
        sign_e = "+" if exp_s >= 0 else "-"
        s = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + sign_e + str(abs(exp_s))
    return sign + s


def _emit(v: Any, out: list[str]) -> None:
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, str):
        out.append(_string(v))
    elif isinstance(v, (int, float)):
        out.append(_number(v))
    elif isinstance(v, (list, tuple)):
        out.append("[")
        for i, x in enumerate(v):
            if i:
                out.append(",")
            _emit(x, out)
        out.append("]")
    elif isinstance(v, dict):
        for k in v:
            if not isinstance(k, str):
                raise CanonicalizationError(f"object key {k!r} is not a string")
        out.append("{")
        for i, k in enumerate(sorted(v, key=lambda s: s.encode("utf-16-be"))):
            if i:
                out.append(",")
            out.append(_string(k))
            out.append(":")
            _emit(v[k], out)
        out.append("}")
    else:
        raise CanonicalizationError(f"{type(v).__name__} has no JSON form")


def canonicalize(value: Any) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of a JSON value (dict, list, str, int, float, bool, None)."""
    out: list[str] = []
    _emit(value, out)
    try:
        return "".join(out).encode("utf-8")
    except UnicodeEncodeError as e:
        raise CanonicalizationError("a string holds a lone surrogate") from e


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for k, v in pairs:
        if k in obj:
            raise CanonicalizationError(f"duplicate member name {k[:60]!r}")
        obj[k] = v
    return obj


def _no_constant(name: str) -> Any:
    raise CanonicalizationError(f"{name} is not JSON")


def _number_in_range(text: str) -> float:
    v = float(text)
    if not math.isfinite(v) or abs(v) > _MAX_SAFE:
        raise CanonicalizationError(f"number {text[:40]} is beyond 2^53-1")
    return v


def _int_in_range(text: str) -> int:
    v = int(text)
    if abs(v) > _MAX_SAFE:
        raise CanonicalizationError(f"number {text[:40]} is beyond 2^53-1")
    return v


def _check_tree(v: Any, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise CanonicalizationError(f"nesting deeper than {MAX_DEPTH}")
    if isinstance(v, str):
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            raise CanonicalizationError("a string holds a lone surrogate") from None
    elif isinstance(v, dict):
        for k, x in v.items():
            _check_tree(k, depth)
            _check_tree(x, depth + 1)
    elif isinstance(v, list):
        for x in v:
            _check_tree(x, depth + 1)


def parse_strict(data: bytes) -> Any:
    """Parses JSON the way kwitness's verifier does (RFC 8785 on I-JSON,
    RFC 7493): valid UTF-8, no duplicate member names, no NaN or Infinity, no
    number beyond +-(2^53 - 1) however it is written, no lone surrogates,
    nesting at most MAX_DEPTH. Raises CanonicalizationError."""
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise CanonicalizationError(f"invalid UTF-8 at byte {e.start}") from None
    try:
        v = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant,
                       parse_float=_number_in_range, parse_int=_int_in_range)
    except RecursionError:
        raise CanonicalizationError(f"nesting deeper than {MAX_DEPTH}") from None
    except json.JSONDecodeError as e:
        raise CanonicalizationError(f"line {e.lineno} column {e.colno}: {e.msg}") from None
    _check_tree(v, 1)
    return v
