#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A small DNS server and client for the egress-by-name tests.

  serve ZONE PORTFILE      DNS over UDP and TCP on 127.0.0.1, a free port
                           (written to PORTFILE). ZONE is read again for every
                           question, lines "NAME A|AAAA|CNAME VALUE TTL", so a
                           test can move a name. Unknown names: NXDOMAIN.
  listen PORTFILE ADDR...  TCP servers on ADDR (one free port for all, written
                           to PORTFILE); accepts and closes until killed.
  query SERVER PORT NAME [A|AAAA] [udp|tcp]
                           one question; prints "RCODE addr,addr" or "timeout"
                           (or the errno name when sending fails).
  bench SERVER PORT NAME N N questions one after the other on one socket;
                           prints "mean_us p50_us p99_us qps rcode"
  resolve NAME             the system's resolver (getaddrinfo, /etc/resolv.conf);
                           prints the IPv4 addresses, or "error: ..."
The wire format is written here from RFC 1035, independently of kwitnessd's.
"""
import errno
import os
import socket
import struct
import sys
import threading

TYPES = {"A": 1, "CNAME": 5, "AAAA": 28}


def encode_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def read_name(msg, off):
    labels = []
    while True:
        n = msg[off]
        if n == 0:
            return ".".join(labels), off + 1
        if n & 0xC0 == 0xC0:
            ptr = struct.unpack(">H", msg[off:off + 2])[0] & 0x3FFF
            rest, _ = read_name(msg, ptr)
            labels.append(rest)
            return ".".join(l for l in labels if l), off + 2
        labels.append(msg[off + 1:off + 1 + n].decode("ascii", "replace"))
        off += 1 + n


def load_zone(path):
    zone = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 4:
                zone.append((parts[0].lower().rstrip("."), parts[1], parts[2], int(parts[3])))
    return zone


def answer(query, zone_path):
    qid, flags, qd = struct.unpack(">HHH", query[:6])
    name, off = read_name(query, 12)
    qtype, qclass = struct.unpack(">HH", query[off:off + 4])
    question = query[12:off + 4]
    zone = load_zone(zone_path)
    records = []
    cur, known = name.lower(), False
    for _ in range(8):
        step = [r for r in zone if r[0] == cur]
        if step:
            known = True
        cname = [r for r in step if r[1] == "CNAME"]
        if cname:
            records.append((cur, 5, encode_name(cname[0][2]), cname[0][3]))
            cur = cname[0][2].lower()
            continue
        for r in step:
            if TYPES.get(r[1]) == qtype:
                fam = socket.AF_INET if r[1] == "A" else socket.AF_INET6
                records.append((cur, qtype, socket.inet_pton(fam, r[2]), r[3]))
        break
    rcode = 0 if known else 3
    out = struct.pack(">HHHHHH", qid, 0x8180 | (flags & 0x0100) | rcode, 1, len(records), 0, 0)
    out += question
    for owner, t, rdata, ttl in records:
        out += encode_name(owner) + struct.pack(">HHIH", t, 1, ttl, len(rdata)) + rdata
    return out


def serve(zone_path, portfile):
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    port = udp.getsockname()[1]
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind(("127.0.0.1", port))
    tcp.listen(16)

    def tcp_loop():
        while True:
            c, _ = tcp.accept()
            try:
                c.settimeout(5)
                hdr = c.recv(2)
                n = struct.unpack(">H", hdr)[0]
                q = b""
                while len(q) < n:
                    chunk = c.recv(n - len(q))
                    if not chunk:
                        break
                    q += chunk
                a = answer(q, zone_path)
                c.sendall(struct.pack(">H", len(a)) + a)
            except Exception:
                pass
            finally:
                c.close()

    threading.Thread(target=tcp_loop, daemon=True).start()
    with open(portfile + ".tmp", "w") as f:
        f.write(str(port))
    os.rename(portfile + ".tmp", portfile)
    while True:
        q, peer = udp.recvfrom(4096)
        try:
            udp.sendto(answer(q, zone_path), peer)
        except Exception:
            pass


def listen(portfile, addrs):
    socks = []
    port = 0
    for _ in range(50):
        try:
            socks = []
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((addrs[0], port))
            port = s.getsockname()[1]
            socks.append(s)
            for a in addrs[1:]:
                t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                t.bind((a, port))
                socks.append(t)
            break
        except OSError:
            for s in socks:
                s.close()
            port = 0
    for s in socks:
        s.listen(64)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(port))
    os.rename(portfile + ".tmp", portfile)

    def loop(s):
        while True:
            c, _ = s.accept()
            c.close()

    for s in socks[1:]:
        threading.Thread(target=loop, args=(s,), daemon=True).start()
    loop(socks[0])


def query(server, port, name, qtype="A", proto="udp"):
    qid = int.from_bytes(os.urandom(2), "big")
    msg = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + encode_name(name) + \
        struct.pack(">HH", TYPES[qtype], 1)
    fam = socket.AF_INET6 if ":" in server else socket.AF_INET
    try:
        if proto == "tcp":
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect((server, int(port)))
            s.sendall(struct.pack(">H", len(msg)) + msg)
            n = struct.unpack(">H", s.recv(2))[0]
            resp = b""
            while len(resp) < n:
                resp += s.recv(n - len(resp))
            src = (server, int(port))
        else:
            s = socket.socket(fam, socket.SOCK_DGRAM)
            s.settimeout(5)
            s.sendto(msg, (server, int(port)))
            resp, src = s.recvfrom(4096)
    except socket.timeout:
        return "timeout"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    rid, flags, qd, an = struct.unpack(">HHHH", resp[:8])
    if rid != qid:
        return "bad-id"
    if proto == "udp" and src[0] != server:
        # the stub resolver's check: the answer must come from who was asked
        return "wrong-source %s" % src[0]
    rcode = {0: "NOERROR", 2: "SERVFAIL", 3: "NXDOMAIN", 5: "REFUSED"}.get(flags & 15, str(flags & 15))
    _, off = read_name(resp, 12)
    off += 4
    addrs = []
    for _ in range(an):
        _, off = read_name(resp, off)
        t, _, _, rdlen = struct.unpack(">HHIH", resp[off:off + 10])
        off += 10
        if t == 1:
            addrs.append(socket.inet_ntop(socket.AF_INET, resp[off:off + 4]))
        elif t == 28:
            addrs.append(socket.inet_ntop(socket.AF_INET6, resp[off:off + 16]))
        off += rdlen
    return rcode + " " + ",".join(addrs)


def bench(server, port, name, n):
    import time
    fam = socket.AF_INET6 if ":" in server else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.settimeout(5)
    base = encode_name(name) + struct.pack(">HH", 1, 1)
    times = []
    rcode = "?"
    start = time.perf_counter()
    for i in range(int(n)):
        msg = struct.pack(">HHHHHH", i & 0xFFFF, 0x0100, 1, 0, 0, 0) + base
        t0 = time.perf_counter()
        s.sendto(msg, (server, int(port)))
        resp, _ = s.recvfrom(4096)
        times.append(time.perf_counter() - t0)
        rcode = str(resp[3] & 15)
    total = time.perf_counter() - start
    times.sort()
    mean = sum(times) / len(times)
    return "%.1f %.1f %.1f %.0f %s" % (mean * 1e6, times[len(times) // 2] * 1e6,
                                       times[int(len(times) * 0.99)] * 1e6, len(times) / total, rcode)


def resolve(name):
    try:
        infos = socket.getaddrinfo(name, None, socket.AF_INET, socket.SOCK_STREAM)
    except socket.gaierror as e:
        return "error: %s" % e
    return ",".join(sorted({i[4][0] for i in infos}))


def main():
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(sys.argv[2], sys.argv[3])
    elif cmd == "listen":
        listen(sys.argv[2], sys.argv[3:])
    elif cmd == "query":
        print(query(*sys.argv[2:]))
    elif cmd == "bench":
        print(bench(*sys.argv[2:]))
    elif cmd == "resolve":
        print(resolve(sys.argv[2]))


if __name__ == "__main__":
    main()
