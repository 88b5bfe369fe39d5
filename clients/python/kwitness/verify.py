# SPDX-License-Identifier: Apache-2.0
"""kwitness.verify: a TRACE v0.2 Trust Record checked offline, in the order
and with the reason codes of ``kwitness verify`` (docs/record.md,
"Verification order and reason codes"): the record's form, schema, key,
freshness and Ed25519 signature, then its decision log (transcript hash, call
count, the session it names, its own consistency), its policy bundle and
software measurement, completeness, and the log's signed interim checkpoints
(``LOG.checkpoints``: checkpoints.py), whose problems outrank an incomplete or
inconsistent log. Ed25519 comes from the
``cryptography`` package (Debian: python3-cryptography).

This is a second, independent implementation of the checks kwitness's C
verifier makes, in the language most agent frameworks use; the package's
tests hold its verdicts to the CLI's on the same tampered records."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import time
from dataclasses import dataclass
from typing import Any, Union

from . import schema
from .jcs import CanonicalizationError, canonicalize, parse_strict
from .checkpoints import REASONS as CHECKPOINT_REASONS
from .checkpoints import SUFFIX as CHECKPOINT_SUFFIX
from .checkpoints import CheckpointWalk
from .logcheck import LogCheck, check_log

__all__ = ["Verdict", "verify", "LogVerdict", "verify_log", "REASONS", "load_key",
           "jwk_thumbprint"]

PathOrBytes = Union[str, "os.PathLike[str]", bytes]

# Every reason code kwitness.verify gives, with kwitness verify's sentence.
REASONS = {
    "ok": "The record is valid.",
    "record_malformed": "The record is not a JSON object.",
    "profile_missing": "The record has no eat_profile, so it is not a TRACE record.",
    "profile_unsupported": "The record's eat_profile is not TRACE v0.2.",
    "signature_missing": "The record carries no signature.",
    "signature_malformed": "The signature is not canonical unpadded base64url of a 64-byte "
                           "Ed25519 signature.",
    "schema_invalid": "The record does not validate against the TRACE v0.2 schema.",
    "trusted_key_missing": "No trusted key was given, and the key embedded in the record is not "
                           "trusted without an explicit request.",
    "cnf_key_mismatch": "The key in the record's cnf.jwk is not the trusted key (RFC 7638 "
                        "thumbprints differ).",
    "record_in_future": "The record's iat is further in the future than the allowed clock skew.",
    "record_stale": "The record is older than the maximum age allowed.",
    "nonce_mismatch": "The record's runtime.nonce is not the expected nonce.",
    "signature_invalid": "The Ed25519 signature does not match the record's canonical bytes "
                         "under the trusted key.",
    "transcript_mismatch": "The decision log does not reproduce the record's tool_transcript "
                           "hash and call count.",
    "bundle_mismatch": "The policy bundle does not reproduce the record's policy.bundle_hash.",
    "measurement_mismatch": "The image digest and policy bundle do not reproduce the record's "
                            "runtime.measurement.",
    "log_unreadable": "The decision log cannot be read.",
    "log_truncated": "The decision log ends inside a line: it was cut short.",
    "log_line_too_long": "A decision log line is longer than any the collector writes.",
    "log_malformed": "A decision log line is not a JSON object (not JSON, a NUL byte, invalid "
                     "UTF-8, or an empty line).",
    "log_not_canonical": "A decision log line is not in RFC 8785 canonical form, so it is not as "
                         "the collector wrote it.",
    "log_session_mismatch": "The decision log belongs to another session: its open entry does "
                            "not match the record.",
    "log_inconsistent": "The decision log contradicts itself: its sequence numbers, open and "
                        "close entries or trailer counts disagree.",
    "log_incomplete": "The decision log does not hold every decision of the session.",
    **CHECKPOINT_REASONS,
}

# Input limits of kwitness verify (docs/record.md).
RECORD_MAX = 1024 * 1024
BUNDLE_MAX = 16 * 1024 * 1024
KEY_MAX = 64 * 1024


class _Fail(Exception):
    def __init__(self, reason: str, detail: str | None = None):
        super().__init__(reason)
        self.reason, self.detail = reason, detail


@dataclass
class Verdict:
    """What kwitness.verify found. ``valid`` is kwitness verify's exit status 0;
    ``reason`` its reason code ("ok" when valid); ``message`` its sentence and
    detail. ``complete`` is None when no log was read. ``checkpoints`` is
    kwitness verify's checkpoints sentence (its JSON member ``checkpoints``),
    "" when the log has none: the lines its signed checkpoints vouch for
    (``vouched_lines``, the first lines of the log) and the lines after the
    last one (``unvouched_lines``, the close entry not counted)."""

    valid: bool
    reason: str
    message: str
    complete: bool | None = None
    incomplete: str = ""
    warning: str = ""
    transcript_hash: str = ""
    log_entries: int = 0
    decisions: int = 0
    denials: int = 0
    checkpoints: str = ""
    vouched_lines: int = 0
    unvouched_lines: int = 0

    def __bool__(self) -> bool:
        return self.valid


def _b64url(s: str) -> bytes:
    """Canonical unpadded base64url (RFC 4648 section 5), else ValueError."""
    if not isinstance(s, str) or not s.isascii() or "=" in s or len(s) % 4 == 1:
        raise ValueError("not unpadded base64url")
    try:
        raw = base64.b64decode(s + "=" * (-len(s) % 4), altchars=b"-_", validate=True)
    except binascii.Error:
        raise ValueError("not base64url") from None
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode() != s:
        raise ValueError("not canonical base64url")
    return raw


def jwk_thumbprint(jwk: Any) -> str | None:
    """The RFC 7638 thumbprint (unpadded base64url of SHA-256) of a public JWK."""
    members = {"OKP": ("crv", "kty", "x"), "EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n")}
    if not isinstance(jwk, dict) or jwk.get("kty") not in members:
        return None
    need = members[jwk["kty"]]
    if any(not isinstance(jwk.get(k), str) for k in need):
        return None
    digest = hashlib.sha256(canonicalize({k: jwk[k] for k in need})).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _read(what: str, src: PathOrBytes, limit: int) -> bytes:
    if isinstance(src, (bytes, bytearray, memoryview)):
        data = bytes(src)
    else:
        with open(os.fspath(src), "rb") as f:
            data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{what}: larger than {limit} bytes")
    return data


def load_key(key: Any) -> tuple[Any, dict[str, str]]:
    """A trusted Ed25519 key from a public JWK (dict, JSON text or bytes, or a
    file holding one) or a PEM public key (bytes or file). Returns the
    cryptography key and its JWK. Raises ValueError naming what is wrong."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    if isinstance(key, dict):
        data = None
        jwk = key
    else:
        data = _read("key", key.encode() if isinstance(key, str) and key.lstrip().startswith("{")
                     else key, KEY_MAX)
        jwk = None
        if data.lstrip().startswith(b"{"):
            try:
                jwk = parse_strict(data)
            except CanonicalizationError as e:
                raise ValueError(f"key: not a JWK ({e})") from None
    if jwk is not None:
        if not isinstance(jwk, dict) or jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
            raise ValueError("key: not an Ed25519 public JWK (kty OKP, crv Ed25519)")
        if "d" in jwk:
            raise ValueError("key: a private JWK; give the public one (kwitness key show --jwk)")
        try:
            raw = _b64url(jwk.get("x", ""))
            pub = Ed25519PublicKey.from_public_bytes(raw)
        except ValueError:
            raise ValueError("key: the JWK's x is not a 32-byte Ed25519 public key") from None
        return pub, {"crv": "Ed25519", "kty": "OKP", "x": jwk["x"]}
    try:
        pub = serialization.load_pem_public_key(data)
    except ValueError:
        raise ValueError("key: neither a public JWK nor a PEM public key") from None
    if not isinstance(pub, Ed25519PublicKey):
        raise ValueError("key: not an Ed25519 key")
    raw = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return pub, {"crv": "Ed25519", "kty": "OKP",
                 "x": base64.urlsafe_b64encode(raw).rstrip(b"=").decode()}


def _check_signed(rec: Any, key: Any, allow_embedded_key: bool, now: int, max_age: int,
                  skew: int, nonce: str | None) -> tuple[Any, dict[str, str]]:
    """The record itself, in kw_record_verify_signed's order. Returns the key
    it holds under (the trusted one, else its own cnf.jwk)."""
    from cryptography.exceptions import InvalidSignature

    if not isinstance(rec, dict):
        raise _Fail("record_malformed", "(it is valid JSON of another type)")
    if "eat_profile" not in rec:
        raise _Fail("profile_missing")
    if rec["eat_profile"] == schema.PROFILE_V03_DRAFT:
        # The draft's inline TPM evidence needs kwitness verify's appraisal;
        # this verifier says so rather than check half of such a record.
        raise _Fail("profile_unsupported",
                    "(it is the TRACE v0.3 draft, kwitness --record-profile trace-v0.3-draft: "
                    "this verifier checks TRACE v0.2 records only; use kwitness verify)")
    if rec["eat_profile"] != schema.PROFILE:
        raise _Fail("profile_unsupported")
    if "signature" not in rec:
        raise _Fail("signature_missing")
    try:
        sig = _b64url(rec["signature"])
        if len(sig) != 64:
            raise ValueError
    except ValueError:
        raise _Fail("signature_malformed") from None
    try:
        schema.validate(rec)
    except schema.SchemaError as e:
        raise _Fail("schema_invalid", f"({e})") from None
    jwk = rec["cnf"]["jwk"]
    if key is None:
        if not allow_embedded_key:
            raise _Fail("trusted_key_missing")
        try:
            key = load_key(jwk)
        except ValueError:
            raise _Fail("trusted_key_missing",
                        "(the embedded cnf.jwk is not a usable Ed25519 public key)") from None
    pub, trusted_jwk = key
    tp = jwk_thumbprint(trusted_jwk)
    if not hmac.compare_digest(jwk_thumbprint(jwk) or "", tp or "-"):
        raise _Fail("cnf_key_mismatch", f"(trusted key {tp})")
    iat = int(rec["iat"])
    if iat > now + skew:
        raise _Fail("record_in_future", f"(iat {iat}, now {now}, skew {skew} s)")
    if max_age > 0 and now - iat > max_age:
        raise _Fail("record_stale", f"(age {now - iat} s, maximum {max_age} s; an archived "
                                    "record verifies with max_age=0)")
    if nonce is not None:
        have = rec["runtime"].get("nonce")
        if have is None or not hmac.compare_digest(have.encode(), nonce.encode()):
            raise _Fail("nonce_mismatch", None if have is not None else "(the record has none)")
    unsigned = {k: v for k, v in rec.items() if k != "signature"}
    try:
        pub.verify(sig, canonicalize(unsigned))
    except InvalidSignature:
        raise _Fail("signature_invalid") from None
    return key


def _check_identity(rec: dict[str, Any], lc: LogCheck) -> None:
    """The log's open entry must describe the record's session."""
    if lc.open is None:
        return
    pairs = (("sandbox_id", rec.get("subject")),
             ("bundle_hash", rec["policy"].get("bundle_hash")),
             ("image_digest", rec["build_provenance"].get("digest")),
             ("mode", rec["policy"].get("enforcement_mode")))
    for name, want in pairs:
        have = lc.open.get(name)
        if not isinstance(have, str) or have != want:
            raise _Fail("log_session_mismatch",
                        f"(the log's {name} is {json.dumps(have)[:100]}, the record's is "
                        f"\"{str(want)[:100]}\")")


def _digest(alg_of: str, data: bytes) -> str:
    alg = "sha384" if alg_of.startswith("sha384:") else "sha256"
    return f"{alg}:" + hashlib.new(alg, data).hexdigest()


def _check_evidence(rec: dict[str, Any], lc: LogCheck | None, bundle: bytes | None,
                    image_digest: str | None) -> None:
    """kw_record_verify_evidence's order: log, transcript, consistency, bundle,
    measurement (completeness is the caller's, last)."""
    if lc is not None:
        if lc.problem != "ok":
            raise _Fail(lc.problem, f"({lc.why})")
        _check_identity(rec, lc)
        tt = rec.get("tool_transcript")
        if tt is None:
            raise _Fail("transcript_mismatch", "(the record has no tool_transcript)")
        if not hmac.compare_digest(tt["hash"], lc.hash):
            raise _Fail("transcript_mismatch", f"(log hashes to {lc.hash}, record says "
                                               f"{tt['hash']})")
        count = tt.get("call_count")
        if count is None or int(count) != lc.entries:
            raise _Fail("transcript_mismatch", f"(log has {lc.entries} entries, record says "
                                               f"{-1 if count is None else int(count)})")
        if lc.inconsistent_why:
            raise _Fail("log_inconsistent", f"({lc.inconsistent_why})")
    if bundle is not None:
        want = rec["policy"]["bundle_hash"]
        computed = _digest(want, bundle)
        if computed != want:
            raise _Fail("bundle_mismatch", f"(bundle hashes to {computed}, record says {want})")
        m = rec["runtime"]["measurement"]
        if image_digest is None:
            d = rec["build_provenance"]["digest"]
            image_digest = d if schema.DIGEST_RE.fullmatch(d) else None
        if image_digest is not None and rec["runtime"]["platform"] == "software-only":
            measurement = _digest(m, f"{image_digest}\n{computed}".encode())
            if measurement != m:
                raise _Fail("measurement_mismatch", f"(image {image_digest} with this bundle "
                                                    f"gives {measurement}, record says {m})")


class _Joined:
    """A decision log cut into segments (LOG, then LOG.2, LOG.3, ...:
    docs/decision-log.md, "Segments") read as one stream, in order; a log
    of one file reads as itself. The manifest's sizes and hashes are the C
    verifier's check: here a segment missing or out of order shows as a
    transcript mismatch."""

    def __init__(self, path: str):
        self.path, self.n = path, 1
        self.f = open(path, "rb")

    def readline(self, limit: int) -> bytes:
        out = self.f.readline(limit)
        while not out.endswith(b"\n") and len(out) < limit:
            nxt = f"{self.path}.{self.n + 1}"
            if not os.path.isfile(nxt):
                break
            self.f.close()
            self.f = open(nxt, "rb")
            self.n += 1
            out += self.f.readline(limit - len(out))
        return out

    def __enter__(self) -> "_Joined":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.f.close()


def _checkpoints(walk: CheckpointWalk, v: Verdict) -> Verdict:
    """The chain against the log and its close entry, once the log was read
    through: its summary into v, and a problem makes the record invalid when
    it was valid or only incomplete or inconsistent (the checkpoint code says
    what was changed)."""
    reason = walk.bound()
    if walk.checkpointed:
        v.checkpoints = walk.describe()
        v.vouched_lines, v.unvouched_lines = walk.vouched_lines, walk.unvouched_lines
    if reason != "ok" and (v.valid or v.reason in ("log_incomplete", "log_inconsistent")):
        v.valid, v.reason, v.warning = False, reason, ""
        v.message = f"{REASONS[reason]} ({walk.why})"
    return v


def verify(record: PathOrBytes | dict[str, Any], key: Any = None, *,
           log: str | os.PathLike[str] | None = None,
           checkpoints: str | os.PathLike[str] | None = None,
           policy: PathOrBytes | None = None, image_digest: str | None = None,
           max_age: int = 86400, skew: int = 300, nonce: str | None = None,
           allow_embedded_key: bool = False, allow_incomplete: bool = False,
           now: int | None = None) -> Verdict:
    """Verifies a Trust Record as ``kwitness verify`` does.

    record: the record's path, its bytes, or a parsed dict. key: the trusted
    key (a public JWK as dict, text or file; a PEM public key as bytes or
    file), or None with allow_embedded_key=True (which proves the record is
    self-consistent, not who signed it). log: the decision log's path (its
    transcript hash, call count, session and completeness are re-derived,
    and its checkpoints checked when the file beside it, LOG.checkpoints, is
    there). checkpoints: that file's path, when it is elsewhere. policy: the
    policy bundle (path or bytes). max_age: oldest acceptable record in
    seconds, 0 for archives. Returns a Verdict; raises ValueError or OSError
    only for arguments or files that cannot be read (as the CLI exits 2)."""
    if isinstance(record, dict):
        text = canonicalize(record)
    else:
        text = _read("record", record, RECORD_MAX)
    if key is None and not allow_embedded_key:
        raise ValueError("verify needs the trusted key (the signer's public JWK, from "
                         "`kwitness key show --jwk`), or allow_embedded_key=True")
    trusted = load_key(key) if key is not None else None
    bundle = _read("policy bundle", policy, BUNDLE_MAX) if policy is not None else None
    now = int(time.time()) if now is None else int(now)
    lc: LogCheck | None = None
    walk: CheckpointWalk | None = None
    try:
        try:
            try:
                rec = parse_strict(text)
            except CanonicalizationError as e:
                raise _Fail("record_malformed", f"({e})") from None
            pub, jwk = _check_signed(rec, trusted, allow_embedded_key, now, max_age, skew, nonce)
            if log is not None:
                walk = CheckpointWalk.beside(
                    os.fspath(checkpoints) if checkpoints is not None
                    else os.fspath(log) + CHECKPOINT_SUFFIX, pub, jwk_thumbprint(jwk) or "")
                with _Joined(os.fspath(log)) as f:
                    lc = check_log(f, walk.line if walk is not None else None)
            _check_evidence(rec, lc, bundle, image_digest)
            warning = ""
            if lc is not None and not lc.complete:
                if not allow_incomplete:
                    raise _Fail("log_incomplete", f"({lc.incomplete_why})")
                warning = f"{REASONS['log_incomplete']} {lc.incomplete_why}"
            v = Verdict(True, "ok", REASONS["ok"], warning=warning)
        except _Fail as f:
            msg = REASONS[f.reason] + (f" {f.detail}" if f.detail else "")
            v = Verdict(False, f.reason, msg)
        if lc is not None and lc.problem == "ok":
            v.complete, v.incomplete = lc.complete, lc.incomplete_why
            v.transcript_hash, v.log_entries = lc.hash, lc.entries
            v.decisions, v.denials = lc.decisions, lc.denials
            if walk is not None:
                v = _checkpoints(walk, v)
    finally:
        if walk is not None:
            walk.close()
    return v


@dataclass
class LogVerdict:
    """What verify_log found: the members of ``kwitness verify --key K --log
    LOG --json`` without a record. ``stop``: where the check stopped
    ("log_end"; "log_truncated", a cut inside a line; "checkpoint_beyond_log",
    checkpoints past the cut; or the problem found); ``valid``: no checkpoint
    or log problem but a cut; ``vouched_lines``: the first lines of the log
    checkpoint ``checkpoint`` of ``checkpoints`` vouches for;
    ``unvouched_lines``: the lines after them; ``vouched``: the sentence."""

    valid: bool
    reason: str
    stop: str
    message: str
    vouched_lines: int
    checkpoint: int
    checkpoints: int
    log_lines: int
    unvouched_lines: int
    vouched: str

    def __bool__(self) -> bool:
        return self.valid


def verify_log(log: str | os.PathLike[str], key: Any, *,
               checkpoints: str | os.PathLike[str] | None = None) -> LogVerdict:
    """A decision log without its record (a host that lost power, a copy cut
    short) against its checkpoints (LOG.checkpoints, or checkpoints=PATH), as
    ``kwitness verify --key K --log LOG`` checks it: every entry through the
    last checkpoint the log holds whole. key: the trusted key (as for
    verify). Raises ValueError or OSError for a key, log or checkpoint file
    that cannot be read (as the CLI exits 2)."""
    pub, jwk = load_key(key)
    path = os.fspath(checkpoints) if checkpoints is not None else os.fspath(log) + \
        CHECKPOINT_SUFFIX
    walk = CheckpointWalk.from_file(path, pub, jwk_thumbprint(jwk) or "")
    try:
        with _Joined(os.fspath(log)) as logf:
            lc = check_log(logf, walk.line)
        walk.end()
    finally:
        walk.close()
    if walk.problem != "ok":
        stop, valid, why = walk.problem, False, walk.why
    elif lc.problem != "ok":
        stop, valid, why = lc.problem, lc.problem == "log_truncated", lc.why
    elif walk.beyond_log:
        stop, valid = "checkpoint_beyond_log", True
        why = "a checkpoint covers lines past the log's end: the log was cut"
    else:
        stop, valid, why = "log_end", True, "the log ends"
    return LogVerdict(valid, "ok" if valid else stop, stop, why, walk.vouched_lines,
                      walk.vouched_n, walk.chain, walk.log_lines,
                      walk.log_lines - walk.vouched_lines, walk.describe())
