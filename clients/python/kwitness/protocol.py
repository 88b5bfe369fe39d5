# SPDX-License-Identifier: Apache-2.0
"""kwitnessd's control socket: one JSON object per line each way over a Unix
stream socket (docs/kwitnessd.md, "Control protocol"). Every reply carries
"ok"; a refusal adds "error" (a stable code) and a one-line "message"."""

from __future__ import annotations

import json
import os
import socket as _socket
from typing import Any

__all__ = ["DEFAULT_SOCKET", "SOCKET_ENV", "KwitnessError", "socket_path", "call"]

DEFAULT_SOCKET = "/run/kwitness/kwitnessd.sock"
SOCKET_ENV = "KWITNESS_SOCKET"
# A close reply carries a whole record; anything past this is not kwitnessd.
MAX_REPLY = 64 * 1024 * 1024


class KwitnessError(Exception):
    """kwitnessd refused (``code`` is its error code, e.g. "cgroup_tagged"), or
    could not be reached ("unreachable"), or answered nonsense ("protocol")."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def socket_path(given: str | os.PathLike[str] | None = None) -> str:
    if given is not None:
        return os.fspath(given)
    return os.environ.get(SOCKET_ENV) or DEFAULT_SOCKET


def call(request: dict[str, Any], socket: str | os.PathLike[str] | None = None,
         timeout: float | None = 600.0) -> dict[str, Any]:
    """Sends one request and returns the ok reply; raises KwitnessError otherwise."""
    path = socket_path(socket)
    line = json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        try:
            s.connect(path)
        except OSError as e:
            raise KwitnessError("unreachable",
                                f"cannot reach kwitnessd at {path}: {e.strerror or e}") from None
        s.sendall(line)
        buf = bytearray()
        while b"\n" not in buf:
            if len(buf) > MAX_REPLY:
                raise KwitnessError("protocol", "reply from kwitnessd too large")
            chunk = s.recv(65536)
            if not chunk:
                raise KwitnessError("unreachable", "kwitnessd closed the connection without a reply")
            buf += chunk
    finally:
        s.close()
    try:
        reply = json.loads(bytes(buf[:buf.index(b"\n")]))
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        raise KwitnessError("protocol", "kwitnessd sent a reply that is not a JSON object")
    if reply.get("ok") is not True:
        raise KwitnessError(str(reply.get("error") or "error"),
                            str(reply.get("message") or "(no message)"))
    return reply
