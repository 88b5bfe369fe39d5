# SPDX-License-Identifier: Apache-2.0
"""The TRACE v0.2 Trust Record schema (agentrust's trace-claim.json, JSON
Schema draft 2020-12) as tables, for kwitness.verify: required members,
closed objects, types, enums, patterns, minimums, the RFC 3986 grammar of
``format: uri`` and the schema's allOf. docs/record.md lists each rule and its
source. An error names the JSON path and the rule, as kwitness verify does."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

__all__ = ["PROFILE", "SchemaError", "validate", "is_integer", "DIGEST_RE"]

PROFILE = "tag:agentrust-io.com,2026:trace-v0.2"
# kwitness --record-profile trace-v0.3-draft; kwitness.verify refuses it.
PROFILE_V03_DRAFT = "tag:agentrust-io.com,2026:trace-v0.3"
DIGEST_RE = re.compile(r"sha(256:[0-9a-f]{64}|384:[0-9a-f]{96})")

_PLATFORMS = ("intel-tdx", "amd-sev-snp", "azure-cvm-sev-snp", "nvidia-h100", "nvidia-blackwell",
              "aws-nitro", "arm-cca", "google-confidential-space", "tpm2", "software-only")
_MODES = ("enforce", "advisory", "silent", "declared")
_ORIGIN_KINDS = ("self", "third-party-control-plane", "log-import")
_DEPTHS = ("surface", "builder", "transitive")
_STATUSES = ("affirming", "warning", "contraindicated", "none")
_JWK_PRIVATE = ("d", "p", "q", "dp", "dq", "qi", "k")


class SchemaError(ValueError):
    """The record breaks a rule of the schema; str() names the path and the rule."""


# RFC 3986 appendix A, with IP literals checked apart (below).
_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT = r"%[0-9A-Fa-f]{2}"
_PCHAR = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_URI_RE = re.compile(
    rf"(?P<scheme>[A-Za-z][A-Za-z0-9+\-.]*):"
    rf"(?:(?://(?P<authority>[^/?#]*)(?P<abempty>(?:/{_PCHAR}*)*))"
    rf"|(?P<path>/?(?:{_PCHAR}+(?:/{_PCHAR}*)*)?))"
    rf"(?:\?(?:{_PCHAR}|[/?])*)?"
    rf"(?:#(?:{_PCHAR}|[/?])*)?")
_USERINFO_RE = re.compile(rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*")
_REGNAME_RE = re.compile(rf"(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*")
_IPVFUTURE_RE = re.compile(rf"v[0-9A-Fa-f]+\.[{_UNRESERVED}{_SUB_DELIMS}:]+")


def _authority_ok(a: str) -> bool:
    userinfo, at, hostport = a.rpartition("@")
    if at and not _USERINFO_RE.fullmatch(userinfo):
        return False
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            return False
        literal, rest = hostport[1:end], hostport[end + 1:]
        if _IPVFUTURE_RE.fullmatch(literal) is None:
            try:
                ipaddress.IPv6Address(literal)
            except ValueError:
                return False
            if "%" in literal:  # zone ids are RFC 6874, not RFC 3986
                return False
    else:
        host, colon, port = hostport.partition(":")
        rest = colon + port
        if not _REGNAME_RE.fullmatch(host):
            return False
    return rest == "" or (rest[0] == ":" and rest[1:].isascii() and
                          (rest[1:] == "" or rest[1:].isdigit()))


def uri_ok(s: str) -> bool:
    """An RFC 3986 URI (scheme, hierarchical part, query, fragment)."""
    if not s.isascii():
        return False
    m = _URI_RE.fullmatch(s)
    if m is None:
        return False
    return m.group("authority") is None or _authority_ok(m.group("authority"))


def is_integer(v: Any) -> bool:
    """JSON Schema 2020-12 counts 1.0 as an integer."""
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, float) and v.is_integer())


# A field: (name, type, required, rule). type: "string", "integer" or a
# table (an object). rule: None, a tuple of allowed values, or one of the
# names below; for integers, a (min, max) pair.
_S, _I = "string", "integer"

_MODEL = [("provider", _S, True, None), ("model_id", _S, True, None), ("version", _S, False, None),
          ("weights_digest", _S, False, "digest"), ("aibom_uri", _S, False, "uri")]
_RUNTIME = [("platform", _S, True, _PLATFORMS), ("measurement", _S, True, "digest"),
            ("rim_uri", _S, False, "uri"), ("nonce", _S, False, None),
            ("firmware_version", _S, False, None)]
_POLICY = [("bundle_hash", _S, True, "digest"), ("enforcement_mode", _S, True, _MODES),
           ("version", _S, False, None), ("policy_uri", _S, False, "uri")]
_TRANSCRIPT = [("hash", _S, True, "digest"), ("call_count", _I, False, (0, None)),
               ("transcript_uri", _S, False, "uri")]
_DELEGATION = [("parent_record_hash", _S, True, "digest"), ("credential_id", _S, True, "minlen1")]
_ORIGIN = [("kind", _S, True, _ORIGIN_KINDS), ("producer", _S, True, "minlen1"),
           ("source_event_id", _S, False, "minlen1"),
           ("ingested_at", _I, False, (1700000000, None))]
_BUILD = [("slsa_level", _I, True, (0, 3)), ("builder", _S, False, None),
          ("digest", _S, True, "digest"), ("provenance_uri", _S, False, "uri"),
          ("provenance_depth", _S, False, _DEPTHS)]
_APPRAISAL = [("status", _S, True, _STATUSES), ("verifier", _S, True, "uri"),
              ("policy_ref", _S, False, "uri"), ("timestamp", _I, False, (None, None)),
              ("provenance_depth_verified", _S, False, _DEPTHS)]
_JWK = [("kty", _S, True, None), ("crv", _S, False, None), ("x", _S, False, None),
        ("y", _S, False, None), ("kid", _S, False, None)]
_CNF = [("jwk", _JWK, True, "jwk")]
_RECORD = [("eat_profile", _S, True, (PROFILE,)), ("iat", _I, True, (1700000000, None)),
           ("subject", _S, True, "subject"), ("model", _MODEL, True, None),
           ("runtime", _RUNTIME, True, None), ("policy", _POLICY, True, None),
           ("data_class", _S, True, None), ("tool_transcript", _TRANSCRIPT, False, None),
           ("delegation", _DELEGATION, False, None), ("origin", _ORIGIN, False, None),
           ("build_provenance", _BUILD, True, None), ("appraisal", _APPRAISAL, True, None),
           ("transparency", _S, False, "uri"), ("cnf", _CNF, True, None),
           ("signature", _S, False, "signature")]
_OPEN_OBJECTS = (_JWK,)  # cnf.jwk may carry alg, use, ...


def _string(path: str, name: str, s: str, rule: Any) -> None:
    where = f"{path}.{name}"
    if isinstance(rule, tuple):
        if s not in rule:
            if len(rule) == 1:
                raise SchemaError(f'{where}: const (must be "{rule[0]}")')
            raise SchemaError(f'{where}: enum ("{s[:60]}" is not an allowed value)')
    elif rule == "digest":
        if DIGEST_RE.fullmatch(s) is None:
            raise SchemaError(f"{where}: pattern (must be sha256:<64 lowercase hex> or "
                              "sha384:<96 lowercase hex>)")
    elif rule == "uri":
        if not uri_ok(s):
            raise SchemaError(f"{where}: format uri (not an RFC 3986 URI)")
    elif rule == "minlen1":
        if not s:
            raise SchemaError(f"{where}: minLength 1 (must not be empty)")
    elif rule == "subject":
        if not (s.startswith("spiffe://") or s.startswith("did:")):
            raise SchemaError(f"{where}: pattern (must start with spiffe:// or did:)")
    elif rule == "signature":
        if re.fullmatch(r"[A-Za-z0-9_-]+", s) is None:
            raise SchemaError(f"{where}: pattern (must be non-empty base64url)")


def _object(obj: Any, path: str, fields: list) -> None:
    if not isinstance(obj, dict):
        raise SchemaError(f"{path}: type (must be an object)")
    if fields not in _OPEN_OBJECTS:
        names = {f[0] for f in fields}
        for k in obj:
            if k not in names:
                raise SchemaError(f'{path}: additionalProperties false (member "{k[:60]}" '
                                  "is not allowed)")
    for name, typ, required, rule in fields:
        if name not in obj:
            if required:
                raise SchemaError(f'{path}: required (member "{name}" is missing)')
            continue
        v = obj[name]
        if typ == _S:
            if not isinstance(v, str):
                raise SchemaError(f"{path}.{name}: type (must be a string)")
            _string(path, name, v, rule)
        elif typ == _I:
            if not is_integer(v):
                raise SchemaError(f"{path}.{name}: type (must be an integer)")
            lo, hi = rule
            if lo is not None and v < lo:
                raise SchemaError(f"{path}.{name}: minimum {lo}")
            if hi is not None and v > hi:
                raise SchemaError(f"{path}.{name}: maximum {hi}")
        else:
            _object(v, f"{path}.{name}", typ)
            if rule == "jwk":
                _jwk(v, f"{path}.{name}")


def _jwk(jwk: dict, path: str) -> None:
    kty = jwk["kty"]
    if kty in ("OKP", "EC"):
        for need in ("crv", "x") + (("y",) if kty == "EC" else ()):
            if need not in jwk:
                raise SchemaError(f'{path}: required ({kty} keys need member "{need}")')
    if any(k in jwk for k in _JWK_PRIVATE):
        raise SchemaError(f"{path}: private key member not allowed (d, p, q, dp, dq, qi, k)")


def validate(record: Any) -> None:
    """Raises SchemaError naming the first rule the record breaks."""
    _object(record, "$", _RECORD)
    kind = (record.get("origin") or {}).get("kind")
    if kind in ("third-party-control-plane", "log-import") and \
            record["runtime"]["platform"] != "software-only":
        raise SchemaError(f'$.runtime.platform: const software-only (origin.kind "{kind}" '
                          "cannot carry a hardware platform)")
