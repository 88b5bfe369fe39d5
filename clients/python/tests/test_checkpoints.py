# SPDX-License-Identifier: Apache-2.0
"""kwitness.verify's checkpoint checks against kwitness verify's, on
checkpoint files written here, one line at a time, each way a file can be
wrong: members, key, signature, chain, transcript prefixes, the close
entry's binding and a seal's unvouched_lines, and the precedence of their
codes over the log's. Both verifiers must give the same reason code (the one
each case is meant to reach), validity and checkpoints sentence. (Sessions
the real collector checkpointed are compared in test_live_checkpoints.py and
tests/kernel/test_kwitnessd_checkpoints.sh.) The lines are built with
json.dumps(sort_keys) — RFC 8785 for these ASCII members — signed with
`cryptography`, and their prefixes hashed with hashlib: by neither verifier."""

import base64
import dataclasses
import hashlib
import json
import os
import random
import re
import subprocess
import unittest

import kwitness
from test_verify import KW, NEEDS, CliRecords, mutate, transcript


def canon(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def line_hash(line):
    return "sha256:" + hashlib.sha256(line).hexdigest()


@unittest.skipUnless(*NEEDS)
class SameCheckpointVerdicts(CliRecords):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        from cryptography.hazmat.primitives import serialization

        cls.priv, cls.kid = {}, {}
        for name, pem in (("signer", cls.key), ("other", cls.other)):
            with open(pem, "rb") as f:
                cls.priv[name] = serialization.load_pem_private_key(f.read(), None)
            show = subprocess.run([KW, "key", "show", "--key", pem], check=True,
                                  capture_output=True, text=True).stdout
            cls.kid[name] = re.search(r"^thumbprint: (\S+)$", show, re.M).group(1)
        cls.entries = [json.loads(x) for x in cls.lines]
        cls.session = cls.entries[0]["session"]

    def sign(self, c, key="signer"):
        body = canon({k: v for k, v in c.items() if k != "signature"})
        sig = base64.urlsafe_b64encode(self.priv[key].sign(body)).rstrip(b"=").decode()
        return canon(dict(c, signature=sig))

    def members(self, n, covered, prev):
        """Checkpoint n's members over the log's first `covered` lines."""
        seen = [e for e in self.entries[:covered] if "seq" in e]
        c = {"decisions": len(seen), "denials": sum(e.get("decision") == "deny" for e in seen),
             "dropped": 0, "gaps": 0, "kid": self.kid["signer"], "lines": covered, "n": n,
             "session": self.session, "transcript_prefix": transcript(self.lines[:covered])[0],
             "ts": 1796186055753161 + n, "type": "kwitness.checkpoint"}
        if seen:
            c["last_seq"] = max(e["seq"] for e in seen)
        if prev:
            c["prev"] = prev
        return c

    def chain(self, at=(10, 20, 30), edit=None, key="signer"):
        """Checkpoint lines over the first at[i] lines, chained; edit(n, members)
        changes one before it is signed."""
        out, prev = [], ""
        for n, covered in enumerate(at, 1):
            c = self.members(n, covered, prev)
            if edit:
                edit(n, c)
            out.append(self.sign(c, key))
            prev = line_hash(out[-1])
        return out

    def closed(self, ckpts, names=None, sealed_unvouched=None):
        """The log with its close entry naming the chain's last checkpoint
        (names: (hash, n) instead); sealed_unvouched: a seal's trailer with
        that unvouched_lines."""
        close = dict(self.entries[-1])
        if sealed_unvouched is not None:
            close = {k: close[k] for k in ("decisions", "denials", "session", "tool", "ts")}
            close.update(complete=False, sealed="test: sealed from its last checkpoint",
                         unvouched_lines=sealed_unvouched)
        if names or ckpts:
            close["checkpoint"], close["checkpoints"] = names or (line_hash(ckpts[-1]),
                                                                   len(ckpts))
        return self.lines[:-1] + [canon(close)]

    def case(self, name, want, ckpts, log=None, allow_incomplete=False, record_over=None):
        """Writes LOG, LOG.checkpoints (None: no file) and a record over the
        log (or record_over), and runs both verifiers."""
        log = self.closed(ckpts) if log is None else log
        path = self.write_log(name + ".jsonl", log)
        if ckpts is not None:
            with open(path + ".checkpoints", "wb") as f:
                f.write(b"".join(x + b"\n" for x in ckpts))
        rec = self.record(name + ".json", record_over or log)
        opts = {"allow_incomplete": True} if allow_incomplete else {}
        with self.subTest(name):
            return self.both(rec, want, log=path, cli=["--allow-incomplete"] * allow_incomplete,
                             py=opts)

    def test_valid(self):
        """a whole chain the close entry names: ok, and the same sentence"""
        p, _ = self.case("ok", "ok", self.chain())
        self.assertTrue(p.checkpoints.startswith("lines 1-30 vouched for by checkpoint 3 of 3 "),
                        p.checkpoints)
        self.assertTrue(p.checkpoints.endswith("; 11 line(s) after it signed by the record"))
        self.assertEqual((p.vouched_lines, p.unvouched_lines), (30, 11))
        p, _ = self.case("unnamed", "ok", self.chain(), log=self.lines)
        self.assertTrue(p.checkpoints)
        p, _ = self.case("none", "ok", None, log=self.lines)
        self.assertEqual(p.checkpoints, "")

    def test_lines(self):
        """a line's form, key and signature"""
        good = self.chain()

        def one(n, edit):
            return self.chain(edit=lambda k, c: edit(c) if k == n else None)

        cases = [
            ("forged", [good[0], good[1].replace(b'"dropped":0', b'"dropped":9'), good[2]],
             "checkpoint_signature_invalid"),
            ("extra", one(2, lambda c: c.update(extra=1)), "checkpoint_malformed"),
            ("nots", one(2, lambda c: c.pop("ts")), "checkpoint_malformed"),
            ("prev1", one(1, lambda c: c.update(prev="sha256:" + "0" * 64)),
             "checkpoint_malformed"),
            ("emptyprev", one(2, lambda c: c.update(prev="")), "checkpoint_malformed"),
            ("n0", one(1, lambda c: c.update(n=0)), "checkpoint_malformed"),
            ("short-session", one(2, lambda c: c.update(session=self.session[:31])),
             "checkpoint_malformed"),
            ("type", one(2, lambda c: c.update(type="kwitness.checkpoints")),
             "checkpoint_malformed"),
            ("negative", one(2, lambda c: c.update(gaps=-1)), "checkpoint_malformed"),
            ("bool", one(2, lambda c: c.update(gaps=True)), "checkpoint_malformed"),
            ("prefix-form", one(2, lambda c: c.update(transcript_prefix="sha256:AB")),
             "checkpoint_malformed"),
            ("long-kid", one(2, lambda c: c.update(kid=c["kid"] + "A")), "checkpoint_malformed"),
            ("spaced", [good[0], good[1].replace(b",", b", ", 1), good[2]],
             "checkpoint_malformed"),
            ("empty-line", [good[0], b"", *good[1:]], "checkpoint_malformed"),
            ("nul", [good[0], good[1][:30] + b"\0" + good[1][30:], good[2]],
             "checkpoint_malformed"),
            ("long-line", [good[0], good[1][:-1] + b',"z":"' + b"z" * 5000 + b'"}', good[2]],
             "checkpoint_malformed"),
            ("other-kid", self.chain(edit=lambda k, c: c.update(kid=self.kid["other"]),
                                     key="other"), "checkpoint_key_mismatch"),
            ("other-sig", self.chain(key="other"), "checkpoint_signature_invalid"),
            ("padded-sig", [good[0], re.sub(rb'("signature":"[^"]*)"', rb'\1=="', good[1]),
                            good[2]], "checkpoint_signature_invalid"),
            ("long-sig", [good[0], re.sub(rb'("signature":"[^"]*)"', rb'\1' + b"A" * 44 + b'"',
                                          good[1]), good[2]], "checkpoint_malformed"),
        ]
        for name, ckpts, want in cases:
            # the close names the untouched chain: only the line itself is wrong
            self.case(name, want, ckpts, log=self.closed(good))

    def test_chain(self):
        """numbers, links, line counts and the close entry's binding"""
        good = self.chain()
        cases = [
            ("gap", self.chain(edit=lambda n, c: c.update(n=3) if n == 2 else None),
             "checkpoint_chain_gap"),
            ("removed", [good[0], good[2]], "checkpoint_chain_gap"),
            ("twice", [good[0], good[1], good[1], good[2]], "checkpoint_reordered"),
            ("swapped", [good[0], good[2], good[1]], "checkpoint_reordered"),
            ("shrinks", self.chain(at=(10, 20, 15)), "checkpoint_reordered"),
            ("same-lines", self.chain(at=(10, 20, 20)), "checkpoint_reordered"),
            ("prev", self.chain(edit=lambda n, c: c.update(prev=line_hash(b"x")) if n == 3
                                else None), "checkpoint_chain_broken"),
            ("session", self.chain(edit=lambda n, c: c.update(session="f" * 32) if n == 2
                                   else None), "checkpoint_chain_broken"),
            ("prefix", self.chain(edit=lambda n, c: c.update(
                transcript_prefix=transcript(self.lines[1:21])[0]) if n == 2 else None),
             "checkpoint_prefix_mismatch"),
            ("beyond", self.chain(at=(10, 20, 60)), "checkpoint_beyond_log"),
        ]
        for name, ckpts, want in cases:
            self.case(name, want, ckpts, log=self.closed(good))
        binding = [
            ("names-more", (line_hash(good[2]), 4), "checkpoint_chain_gap"),
            ("names-fewer", (line_hash(good[1]), 2), "checkpoint_chain_broken"),
            ("names-other", (line_hash(good[1]), 3), "checkpoint_chain_broken"),
            ("names-none", ("", 0), "checkpoint_chain_broken"),
        ]
        for name, names, want in binding:
            self.case(name, want, good, log=self.closed(good, names=names))
        self.case("lastgone", "checkpoint_chain_gap", good[:2], log=self.closed(good))
        self.case("missing", "checkpoints_missing", None, log=self.closed(good))
        torn = self.closed(good)
        path = self.write_log("torn.jsonl", torn)
        with open(path + ".checkpoints", "wb") as f:
            f.write(b"".join(x + b"\n" for x in good) + good[0][:50])
        self.both(self.record("torn.json", torn), "ok", log=path)  # a torn last line: ignored
        os.mkdir(self.path("dir.jsonl.checkpoints"))
        self.write_log("dir.jsonl", torn)
        self.both(self.record("dir.json", torn), "checkpoint_chain_gap", log=self.path("dir.jsonl"))

    def test_seal(self):
        """a sealed trailer's unvouched_lines against the log, and the tail it names"""
        good = self.chain()
        p, _ = self.case("sealed", "ok", good, log=self.closed(good, sealed_unvouched=11),
                         allow_incomplete=True)
        self.assertTrue(p.checkpoints.endswith(
            "11 line(s) after it unvouched: on disk, not signed before the collector stopped"))
        self.assertFalse(p.complete)
        self.case("sealed-strict", "log_incomplete", good, log=self.closed(good,
                                                                           sealed_unvouched=11))
        for n in (10, 12):
            self.case(f"sealed-{n}", "checkpoint_unvouched_mismatch", good,
                      log=self.closed(good, sealed_unvouched=n))

    def test_precedence(self):
        """a checkpoint problem outranks an incomplete or inconsistent log, not the rest"""
        good, bad = self.chain(), self.chain(at=(10, 20, 60))
        log = self.closed(good)
        changed = list(log)
        changed[25] = changed[25].replace(b'"host":"10.', b'"host":"11.')
        self.assertNotEqual(changed[25], log[25])
        self.case("changed", "transcript_mismatch", bad, log=changed, record_over=log)
        self.case("malformed", "log_malformed", bad, log=log[:5] + [b"{no"] + log[6:],
                  record_over=log)
        twice = log[:36] + [log[35]] + log[36:]  # a seq twice, after every prefix in good
        self.case("inconsistent", "checkpoint_beyond_log", bad, log=twice)
        self.case("inconsistent-ok", "log_inconsistent", good, log=twice)
        self.case("incomplete", "checkpoint_beyond_log", bad, log=log[:-1])
        self.case("incomplete-allowed", "checkpoint_beyond_log", bad, log=log[:-1],
                  allow_incomplete=True)
        rec = self.record("session.json", log)
        path = self.write_log("session.jsonl", log)
        with open(path + ".checkpoints", "wb") as f:
            f.write(b"".join(x + b"\n" for x in bad))
        self.both(rec, "bundle_mismatch", log=path, policy="other-policy.json")

    def test_paths_and_keys(self):
        """--checkpoints elsewhere, and the record's own key with allow_embedded_key"""
        good = self.chain()
        log = self.closed(good)
        path = self.write_log("elsewhere.jsonl", log)
        with open(self.path("elsewhere.ckpt"), "wb") as f:
            f.write(b"".join(x + b"\n" for x in good))
        rec = self.record("elsewhere.json", log)
        self.both(rec, "checkpoints_missing", log=path)
        ck = self.path("elsewhere.ckpt")
        self.both(rec, "ok", log=path, cli=["--checkpoints", ck], py={"checkpoints": ck})
        self.both(rec, "ok", key=None, log=path, cli=["--checkpoints", ck,
                                                      "--allow-embedded-key"],
                  py={"checkpoints": ck, "allow_embedded_key": True})
        rec = self.record("other-signed.json", log, key=self.other)
        self.both(rec, "checkpoint_key_mismatch", key="other.jwk", log=path,
                  cli=["--checkpoints", ck], py={"checkpoints": ck})

    def log_only(self, log, ckpt=None):
        """kwitness verify --log LOG [--checkpoints F] --json without a record, and
        kwitness.verify_log: the same members (None: the CLI exits 2 and
        Python raises OSError)."""
        args = [KW, "verify", "--json", "--key", self.path("signer.jwk"), "--log", log]
        c = subprocess.run(args + (["--checkpoints", ckpt] if ckpt else []), capture_output=True)
        if c.returncode == 2:
            with self.assertRaises(OSError):
                kwitness.verify_log(log, self.path("signer.jwk"), checkpoints=ckpt)
            return None
        cli = json.loads(c.stdout)
        p = dataclasses.asdict(kwitness.verify_log(log, self.path("signer.jwk"),
                                                   checkpoints=ckpt))
        self.assertEqual(p, cli)
        return p

    def test_log_without_record(self):
        """a log on its own, cut at 40 random byte offsets and changed: both verifiers agree"""
        good = self.chain(at=(5, 10, 20, 30, 41))
        text = b"".join(x + b"\n" for x in self.closed(good))
        with open(self.path("whole.ckpt"), "wb") as f:
            f.write(b"".join(x + b"\n" for x in good))
        rng = random.Random(int(os.environ.get("KW_FUZZ_SEED", "7638")))
        stops = set()
        for off in [len(text), 0, len(text) - 1] + rng.sample(range(1, len(text)), 40):
            with self.subTest(off=off):
                with open(self.path("cut.jsonl"), "wb") as f:
                    f.write(text[:off])
                p = self.log_only(self.path("cut.jsonl"), self.path("whole.ckpt"))
                whole = text[:off].count(b"\n")
                self.assertEqual(p["vouched_lines"], max([n for n in (5, 10, 20, 30, 41)
                                                          if n <= whole], default=0))
                stops.add(p["stop"])
        self.assertEqual(stops, {"log_end", "log_truncated", "checkpoint_beyond_log"})
        log = self.write_log("lo.jsonl", self.closed(good))
        cases = [("forged", [good[0], good[1].replace(b'"gaps":0', b'"gaps":1'), *good[2:]]),
                 ("removed", [good[0], *good[2:]]), ("reordered", [good[0], good[2], good[1]]),
                 ("torn", good[:-1] + [good[-1][:-9]]), ("empty", [])]
        for name, ckpts in cases:
            with self.subTest(name):
                with open(log + ".checkpoints", "wb") as f:
                    f.write(b"".join(x + b"\n" for x in ckpts).rstrip(b"\n" * (name == "torn")))
                self.log_only(log)
        changed = self.closed(good)
        changed[3] = changed[3].replace(b'"host":"10.', b'"host":"11.')
        self.log_only(self.write_log("lo-changed.jsonl", changed), self.path("whole.ckpt"))
        self.assertIsNone(self.log_only(self.write_log("lo-none.jsonl", changed)))
        os.mkdir(self.path("lo-dir"))
        self.log_only(log, self.path("lo-dir"))  # read as an empty file

    def test_differential_fuzz(self):
        """random byte and line edits of a checkpoint file, and byte edits of its log
        (seeded): the two verifiers agree"""
        rng = random.Random(int(os.environ.get("KW_FUZZ_SEED", "7638")))
        good = self.chain(at=(5, 10, 20, 30, 41))
        log = self.closed(good)
        path = self.write_log("fz.jsonl", log)
        rec = self.record("fz.json", log)
        text = b"".join(x + b"\n" for x in good)
        log_text = b"".join(x + b"\n" for x in log)
        alphabet = b'{}[]":,0123456789abcdef-_=\\ \x00\xff\n'
        reasons = set()
        for i in range(int(os.environ.get("KW_FUZZ_CASES", "150"))):
            edit_log = rng.randrange(4) == 0
            if edit_log or rng.randrange(3):
                data = mutate(rng, bytearray(log_text if edit_log else text), alphabet)
            else:  # whole lines dropped, repeated or moved
                ls = list(good)
                for _ in range(rng.randint(1, 2)):
                    j = rng.randrange(len(ls))
                    op = rng.randrange(3)
                    if op == 0 and len(ls) > 1:
                        del ls[j]
                    elif op == 1:
                        ls.insert(rng.randrange(len(ls) + 1), ls[j])
                    else:
                        ls.insert(rng.randrange(len(ls) + 1), ls.pop(j))
                data = b"".join(x + b"\n" for x in ls)
            with open(path + ".checkpoints", "wb") as f:
                f.write(text if edit_log else data)
            with open(path, "wb") as f:
                f.write(data if edit_log else log_text)
            c = subprocess.run([KW, "verify", "--json", "--key", self.path("signer.jwk"),
                                "--log", path, rec], capture_output=True)
            cli = json.loads(c.stdout.splitlines()[-1]) if c.returncode in (0, 1) \
                else {"reason": f"exit {c.returncode}"}
            p = kwitness.verify(rec, self.path("signer.jwk"), log=path)
            self.assertEqual((p.reason, p.checkpoints), (cli["reason"], cli.get("checkpoints", "")),
                             f"case {i} ({'log' if edit_log else 'checkpoints'}): {bytes(data)!r}")
            if cli["reason"].startswith("checkpoint"):
                self.assertEqual(p.message, f"{kwitness.REASONS[p.reason]} ({cli['message']})",
                                 f"case {i}")
            reasons.add(cli["reason"])
        self.assertGreaterEqual(len(reasons), 5, f"the edits reached few checks: {reasons}")


if __name__ == "__main__":
    unittest.main()
