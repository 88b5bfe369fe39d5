# SPDX-License-Identifier: Apache-2.0
"""kwitness.verify's checkpoint checks against kwitness verify's, on a session
a real kwitnessd checkpointed (run by tests/kernel/test_python_client.sh):
the session is opened with a checkpoint every second and runs over several
seconds, then its checkpoint file, log and record are changed one way each;
both verifiers must give the same reason code (the one each case is meant to
reach), the same validity and the same checkpoints sentence. Changed
checkpoint lines are re-signed here with `cryptography` (the other key's) and
records over changed logs are built and signed with the CLI and kwitnessd's
key; transcript hashes are computed with hashlib, by neither verifier."""

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import kwitness
from kwitness import Session

ENV = os.environ
SOCK, CG, NP, KW = ENV.get("KT_SOCK"), ENV.get("KT_CG"), ENV.get("KT_NP"), ENV.get("KW")
PORT_A = ENV.get("LPORT_A")
SANDBOX = "spiffe://test.kwitness.local/py/checkpoints"
DIGEST = "sha256:" + "d" * 64
POLICY = ('{"kwitness_policy":1,"mode":"enforce","record":"all",'
          '"net":{"connect":["127.0.0.1/32:%s"]}}' % PORT_A).encode()


def lines_of(path):
    with open(path, "rb") as f:
        return f.read().splitlines()


def transcript(lines):
    return "sha256:" + hashlib.sha256(b"[" + b",".join(lines) + b"]").hexdigest(), len(lines)


@unittest.skipUnless(SOCK and CG and NP and KW and PORT_A and ENV.get("KT_TMP"),
                     "needs tests/kernel/test_python_client.sh")
class LiveCheckpoints(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = tempfile.mkdtemp(prefix="kw-pyckpt.")
        cls.addClassCleanup(shutil.rmtree, cls.d, ignore_errors=True)
        cg = os.path.join(CG, "py-ckpt")
        os.mkdir(cg)
        s = Session.open(cgroup=cg, policy=POLICY, socket=SOCK, sandbox_id=SANDBOX,
                         image_digest=DIGEST, checkpoint_interval=1)
        def decide():  # five connections from the cgroup: five decisions and their processes
            for _ in range(5):
                subprocess.run(["sh", "-c", 'echo $$ >"$0/cgroup.procs" && exec "$@"', cg, NP,
                                "connect", "127.0.0.1", PORT_A], capture_output=True)

        # rounds of decisions, a checkpoint due after each, until the file
        # holds 3 (each case below needs 3; a busy host may skip a round)
        ck = s.log_path + ".checkpoints"
        for _ in range(20):
            decide()
            time.sleep(1.5)
            if os.path.exists(ck) and len(lines_of(ck)) >= 3:
                break
        decide()  # lines after the last checkpoint, signed by the record only
        cls.r = s.close()
        cls.log, cls.rec, cls.pol = cls.r.log_path, cls.r.record_path, cls.r.policy_path
        cls.ck = lines_of(cls.log + ".checkpoints")
        cls.lines = lines_of(cls.log)
        cls.other = cls.path("other.pem")
        subprocess.run([KW, "keygen", "--out", cls.other], check=True, capture_output=True)

    @classmethod
    def path(cls, name):
        return os.path.join(cls.d, name)

    def write(self, name, lines):
        with open(self.path(name), "wb") as f:
            f.write(b"".join(x + b"\n" for x in lines))
        return self.path(name)

    def resign(self, lines, name):
        """A record over lines (a log kwitnessd did not close this way),
        signed with kwitnessd's own key."""
        h, n = transcript(lines)
        unsigned = subprocess.run(
            [KW, "record", "build", "--sandbox-id", SANDBOX, "--image-digest", DIGEST,
             "--policy", self.pol, "--transcript-hash", h, "--call-count", str(n),
             "--enforcement-mode", "enforce", "--model-provider", "example", "--model-id", "m-1"],
            check=True, capture_output=True).stdout
        with open(self.path(name + ".unsigned"), "wb") as f:
            f.write(unsigned)
        signed = subprocess.run([KW, "sign", "--key", os.path.join(ENV["KT_TMP"], "key.pem"),
                                 self.path(name + ".unsigned")], check=True,
                                capture_output=True).stdout
        with open(self.path(name), "wb") as f:
            f.write(signed)
        return self.path(name)

    def both(self, want, log=None, ckpt=None, rec=None, allow_incomplete=False):
        log, rec = log or self.log, rec or self.rec
        args = [KW, "verify", "--json", "--key", ENV["KT_JWK"], "--log", log, "--policy",
                self.pol]
        if ckpt:
            args += ["--checkpoints", ckpt]
        if allow_incomplete:
            args += ["--allow-incomplete"]
        r = subprocess.run(args + [rec], capture_output=True)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        c = json.loads(r.stdout.splitlines()[-1])
        p = kwitness.verify(rec, ENV["KT_JWK"], log=log, checkpoints=ckpt, policy=self.pol,
                            allow_incomplete=allow_incomplete)
        self.assertEqual(c["reason"], want, c["message"])
        self.assertEqual(p.reason, want, p.message)
        self.assertEqual(p.valid, c["valid"])
        self.assertEqual(p.checkpoints, c.get("checkpoints", ""))
        if want.startswith("checkpoint"):
            self.assertTrue(p.message.endswith(f"({c['message']})"), (p.message, c["message"]))
        return p, c

    def test_valid(self):
        """the session as kwitnessd closed it: ok in both, the same vouched lines"""
        self.assertGreaterEqual(len(self.ck), 3, "kwitnessd wrote a checkpoint per round")
        p, c = self.both("ok")
        last = json.loads(self.ck[-1])
        self.assertTrue(p.complete)
        self.assertEqual(p.vouched_lines, last["lines"])
        self.assertEqual(p.unvouched_lines, len(self.lines) - last["lines"] - 1)
        self.assertRegex(p.checkpoints, rf"^lines 1-{last['lines']} vouched for by checkpoint "
                                        rf"{len(self.ck)} of {len(self.ck)} \(sha256:")
        self.assertTrue(p.checkpoints.endswith("signed by the record"), p.checkpoints)

    def test_checkpoint_file_changed(self):
        """a checkpoint changed, removed, reordered, or from another key: each its own code"""
        ck = self.ck
        forged = re.sub(rb'"decisions":\d+', b'"decisions":1000000', ck[1])
        self.assertNotEqual(forged, ck[1])
        self.both("checkpoint_signature_invalid", ckpt=self.write("forged", [ck[0], forged,
                                                                             *ck[2:]]))
        self.both("checkpoint_chain_gap", ckpt=self.write("removed", [ck[0], *ck[2:]]))
        self.both("checkpoint_reordered", ckpt=self.write("reordered", [ck[0], ck[2], ck[1],
                                                                        *ck[3:]]))
        self.both("checkpoint_chain_gap", ckpt=self.write("lastgone", ck[:-1]))
        self.both("checkpoint_malformed", ckpt=self.write("spaced", [ck[0] + b" ", *ck[1:]]))
        torn = self.write("torn", ck)
        with open(torn, "ab") as f:
            f.write(ck[0][:40])  # a last line the power cut: ignored
        self.both("ok", ckpt=torn)
        gone = self.path("nockpt.jsonl")
        shutil.copy(self.log, gone)
        self.both("checkpoints_missing", log=gone)

    def test_checkpoint_of_another_key(self):
        """checkpoint 2 signed by another key: under its own kid, and under the trusted kid"""
        from cryptography.hazmat.primitives import serialization

        with open(self.other, "rb") as f:
            priv = serialization.load_pem_private_key(f.read(), None)
        show = subprocess.run([KW, "key", "show", "--key", self.other], check=True,
                              capture_output=True, text=True).stdout
        kid = re.search(r"^thumbprint: (\S+)$", show, re.M).group(1)

        def signed_by_other(line, new_kid):
            unsigned = re.sub(rb',"signature":"[^"]*"', b"", line)
            if new_kid:
                unsigned = re.sub(rb'"kid":"[^"]*"', b'"kid":"' + new_kid.encode() + b'"',
                                  unsigned)
            sig = base64.urlsafe_b64encode(priv.sign(unsigned)).rstrip(b"=")
            return unsigned.replace(b',"transcript_prefix"',
                                    b',"signature":"' + sig + b'","transcript_prefix"')

        ck = self.ck
        self.both("checkpoint_key_mismatch",
                  ckpt=self.write("otherkid", [ck[0], signed_by_other(ck[1], kid), *ck[2:]]))
        self.both("checkpoint_signature_invalid",
                  ckpt=self.write("othersig", [ck[0], signed_by_other(ck[1], None), *ck[2:]]))

    def test_vouched_line_changed(self):
        """a line under checkpoint 1 changed: the record's transcript fails first; a record
        signed over the changed log fails with checkpoint_prefix_mismatch"""
        first = json.loads(self.ck[0])["lines"]
        at = next(i for i in range(1, first) if b'"pid":' in self.lines[i])
        edited = list(self.lines)
        edited[at] = re.sub(rb'"pid":(\d)', rb'"pid":1\1', edited[at], count=1)
        log = self.write("edited.jsonl", edited)
        shutil.copy(self.log + ".checkpoints", log + ".checkpoints")
        self.both("transcript_mismatch", log=log)
        p, _ = self.both("checkpoint_prefix_mismatch", log=log, rec=self.resign(edited, "e.json"))
        self.assertEqual(p.vouched_lines, 0)

    def test_log_cut_below_last_checkpoint(self):
        """the log cut between its last two checkpoints, with a record over what is left:
        checkpoint_beyond_log outranks log_incomplete, allowed or not"""
        below = json.loads(self.ck[-2])["lines"]
        cut = self.lines[:below + 1]
        log = self.write("cut.jsonl", cut)
        shutil.copy(self.log + ".checkpoints", log + ".checkpoints")
        rec = self.resign(cut, "cut.json")
        p, _ = self.both("checkpoint_beyond_log", log=log, rec=rec)
        self.assertEqual((p.vouched_lines, p.unvouched_lines), (below, 1))
        self.assertTrue(p.checkpoints.endswith("1 line(s) after it not vouched for"), p.checkpoints)
        self.both("checkpoint_beyond_log", log=log, rec=rec, allow_incomplete=True)
        with open(log + ".checkpoints", "wb") as f:
            f.write(b"".join(x + b"\n" for x in self.ck[:-1]))
        p, _ = self.both("ok", log=log, rec=rec, allow_incomplete=True)
        self.assertFalse(p.complete)


if __name__ == "__main__":
    unittest.main()
