# SPDX-License-Identifier: Apache-2.0
"""kwitness.sandbox: what ``kwitness run`` does, for Python workloads.

    with kwitness.sandbox(policy="policy.json", sandbox_id="spiffe://example.org/agent/1") as s:
        s.run(["python3", "agent.py"])
    s.result.record, s.verdict.valid

Entering makes a cgroup under the host's cgroup2 mount (found in
/proc/self/mountinfo, so hybrid hosts work), opens a kwitnessd session for it
(the cgroup is tagged before anything runs in it), and ``run``/``popen``
start processes inside it: each child joins the cgroup between fork and exec.
Leaving freezes the cgroup, closes the session with kwitnessd killing what is
left (counted in the log's trailer), verifies the record and removes the
cgroup. Needs root (or a cgroup delegated to the caller and a control socket
kwitnessd lets it use).

Run as root, children run unprivileged with no_new_privs set, as kwitness
run's do: as ``user`` when given (a name or uid), else SUDO_UID/SUDO_GID, else
nobody; ``as_root=True`` keeps root, which can undo the sandbox."""

from __future__ import annotations

import ctypes
import errno
import hashlib
import itertools
import os
import pwd
import subprocess
import sys
import time
from typing import Any, Sequence

from .cgroup import cgroup2_mount
from .protocol import KwitnessError, call
from .session import Session, SessionResult
from .verify import Verdict, verify

__all__ = ["Sandbox", "sandbox"]

_PR_SET_NO_NEW_PRIVS = 38
_counter = itertools.count()


def _file_digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def _identity(user: str | int | None, as_root: bool) -> tuple[int, int, list[int]] | None:
    """(uid, gid, groups) children switch to, or None to keep the caller's."""
    if as_root or os.geteuid() != 0:
        return None
    if user is None:
        su, sg = os.environ.get("SUDO_UID"), os.environ.get("SUDO_GID")
        if su and su != "0":
            uid = int(su)
            gid = int(sg) if sg else uid
            return uid, gid, []
        user = "nobody"
    try:
        pw = pwd.getpwuid(user) if isinstance(user, int) else pwd.getpwnam(user)
    except KeyError:
        if user == "nobody":
            return 65534, 65534, []
        raise ValueError(f"user {user!r}: no such user") from None
    if pw.pw_uid == 0:
        raise ValueError("user root: pass as_root=True to keep root (it can undo the sandbox)")
    return pw.pw_uid, pw.pw_gid, os.getgrouplist(pw.pw_name, pw.pw_gid)


class Sandbox:
    """A cgroup under a kwitnessd session. Use kwitness.sandbox(...) as a context manager."""

    def __init__(self, *, policy: bytes | str | os.PathLike[str], sandbox_id: str | None = None,
                 image_digest: str | None = None, socket: str | os.PathLike[str] | None = None,
                 user: str | int | None = None, as_root: bool = False,
                 key: Any = None, model_provider: str | None = None,
                 model_id: str | None = None, data_class: str | None = None,
                 close_wait: float = 300.0, cgroup_parent: str | os.PathLike[str] | None = None):
        self.policy = policy
        self.sandbox_id = sandbox_id or f"spiffe://kwitness.local/python/{os.getpid()}"
        # The image the workload runs from; by default this interpreter, as
        # kwitness run takes CMD's executable.
        self.image_digest = image_digest or _file_digest(sys.executable)
        self.socket = socket
        self.identity = _identity(user, as_root)
        self.key = key
        self.open_options = {"model_provider": model_provider, "model_id": model_id,
                             "data_class": data_class}
        self.close_wait = close_wait
        self.cgroup_parent = os.fspath(cgroup_parent) if cgroup_parent is not None else None
        self.cgroup: str | None = None
        self.session: Session | None = None
        self.result: SessionResult | None = None
        self.verdict: Verdict | None = None
        self._children: list[subprocess.Popen] = []

    # -- entering ------------------------------------------------------------
    def __enter__(self) -> "Sandbox":
        base = self.cgroup_parent or os.path.join(cgroup2_mount(), "kwitness")
        try:
            os.makedirs(base, exist_ok=True)
        except PermissionError:
            raise PermissionError(errno.EACCES, f"cannot make {base}: kwitness.sandbox needs root "
                                  "or a cgroup delegated to you") from None
        cg = os.path.join(base, f"py-{os.getpid()}-{next(_counter)}")
        os.mkdir(cg, 0o755)
        self.cgroup = cg
        try:
            self.session = Session.open(cgroup=cg, policy=self.policy, sandbox_id=self.sandbox_id,
                                        image_digest=self.image_digest, socket=self.socket,
                                        **self.open_options)
        except BaseException:
            self._remove_cgroup()
            raise
        return self

    def _preexec(self, procs_fd: int) -> None:
        # In the child, between fork and exec: join first (as the caller),
        # then drop to the workload's identity for good.
        os.write(procs_fd, b"0")
        if self.identity is not None:
            uid, gid, groups = self.identity
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            os._exit(126)

    def popen(self, args: Sequence[str] | str, **kwargs: Any) -> subprocess.Popen:
        """subprocess.Popen(args, **kwargs) with the child inside the sandbox."""
        if self.session is None or self.result is not None:
            raise RuntimeError("the sandbox is not open (use it as a context manager)")
        if "preexec_fn" in kwargs or "user" in kwargs or "group" in kwargs:
            raise ValueError("preexec_fn, user and group are the sandbox's: give user= to "
                             "kwitness.sandbox instead")
        fd = os.open(os.path.join(self.cgroup, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
        try:
            p = subprocess.Popen(args, preexec_fn=lambda: self._preexec(fd), **kwargs)
        finally:
            os.close(fd)
        self._children.append(p)
        return p

    def run(self, args: Sequence[str] | str, *, input: Any = None, timeout: float | None = None,
            check: bool = False, capture_output: bool = False,
            **kwargs: Any) -> subprocess.CompletedProcess:
        """subprocess.run(args, ...) with the child inside the sandbox."""
        if capture_output:
            if "stdout" in kwargs or "stderr" in kwargs:
                raise ValueError("stdout and stderr may not be used with capture_output")
            kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
        if input is not None:
            kwargs["stdin"] = subprocess.PIPE
        with self.popen(args, **kwargs) as p:
            try:
                out, err = p.communicate(input, timeout=timeout)
            except BaseException:
                p.kill()
                p.wait()
                raise
        done = subprocess.CompletedProcess(p.args, p.returncode, out, err)
        if check:
            done.check_returncode()
        return done

    # -- leaving -------------------------------------------------------------
    def _close(self) -> SessionResult:
        """Closes the session with kwitnessd killing what is left, waiting
        up to close_wait for a kwitnessd that is restarting."""
        assert self.session is not None
        until = time.monotonic() + self.close_wait
        while True:
            try:
                reply = call({"op": "close", "session": self.session.id, "kill": True},
                             self.session.socket)
                break
            except KwitnessError as e:
                if e.code != "unreachable" or time.monotonic() >= until:
                    raise
                time.sleep(0.2)
        return self.session.close_reply(reply)

    def __exit__(self, *exc: object) -> None:
        if self.session is None:
            return
        try:
            try:
                with open(os.path.join(self.cgroup, "cgroup.freeze"), "w") as f:
                    f.write("1")
            except OSError:
                pass  # the close kills what is left either way
            self.result = self._close()
            for p in self._children:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:  # kwitnessd's kill did not reach it
                    p.kill()
                    p.wait()
            self.verdict = verify(self.result.record, self.key, log=self.result.log_path,
                                  policy=self.result.policy_bundle_bytes,
                                  allow_embedded_key=self.key is None)
        finally:
            self._remove_cgroup()

    def _remove_cgroup(self) -> None:
        cg, self.cgroup = self.cgroup, None
        if cg is None:
            return
        for _ in range(200):
            try:
                os.rmdir(cg)
                return
            except FileNotFoundError:
                return
            except OSError as e:
                if e.errno != errno.EBUSY:
                    raise
            try:
                with open(os.path.join(cg, "cgroup.kill"), "w") as f:
                    f.write("1")
            except OSError:
                pass
            time.sleep(0.01)


def sandbox(*, policy: bytes | str | os.PathLike[str], sandbox_id: str | None = None,
            **kwargs: Any) -> Sandbox:
    """A recorded sandbox session around Python-started workloads; see Sandbox.

    policy: the bundle's bytes or its file. sandbox_id: the record's subject
    (spiffe:// or did:), default spiffe://kwitness.local/python/<pid>. Other
    keywords: image_digest, socket, user, as_root, key (the trusted key the
    record is verified with; default the record's embedded key), model_provider,
    model_id, data_class, close_wait, cgroup_parent (default: the cgroup2
    mount's kwitness/, as kwitness run uses)."""
    return Sandbox(policy=policy, sandbox_id=sandbox_id, **kwargs)
