# SPDX-License-Identifier: Apache-2.0
"""A process's cgroup2 cgroup: the "0::" line of /proc/PID/cgroup under the
cgroup2 mount read from /proc/self/mountinfo (never a guessed path: hybrid
hosts mount cgroup2 at /sys/fs/cgroup/unified)."""

from __future__ import annotations

import re

__all__ = ["cgroup2_mount", "pid_cgroup"]


def _unescape(s: str) -> str:
    # mountinfo writes space, tab, newline and backslash as \ooo
    return re.sub(r"\\([0-3][0-7][0-7])", lambda m: chr(int(m.group(1), 8)), s)


def cgroup2_mount() -> str:
    """Where cgroup2 is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on
    hybrid hosts), from /proc/self/mountinfo. FileNotFoundError when none is."""
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            left, sep, right = line.partition(" - ")
            if sep and right.split(" ", 1)[0] == "cgroup2":
                return _unescape(left.split(" ")[4])
    raise FileNotFoundError("no cgroup2 mount in /proc/self/mountinfo")


def pid_cgroup(pid: int) -> str:
    """The cgroup2 directory of process pid (the mount plus its "0::" path)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        raise ValueError(f"pid {pid!r}: not a process id")
    with open(f"/proc/{pid}/cgroup", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.startswith("0::/"):
                continue
            path = line[3:]
            if "/.." in path or path.endswith(" (deleted)"):
                raise ValueError(f"pid {pid}: its cgroup is outside this cgroup namespace or deleted")
            mount = cgroup2_mount()
            return mount if path == "/" else mount + path
    raise FileNotFoundError(f"pid {pid}: no cgroup2 line in /proc/{pid}/cgroup")
