# SPDX-License-Identifier: Apache-2.0
"""The client against a real kwitnessd and real cgroups (run by
tests/kernel/test_python_client.sh, which starts kwitnessd and two listeners
and passes them in the environment). A process in the cgroup makes one allowed
and one denied connection; the result's decisions, hashes and record must
agree with each other, with the signed record, with `kwitness verify`, and
with agentrust-trace's adapter formulas over the same values."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import kwitness
from kwitness import KwitnessError, Session

ENV = os.environ
SOCK, CG, NP, KW = ENV.get("KT_SOCK"), ENV.get("KT_CG"), ENV.get("KT_NP"), ENV.get("KW")
PORT_A, PORT_B = ENV.get("LPORT_A"), ENV.get("LPORT_B")
DIGEST = "sha256:" + "b" * 64
POLICY = ('{"kwitness_policy":1,"mode":"enforce","record":"all","on_record_failure":"deny",'
          '"net":{"connect":["127.0.0.1/32:%s"]}}' % PORT_A).encode()


def make_cgroup(name):
    path = os.path.join(CG, name)
    os.mkdir(path)
    return path


def run_in(cgroup, *argv):
    """Runs argv inside the cgroup (it joins before exec)."""
    return subprocess.run(["sh", "-c", 'echo $$ >"$0/cgroup.procs" && exec "$@"', cgroup, *argv],
                          capture_output=True, text=True)


@unittest.skipUnless(SOCK and CG and NP and KW and PORT_B, "needs tests/kernel/test_python_client.sh")
class Live(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cg = make_cgroup("py-main")
        cls.session = Session.open(cgroup=cls.cg, policy=POLICY, socket=SOCK,
                                   sandbox_id="spiffe://test.kwitness.local/py/main",
                                   image_digest=DIGEST, model_provider="example",
                                   model_id="m-1")
        cls.during = cls.session.status()
        cls.allowed = run_in(cls.cg, NP, "connect", "127.0.0.1", PORT_A)
        cls.denied = run_in(cls.cg, NP, "connect", "127.0.0.1", PORT_B)
        cls.r = cls.session.close()

    def test_status_while_open(self):
        """Session.status(): kwitnessd lists the session as open on our cgroup"""
        self.assertEqual(self.during["state"], "open")
        self.assertEqual(self.during["cgroup"], self.cg)
        self.assertIsNone(self.session.status(), "closed sessions are not listed")

    def test_kernel_enforced(self):
        """the process inside got EPERM on the denied port only"""
        self.assertEqual(self.allowed.returncode, 0, self.allowed.stdout + self.allowed.stderr)
        self.assertIn("EPERM", self.denied.stdout + self.denied.stderr)

    def test_result_fields(self):
        """close(): the SandboxSessionResult fields are what was opened with"""
        self.assertEqual(self.r.sandbox_id, "spiffe://test.kwitness.local/py/main")
        self.assertEqual(self.r.image_digest, DIGEST)
        self.assertEqual(self.r.policy_bundle_bytes, POLICY)
        self.assertTrue(self.r.complete)
        self.assertEqual(self.r.counts["denials"], 1)

    def test_decisions_are_the_log(self):
        """decisions: every log entry, open first, the kernel's deny of port B, trailer last"""
        d = self.r.decisions
        self.assertEqual(d[0]["tool"], "kwitness.open")
        self.assertEqual(d[-1]["tool"], "kwitness.close")
        deny = [e for e in d if e.get("port") == int(PORT_B)]
        self.assertEqual(len(deny), 1)
        self.assertEqual((deny[0]["decision"], deny[0]["enforced"]), ("deny", True))
        with open(self.r.log_path, "rb") as f:
            self.assertEqual([json.loads(l) for l in f], d)

    def test_adapter_identity(self):
        """the adapter's transcript_hash, call_count and bundle_hash over the result equal the record's"""
        rec = self.r.record
        self.assertEqual(kwitness.transcript_hash(self.r.decisions), rec["tool_transcript"]["hash"])
        self.assertEqual(self.r.transcript_hash, rec["tool_transcript"]["hash"])
        self.assertEqual(len(self.r.decisions), rec["tool_transcript"]["call_count"])
        self.assertEqual(kwitness.bundle_hash(self.r.policy_bundle_bytes), rec["policy"]["bundle_hash"])
        self.assertEqual(rec["build_provenance"]["digest"], DIGEST)
        self.assertEqual(rec["subject"], self.r.sandbox_id)

    def test_canonical_lines(self):
        """each log line is exactly the RFC 8785 form of its entry (so the identity is not luck)"""
        with open(self.r.log_path, "rb") as f:
            for line in f:
                self.assertEqual(kwitness.canonicalize(json.loads(line)), line.rstrip(b"\n"))

    def test_software_measurement(self):
        """runtime.measurement = the adapter's software_measurement(image, bundle_hash)"""
        rec = self.r.record
        if rec["runtime"]["platform"] != "software-only":
            self.skipTest("kwitnessd runs with a TPM: the measurement is the quote's")
        self.assertEqual(rec["runtime"]["measurement"],
                         kwitness.software_measurement(DIGEST, kwitness.bundle_hash(POLICY)))

    def test_enforcement_mode_from_kernel_side(self):
        """enforcement_mode is the record's, and the mode kwitnessd applied (the log's open entry)"""
        self.assertEqual(self.r.enforcement_mode, "enforce")
        self.assertEqual(self.r.decisions[0]["mode"], self.r.enforcement_mode)
        self.assertEqual(self.r.record["policy"]["enforcement_mode"], self.r.enforcement_mode)

    def test_record_file_and_verify(self):
        """the record file holds result.record, and kwitness verify --log --policy accepts it"""
        with open(self.r.record_path, "rb") as f:
            self.assertEqual(json.loads(f.read()), self.r.record)
        v = subprocess.run([KW, "verify", "--key", ENV["KT_JWK"], "--log", self.r.log_path,
                            "--policy", self.r.policy_path, self.r.record_path],
                           capture_output=True, text=True)
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)

    def test_close_twice(self):
        """close() again returns the same result without asking kwitnessd"""
        self.assertIs(self.session.close(), self.r)


@unittest.skipUnless(SOCK and CG and NP and KW and PORT_B, "needs tests/kernel/test_python_client.sh")
class LiveMore(unittest.TestCase):
    def test_open_by_pid_with_policy_file(self):
        """open(pid=..., policy=path): the session is on the process's cgroup"""
        cg = make_cgroup("py-pid")
        p = subprocess.Popen(["sh", "-c", 'echo $$ >"$0/cgroup.procs" && exec sleep 30', cg])
        try:
            for _ in range(50):
                with open(os.path.join(cg, "cgroup.procs")) as f:
                    if str(p.pid) in f.read().split():
                        break
                subprocess.run(["sleep", "0.1"])
            pol = os.path.join(ENV["KT_TMP"], "py-policy.json")
            with open(pol, "wb") as f:
                f.write(POLICY)
            with Session.open(pid=p.pid, policy=pol, socket=SOCK, image_digest=DIGEST,
                              sandbox_id="did:example:py-pid") as s:
                self.assertEqual(s.cgroup, cg)
                self.assertEqual(s.status()["cgroup"], cg)
            self.assertIsNotNone(s.result)
            self.assertEqual(s.result.policy_bundle_bytes, POLICY)
            self.assertEqual(s.result.record["subject"], "did:example:py-pid")
        finally:
            p.kill()
            p.wait()

    def test_refusals_carry_codes(self):
        """kwitnessd's refusals arrive as KwitnessError with its code"""
        cg = make_cgroup("py-refuse")
        with self.assertRaises(KwitnessError) as e:
            Session.open(cgroup=cg, policy=POLICY, socket=SOCK, image_digest=DIGEST,
                         sandbox_id="https://not-a-subject")
        self.assertEqual(e.exception.code, "invalid_field")
        with self.assertRaises(KwitnessError) as e:
            Session.open(cgroup=cg, policy=b'{"kwitness_policy":1,"mode":"bogus"}', socket=SOCK,
                         image_digest=DIGEST, sandbox_id="did:example:x")
        self.assertEqual(e.exception.code, "policy_invalid")
        s = Session.open(cgroup=cg, policy=POLICY, socket=SOCK, image_digest=DIGEST,
                         sandbox_id="did:example:first")
        try:
            with self.assertRaises(KwitnessError) as e:
                Session.open(cgroup=cg, policy=POLICY, socket=SOCK, image_digest=DIGEST,
                             sandbox_id="did:example:second")
            self.assertEqual(e.exception.code, "cgroup_tagged")
        finally:
            s.close()

    def test_status_and_list(self):
        """status() and list_sessions(): kwitnessd's hooks and sessions"""
        st = kwitness.status(SOCK)
        self.assertIn("net.connect", st["hooks_available"])
        self.assertIsInstance(kwitness.list_sessions(SOCK), list)


def readme_example():
    """The Python block the package README marks as run by this test, verbatim."""
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    after = text.split("<!-- example: tests/kernel/test_python_client.sh", 1)[1]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


@unittest.skipUnless(SOCK and CG and NP and KW and PORT_B, "needs tests/kernel/test_python_client.sh")
class LiveSandbox(unittest.TestCase):
    def test_sandbox_governs_and_records(self):
        """kwitness.sandbox: children in the cgroup, unprivileged, EPERM on the denied port, record verified"""
        with kwitness.sandbox(policy=POLICY, sandbox_id="spiffe://test.kwitness.local/py/sbx",
                              socket=SOCK, cgroup_parent=CG, key=ENV["KT_JWK"]) as s:
            cg = s.cgroup
            ident = s.run(["sh", "-c", 'id -u; cat /proc/self/cgroup'], capture_output=True,
                          text=True)
            allowed = s.run([NP, "connect", "127.0.0.1", PORT_A], capture_output=True, text=True)
            denied = s.run([NP, "connect", "127.0.0.1", PORT_B], capture_output=True, text=True)
        self.assertEqual(ident.stdout.split()[0], "65534", "root's children run as nobody")
        self.assertIn("0::" + cg[len(kwitness.cgroup2_mount()):], ident.stdout)
        self.assertEqual(allowed.returncode, 0, allowed.stdout + allowed.stderr)
        self.assertIn("EPERM", denied.stdout + denied.stderr)
        self.assertTrue(s.verdict.valid, s.verdict.message)
        self.assertTrue(s.verdict.complete)
        self.assertEqual(s.result.counts["denials"], 1)
        deny = [e for e in s.result.decisions if e.get("decision") == "deny"]
        self.assertEqual((deny[0]["port"], deny[0]["uid"]), (int(PORT_B), 65534))
        self.assertFalse(os.path.exists(cg), "the sandbox's cgroup is removed")
        v = subprocess.run([KW, "verify", "--key", ENV["KT_JWK"], "--log", s.result.log_path,
                            "--policy", s.result.policy_path, s.result.record_path],
                           capture_output=True, text=True)
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)

    def test_sandbox_kills_what_is_left(self):
        """leaving the block kills a child still running, and the trailer counts it"""
        with kwitness.sandbox(policy=POLICY, socket=SOCK, cgroup_parent=CG) as s:
            p = s.popen(["sleep", "300"])
        self.assertEqual(p.returncode, -9)
        self.assertGreaterEqual(s.result.counts["killed"], 1)
        self.assertEqual(s.result.counts["kill_failed"], 0)
        self.assertTrue(s.verdict.valid, s.verdict.message)
        self.assertTrue(s.result.record["subject"].startswith("spiffe://kwitness.local/python/"))

    def test_sandbox_open_refused(self):
        """a policy kwitnessd refuses: KwitnessError with its code, and no cgroup left behind"""
        before = set(os.listdir(CG))
        with self.assertRaises(KwitnessError) as e:
            with kwitness.sandbox(policy=b'{"kwitness_policy":1,"mode":"bogus"}', socket=SOCK,
                                  cgroup_parent=CG):
                self.fail("the block must not run")
        self.assertEqual(e.exception.code, "policy_invalid")
        self.assertEqual(set(os.listdir(CG)), before)

    def test_readme_example_runs_as_written(self):
        """clients/python/README.md's example, verbatim: exit 1, one denial, ok complete"""
        with tempfile.TemporaryDirectory() as d:
            with open(ENV["KT_JWK"], "rb") as src, open(os.path.join(d, "signer.jwk"), "wb") as dst:
                dst.write(src.read())
            env = dict(ENV, KWITNESS_SOCKET=SOCK, PATH="/usr/bin:/bin",
                       PYTHONPATH=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
            r = subprocess.run([sys.executable, "-c", readme_example()], cwd=d, env=env,
                               capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "exit 1 denials 1\nok complete\n", r.stderr)


if __name__ == "__main__":
    unittest.main()
