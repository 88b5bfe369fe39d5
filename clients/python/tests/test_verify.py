# SPDX-License-Identifier: Apache-2.0
"""kwitness.verify against kwitness verify (the C verifier, a separate
implementation): records built and signed by the CLI over collector-shaped
logs (kw-loggen), then tampered one way each; both verifiers must give the
same reason code, and the code each case is meant to reach. Transcript hashes
of edited logs are computed here with hashlib over the lines, not by either
verifier."""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import kwitness

KW = os.environ.get("KW", "")
LOGGEN = os.path.join(os.path.dirname(KW), "tests", "kw-loggen") if KW else ""
SANDBOX = "spiffe://test.kwitness.local/py/verify"
IMAGE = "sha256:" + "c" * 64
POLICY = b'{"kwitness_policy":1,"mode":"enforce","net":{"connect":["10.0.0.0/8:1-65535"]}}\n'


def transcript(lines):
    return "sha256:" + hashlib.sha256(b"[" + b",".join(lines) + b"]").hexdigest(), len(lines)


def mutate(rng, data, alphabet):
    """One to three random byte edits of data (a bytearray), in place."""
    for _ in range(rng.randint(1, 3)):
        pos = rng.randrange(len(data))
        op = rng.randrange(3)
        if op == 0:
            data[pos] = rng.choice(alphabet)
        elif op == 1:
            del data[pos]
        else:
            data.insert(pos, rng.choice(alphabet))
    return data


NEEDS = (os.access(KW, os.X_OK) and os.access(LOGGEN, os.X_OK),
         "needs build/kwitness and build/tests/kw-loggen (make test-bins)")


@unittest.skipUnless(*NEEDS)
class CliRecords(unittest.TestCase):
    """Keys, logs and records made with the CLI, and both verifiers run on
    them (the base of the test classes here and in test_checkpoints.py)."""

    @classmethod
    def setUpClass(cls):
        cls.d = tempfile.mkdtemp(prefix="kw-pyverify.")
        cls.key = cls.path("key.pem")
        cls.other = cls.path("other.pem")
        subprocess.run([KW, "keygen", "--out", cls.key], check=True, capture_output=True)
        subprocess.run([KW, "keygen", "--out", cls.other], check=True, capture_output=True)
        for k, out in ((cls.key, "signer.jwk"), (cls.other, "other.jwk")):
            with open(cls.path(out), "wb") as f:
                f.write(subprocess.run([KW, "key", "show", "--key", k, "--jwk"], check=True,
                                       capture_output=True).stdout)
        with open(cls.path("policy.json"), "wb") as f:
            f.write(POLICY)
        with open(cls.path("other-policy.json"), "wb") as f:
            f.write(POLICY.replace(b"10.0.0.0/8", b"10.0.0.0/9"))
        cls.bundle_hash = "sha256:" + hashlib.sha256(POLICY).hexdigest()
        cls.lines = cls.loggen("good.jsonl", "--decisions", "40")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.d, ignore_errors=True)

    @classmethod
    def path(cls, name):
        return os.path.join(cls.d, name)

    @classmethod
    def loggen(cls, name, *args, sandbox=SANDBOX):
        out = subprocess.run([LOGGEN, "--sandbox-id", sandbox, "--bundle-hash", cls.bundle_hash,
                              "--image-digest", IMAGE, "--mode", "enforce", *args],
                             check=True, capture_output=True).stdout
        with open(cls.path(name), "wb") as f:
            f.write(out)
        return out.splitlines()

    def write_log(self, name, lines, tail=b"\n"):
        with open(self.path(name), "wb") as f:
            f.write(b"\n".join(lines) + tail)
        return self.path(name)

    def record(self, name, lines, iat=None, key=None, edit=None, profile=None):
        """A record signed by the CLI over lines (hashed here), edited after signing by edit."""
        h, n = transcript(lines)
        build = [KW, "record", "build", "--sandbox-id", SANDBOX, "--image-digest", IMAGE,
                 "--policy", self.path("policy.json"), "--transcript-hash", h,
                 "--call-count", str(n), "--enforcement-mode", "enforce",
                 "--model-provider", "example", "--model-id", "m-1"]
        if iat is not None:
            build += ["--iat", str(iat)]
        if profile is not None:
            build += ["--record-profile", profile]
        unsigned = subprocess.run(build, check=True, capture_output=True).stdout
        with open(self.path(name + ".unsigned"), "wb") as f:
            f.write(unsigned)
        signed = subprocess.run([KW, "sign", "--key", key or self.key, self.path(name + ".unsigned")],
                                check=True, capture_output=True).stdout
        if edit is not None:
            rec = json.loads(signed)
            edit(rec)
            signed = json.dumps(rec).encode()
        with open(self.path(name), "wb") as f:
            f.write(signed)
        return self.path(name)

    def both(self, record, want, key="signer.jwk", log=None, policy=None, cli=(), py=None):
        args = [KW, "verify", "--json", *cli]
        if key:
            args += ["--key", self.path(key)]
        if log:
            args += ["--log", log]
        if policy:
            args += ["--policy", self.path(policy)]
        r = subprocess.run(args + [record], capture_output=True)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        c = json.loads(r.stdout.splitlines()[-1])
        p = kwitness.verify(record, self.path(key) if key else None, log=log,
                            policy=self.path(policy) if policy else None, **(py or {}))
        self.assertEqual(c["reason"], want, c["message"])
        self.assertEqual(p.reason, want, p.message)
        self.assertEqual(p.valid, c["valid"])
        self.assertEqual(p.checkpoints, c.get("checkpoints", ""))
        if want.startswith("checkpoint"):  # the CLI's message is the why alone
            self.assertEqual(p.message, f"{kwitness.REASONS[want]} ({c['message']})")
        if log and "complete" in c:
            self.assertEqual(p.complete, c["complete"])
        return p, c


@unittest.skipUnless(*NEEDS)
class SameVerdicts(CliRecords):
    def test_valid(self):
        """a collector-shaped log, its record and bundle: both say ok, complete, same hash"""
        rec = self.record("ok.json", self.lines)
        p, c = self.both(rec, "ok", log=self.path("good.jsonl"), policy="policy.json")
        self.assertTrue(p.complete)
        self.assertEqual(p.transcript_hash, c["transcript_hash"])
        self.assertEqual(p.transcript_hash, transcript(self.lines)[0])
        self.assertEqual(p.log_entries, 42)

    def test_record_tampering(self):
        """edits of a signed record: each reaches its own code in both verifiers"""
        cases = [
            ("subject", lambda r: r.__setitem__("subject", SANDBOX + "x"), "signature_invalid"),
            ("nosig", lambda r: r.pop("signature"), "signature_missing"),
            ("padsig", lambda r: r.__setitem__("signature", r["signature"] + "=="),
             "signature_malformed"),
            ("shortsig", lambda r: r.__setitem__("signature", r["signature"][:-4]),
             "signature_malformed"),
            ("profile", lambda r: r.__setitem__("eat_profile", "tag:x,2026:other"),
             "profile_unsupported"),
            ("noprofile", lambda r: r.pop("eat_profile"), "profile_missing"),
            ("extra", lambda r: r.__setitem__("extra", 1), "schema_invalid"),
            ("platform", lambda r: r["runtime"].__setitem__("platform", "sgx"), "schema_invalid"),
            ("uri", lambda r: r["appraisal"].__setitem__("verifier", "not a uri"),
             "schema_invalid"),
            ("digest", lambda r: r["policy"].__setitem__("bundle_hash", "sha256:ABC"),
             "schema_invalid"),
            ("privjwk", lambda r: r["cnf"]["jwk"].__setitem__("d", "AAAA"), "schema_invalid"),
            ("cnf", lambda r: r["cnf"]["jwk"].__setitem__("x", "A" * 43), "cnf_key_mismatch"),
            ("bundle", lambda r: r["policy"].__setitem__("bundle_hash", "sha256:" + "0" * 64),
             "signature_invalid"),
        ]
        for name, edit, want in cases:
            with self.subTest(name):
                self.both(self.record(name + ".json", self.lines, edit=edit), want)

    def test_v03_draft_refused_with_reason(self):
        """a trace-v0.3-draft record: the C verifier accepts it, this one refuses it, saying why"""
        rec = self.record("v03.json", self.lines, profile="trace-v0.3-draft")
        r = subprocess.run([KW, "verify", "--key", self.path("signer.jwk"), "--json", rec],
                           capture_output=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual(json.loads(r.stdout.splitlines()[-1])["reason"], "ok")
        p = kwitness.verify(rec, self.path("signer.jwk"))
        self.assertFalse(p.valid)
        self.assertEqual(p.reason, "profile_unsupported")
        self.assertIn("TRACE v0.3 draft", p.message)
        self.assertIn("use kwitness verify", p.message)

    def test_record_text(self):
        """records that are not JSON objects: record_malformed in both"""
        for name, text in (("array", b"[1]"), ("dup", b'{"a":1,"a":2}'), ("big", b'{"iat":1e16}'),
                           ("notjson", b"{")):
            with self.subTest(name):
                with open(self.path(name), "wb") as f:
                    f.write(text)
                self.both(self.path(name), "record_malformed")

    def test_keys_and_time(self):
        """the trusted key, freshness and nonce, in the CLI's order"""
        rec = self.record("fresh.json", self.lines)
        self.both(rec, "cnf_key_mismatch", key="other.jwk")
        r = subprocess.run([KW, "verify", "--json", rec], capture_output=True)
        self.assertEqual(r.returncode, 2, "no key is a usage error for the CLI")
        with self.assertRaises(ValueError, msg="and an argument error for Python"):
            kwitness.verify(rec)
        self.both(rec, "ok", key=None, cli=["--allow-embedded-key"],
                  py={"allow_embedded_key": True})
        self.both(rec, "nonce_mismatch", cli=["--nonce", "n-1"], py={"nonce": "n-1"})
        old = self.record("old.json", self.lines, iat=int(time.time()) - 3 * 86400)
        self.both(old, "record_stale")
        p, _ = self.both(old, "ok", cli=["--max-age", "0"], py={"max_age": 0})
        future = self.record("future.json", self.lines, iat=int(time.time()) + 3600)
        self.both(future, "record_in_future")
        stale = kwitness.verify(old, self.path("signer.jwk"))
        self.assertIn("max_age=0", stale.message, "the message names the way to verify an archive")

    def test_log_tampering(self):
        """edited logs: the log's own checks reach the same codes"""
        rec = self.record("log.json", self.lines)
        edited = list(self.lines)
        edited[5] = edited[5].replace(b'"host":"10.', b'"host":"11.')
        self.assertNotEqual(edited[5], self.lines[5])
        cases = [
            ("changed", self.write_log("changed.jsonl", edited), "transcript_mismatch"),
            ("spaced", self.write_log("spaced.jsonl", [self.lines[0]] + [b" " + self.lines[1]] +
                                      self.lines[2:]), "log_not_canonical"),
            ("cut", self.write_log("cut.jsonl", self.lines[:-1] + [self.lines[-1][:20]], b""),
             "log_truncated"),
            ("garbage", self.write_log("garbage.jsonl", self.lines[:3] + [b"{nope"] + self.lines[4:]),
             "log_malformed"),
            ("empty", self.write_log("empty.jsonl", self.lines[:3] + [b""] + self.lines[3:]),
             "log_malformed"),
            ("dropped", self.write_log("dropped.jsonl", self.lines[:7] + self.lines[8:]),
             "transcript_mismatch"),
        ]
        for name, log, want in cases:
            with self.subTest(name):
                self.both(rec, want, log=log)
        other = self.loggen("other.jsonl", "--decisions", "40",
                            sandbox="spiffe://test.kwitness.local/py/other")
        self.assertTrue(other)
        self.both(rec, "log_session_mismatch", log=self.path("other.jsonl"))
        self.both(rec, "bundle_mismatch", log=self.path("good.jsonl"), policy="other-policy.json")
        self.both(rec, "measurement_mismatch", log=self.path("good.jsonl"), policy="policy.json",
                  cli=["--image-digest", "sha256:" + "d" * 64],
                  py={"image_digest": "sha256:" + "d" * 64})

    def test_log_structure(self):
        """records signed over logs that are whole but not complete or not consistent"""
        gaps = self.loggen("gaps.jsonl", "--decisions", "60", "--gap-every", "7")
        p, _ = self.both(self.record("gaps.json", gaps), "log_incomplete",
                         log=self.path("gaps.jsonl"))
        self.assertIn("seq gaps", p.incomplete)
        p, c = self.both(self.record("gaps.json", gaps), "ok", log=self.path("gaps.jsonl"),
                         cli=["--allow-incomplete"], py={"allow_incomplete": True})
        self.assertFalse(p.complete)
        self.assertTrue(p.warning)
        open_only = self.loggen("open.jsonl", "--decisions", "10", "--no-close")
        self.both(self.record("open.json", open_only), "log_incomplete", log=self.path("open.jsonl"))
        twice = self.lines[:6] + [self.lines[5]] + self.lines[6:]
        log = self.write_log("twice.jsonl", twice)
        self.both(self.record("twice.json", twice), "log_inconsistent", log=log)
        after = self.lines + [self.lines[3]]
        log = self.write_log("after.jsonl", after)
        self.both(self.record("after.json", after), "log_inconsistent", log=log)
        counts = [l if not l.startswith(b'{"complete"') else
                  l.replace(b'"denials":', b'"denials":1') for l in self.lines]
        log = self.write_log("counts.jsonl", counts)
        self.both(self.record("counts.json", counts), "log_inconsistent", log=log)
        bare = self.lines[1:-1]
        log = self.write_log("bare.jsonl", bare)
        p, _ = self.both(self.record("bare.json", bare), "log_incomplete", log=log)
        self.assertIn("not a collector's log", p.incomplete)


    def test_differential_fuzz(self):
        """random byte edits of a record and of its log (seeded): the two verifiers never disagree"""
        import random
        rng = random.Random(int(os.environ.get("KW_FUZZ_SEED", "8785")))
        rec_path = self.record("fz.json", self.lines)
        with open(rec_path, "rb") as f:
            rec = f.read()
        log = b"\n".join(self.lines) + b"\n"
        alphabet = b'{}[]":,0123456789abcdef-\\ \x00\xff\xc3\n'
        reasons = set()
        for i in range(int(os.environ.get("KW_FUZZ_CASES", "150"))):
            target = rng.choice(("record", "log"))
            data = mutate(rng, bytearray(rec if target == "record" else log), alphabet)
            r, l = self.path("fz-rec"), self.path("fz-log")
            with open(r, "wb") as f:
                f.write(data if target == "record" else rec)
            with open(l, "wb") as f:
                f.write(data if target == "log" else log)
            c = subprocess.run([KW, "verify", "--json", "--key", self.path("signer.jwk"),
                                "--log", l, r], capture_output=True)
            cli = json.loads(c.stdout.splitlines()[-1])["reason"] if c.returncode in (0, 1) \
                else f"exit {c.returncode}"
            py = kwitness.verify(r, self.path("signer.jwk"), log=l).reason
            self.assertEqual(py, cli, f"case {i} ({target}): python {py}, CLI {cli}")
            reasons.add(cli)
        self.assertGreaterEqual(len(reasons), 4, f"the edits reached few checks: {reasons}")


if __name__ == "__main__":
    unittest.main()
