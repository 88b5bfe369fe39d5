# SPDX-License-Identifier: Apache-2.0
"""The client without kwitnessd: RFC 8785 against the RFC author's vectors, the
TRACE hashes against agentrust-trace's sandbox adapter formulas with known
answers (tests/vectors/trace-spec/PROVENANCE), and the socket errors."""

import json
import os
import struct
import math
import subprocess
import tempfile
import unittest

import kwitness
from kwitness import KwitnessError, Session, canonicalize

ROOT = os.environ.get("KW_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", "..", ".."))
VECTORS = os.path.join(ROOT, "tests", "vectors")
KW = os.environ.get("KW") or os.path.join(ROOT, "build", "kwitness")

# agentrust-trace's own sandbox adapter test inputs and the values its formulas
# give for them, recomputed independently (tests/vectors/trace-spec/PROVENANCE).
IMAGE = "sha256:" + "a" * 64
BUNDLE = b"network:\n  egress: deny-all\nfilesystem:\n  write: /work\n"
DECISIONS = [{"tool": "fs.read", "path": "/work/src", "decision": "permit"},
             {"tool": "net.connect", "host": "api.example.org", "decision": "deny"}]


class KnownAnswers(unittest.TestCase):
    def test_bundle_hash(self):
        """bundle_hash = sha256 of the bundle bytes (known answer)"""
        self.assertEqual(kwitness.bundle_hash(BUNDLE),
                         "sha256:b7a7d560278f34511e4abcc7a8909a3c07e9ee16143da6693b19cb3222ee0cae")

    def test_transcript_hash(self):
        """transcript_hash = sha256 of the RFC 8785 decision list (known answer)"""
        self.assertEqual(kwitness.transcript_hash(DECISIONS),
                         "sha256:ffce23badc0a325b93ac587374132bbaae4f7798a4d57f84cf135a312f4a6aea")

    def test_transcript_hash_empty(self):
        """transcript_hash of no decisions (known answer)"""
        self.assertEqual(kwitness.transcript_hash([]),
                         "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945")

    def test_transcript_hash_non_ascii(self):
        """transcript_hash with a non-ASCII string (known answer; naive ensure_ascii JSON differs)"""
        d = [{"tool": "fs.read", "path": "/work/caf\u00e9", "decision": "permit"}]
        self.assertEqual(kwitness.transcript_hash(d),
                         "sha256:76c4c3e442fa36036109df075d0ab259d08dc1c3aab16b500af4b0afc0e992dc")

    def test_software_measurement(self):
        """software_measurement = sha256(image_digest + newline + bundle_hash) (known answer)"""
        self.assertEqual(kwitness.software_measurement(IMAGE, kwitness.bundle_hash(BUNDLE)),
                         "sha256:06a9b5018d74ec48f31bcec06e5eade5b12b565a6443caafc5ba8cdda715ac5f")


class Canonical(unittest.TestCase):
    def test_rfc8785_vectors(self):
        """RFC 8785: every input of the RFC author's vectors gives the exact output bytes"""
        d = os.path.join(VECTORS, "jcs")
        names = sorted(os.listdir(os.path.join(d, "input")))
        self.assertGreaterEqual(len(names), 6)
        for name in names:
            with open(os.path.join(d, "input", name), "rb") as f:
                value = json.loads(f.read())
            with open(os.path.join(d, "output", name), "rb") as f:
                want = f.read()
            self.assertEqual(canonicalize(value), want, name)

    def test_es6_numbers(self):
        """RFC 8785 numbers: 10,000 ES6 known answers (ieee754 hex -> text)"""
        n = 0
        with open(os.path.join(VECTORS, "jcs", "numbers", "es6testfile10k.txt")) as f:
            for line in f:
                h, want = line.strip().split(",")
                v = struct.unpack(">d", bytes.fromhex(h.rjust(16, "0")))[0]
                if not math.isfinite(v):
                    continue
                self.assertEqual(canonicalize(v).decode(), want, h)
                n += 1
        self.assertEqual(n, 10000)

    def test_refusals(self):
        """values RFC 8785 cannot hold are refused, not approximated"""
        for bad in (float("nan"), float("inf"), 2**53, {1: "x"}, "\ud800", object()):
            with self.assertRaises(kwitness.CanonicalizationError, msg=repr(bad)):
                canonicalize(bad)

    @unittest.skipUnless(os.access(KW, os.X_OK), "build/kwitness is not built")
    def test_utf16_order_agrees_with_kwitness_jcs(self):
        """trace-spec's UTF-16 key-order records: the same bytes as kwitness jcs (C), unlike sorted json.dumps"""
        d = os.path.join(VECTORS, "trace-spec", "canonicalization-boundary")
        for name in ("03-utf16-key-order.json", "04-utf16-key-order-nested.json"):
            with open(os.path.join(d, name), "rb") as f:
                record = json.loads(f.read())["record"]
            record.pop("signature", None)
            with tempfile.NamedTemporaryFile("wb", suffix=".json") as t:
                t.write(json.dumps(record).encode())
                t.flush()
                c = subprocess.run([KW, "jcs", t.name], capture_output=True, check=True).stdout
            mine = canonicalize(record)
            self.assertEqual(mine, c.rstrip(b"\n"), name)
            naive = json.dumps(record, sort_keys=True, ensure_ascii=False,
                               separators=(",", ":")).encode()
            self.assertNotEqual(mine, naive, name + ": the vector must tell the two apart")


class Arguments(unittest.TestCase):
    def test_unreachable(self):
        """no kwitnessd: KwitnessError 'unreachable' naming the socket"""
        with tempfile.TemporaryDirectory() as d:
            sock = os.path.join(d, "none.sock")
            with self.assertRaises(KwitnessError) as e:
                Session.open(cgroup="/nonexistent", policy=b"{}", sandbox_id="did:x:y",
                             image_digest=IMAGE, socket=sock)
            self.assertEqual(e.exception.code, "unreachable")
            self.assertIn(sock, e.exception.message)

    def test_cgroup_xor_pid(self):
        """exactly one of cgroup and pid"""
        with self.assertRaises(ValueError):
            Session.open(policy=b"{}", sandbox_id="did:x:y", image_digest=IMAGE)
        with self.assertRaises(ValueError):
            Session.open(cgroup="/x", pid=1, policy=b"{}", sandbox_id="did:x:y", image_digest=IMAGE)

    def test_policy_not_utf8(self):
        """a policy that is not UTF-8 is refused before anything is sent"""
        with self.assertRaises(ValueError):
            Session.open(cgroup="/x", policy=b"\xff", sandbox_id="did:x:y", image_digest=IMAGE,
                         socket="/nonexistent.sock")

    def test_pid_cgroup_self(self):
        """pid_cgroup of this process is the cgroup2 mount plus its 0:: path"""
        with open("/proc/self/cgroup") as f:
            rel = [l[3:].strip() for l in f if l.startswith("0::")][0]
        want = kwitness.cgroup.cgroup2_mount() + ("" if rel == "/" else rel)
        self.assertEqual(kwitness.pid_cgroup(os.getpid()), want)


if __name__ == "__main__":
    unittest.main()
