#!/usr/bin/env python3
"""Hostile-server test suite for simcrawl.

Starts a misbehaving HTTP server on 127.0.0.1 (raw sockets via socketserver, so that it can break
HTTP at the byte level), then crawls one scenario at a time with the simcrawl binary and reports,
for each scenario, what the crawler did: counters from `simcrawl stats --json`, the exit code, wall
time, peak RSS, whether it panicked, whether it had to be killed, and how many requests the server
saw.

Every listener binds 127.0.0.1, but for the scenarios' "other hosts" on 127.0.0.2 (another address of
this machine's loopback), and every link, redirect and seed points at them: the suite never sends
traffic anywhere else. A request that reaches a host a rule excludes fails its scenario.

    python3 scripts/hostile_suite.py                     # all scenarios, 4 crawls at a time
    python3 scripts/hostile_suite.py --only gzip-bomb,redirect-loop --json
    python3 scripts/hostile_suite.py --list

Standard library only (Python 3.11).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import shlex
import random
import re
import select
import shutil
import signal
import socket
import socketserver
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Callable

HOST = "127.0.0.1"
# Another host on this machine, for the scenarios whose redirects leave the seed's host: every crawl
# runs with `--include ^http://127\.0\.0\.1:`, so it must never be asked anything.
OTHER_HOST = "127.0.0.2"
MAX_HOLD = 180.0  # no server-side stall lasts longer than this
STOP = threading.Event()

# ---------------------------------------------------------------------------------------------
# Request accounting
# ---------------------------------------------------------------------------------------------

LOCK = threading.Lock()
REQUESTS: collections.Counter[str] = collections.Counter()
PATHS: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
MAX_PATHS = 20000


def count(scenario: str, target: str) -> None:
    with LOCK:
        REQUESTS[scenario] += 1
        paths = PATHS[scenario]
        if target in paths or len(paths) < MAX_PATHS:
            paths[target] += 1


# ---------------------------------------------------------------------------------------------
# Connection helpers
# ---------------------------------------------------------------------------------------------


class Gone(Exception):
    """The client went away."""


@dataclass
class Request:
    method: str
    target: str  # raw request-target as sent
    headers: list[tuple[str, str]]
    port: int  # the listener's port

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def query(self) -> str:
        return self.target.split("?", 1)[1] if "?" in self.target else ""


class Conn:
    def __init__(self, sock: socket.socket):
        self.sock = sock

    def send(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError as e:
            raise Gone() from e

    def closed_by_peer(self, wait: float) -> bool:
        """Waits up to `wait` s; True if the client closed (or reset) the connection."""
        try:
            r, _, _ = select.select([self.sock], [], [], wait)
            if r:
                data = self.sock.recv(65536)
                return not data
        except OSError:
            return True
        return False

    def hold(self, limit: float = MAX_HOLD) -> None:
        """Sends nothing until the client gives up (bounded by `limit`)."""
        end = time.monotonic() + limit
        while time.monotonic() < end and not STOP.is_set():
            if self.closed_by_peer(1.0):
                return

    def head(self, status: str = "200 OK", headers: list[tuple[str, str]] | None = None,
             ctype: str | None = "text/html; charset=utf-8", length: int | None = None) -> None:
        lines = [f"HTTP/1.1 {status}"]
        if ctype is not None:
            lines.append(f"Content-Type: {ctype}")
        if length is not None:
            lines.append(f"Content-Length: {length}")
        for k, v in headers or []:
            lines.append(f"{k}: {v}")
        lines.append("Connection: close")
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def respond(self, body: bytes | str, status: str = "200 OK",
                headers: list[tuple[str, str]] | None = None,
                ctype: str | None = "text/html; charset=utf-8") -> None:
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.head(status, headers, ctype, len(body))
        self.send(body)

    def stream(self, total: int | None, block: bytes, chunked: bool = False,
               limit_s: float = 120.0) -> None:
        """Sends `total` bytes (None: until the client leaves or `limit_s` passes) of `block`."""
        sent = 0
        end = time.monotonic() + limit_s
        while (total is None or sent < total) and time.monotonic() < end and not STOP.is_set():
            piece = block if total is None else block[: total - sent]
            if chunked:
                self.send(b"%x\r\n" % len(piece) + piece + b"\r\n")
            else:
                self.send(piece)
            sent += len(piece)
        if chunked and total is not None and sent >= total:
            self.send(b"0\r\n\r\n")

    def rst(self) -> None:
        """Closes with SO_LINGER 0: the client sees a TCP reset."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.sock.close()
        except OSError:
            pass


def read_request(sock: socket.socket, port: int) -> Request | None:
    sock.settimeout(15)
    buf = b""
    try:
        while b"\r\n\r\n" not in buf:
            data = sock.recv(65536)
            if not data:
                return None
            buf += data
            if len(buf) > 1 << 20:
                return None
    except OSError:
        return None
    finally:
        sock.settimeout(None)
    head = buf.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    lines = head.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) < 3:
        return None
    headers = []
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers.append((k.strip().lower(), v.strip()))
    return Request(parts[0], parts[1], headers, port)


# ---------------------------------------------------------------------------------------------
# Scenario registry
# ---------------------------------------------------------------------------------------------

Handler = Callable[[Conn, Request, "Scenario"], None]


@dataclass
class Scenario:
    name: str
    group: str
    what: str
    handler: Handler
    own_host: bool = False  # served on its own listener (robots.txt is per host)
    flags: list[str] = field(default_factory=list)
    slow: bool = False  # expected to run into the wall-clock limit or long waits: schedule first
    max_requests: int = 30  # more than this is reported as excessive
    check: Callable[["Scenario", dict], list[str]] | None = None
    port: int = 0  # own listener's port
    seed_path: str = ""
    other_host: bool = False  # also served on OTHER_HOST, whose requests count as "other:<target>"
    other_port: int = 0
    # Run on the crawl's store after the crawl (store directory, binary): notes, as `check`'s.
    after: Callable[[str, str], list[str]] | None = None

    @property
    def prefix(self) -> str:
        return f"/s/{self.name}/"

    def base(self, port: int) -> str:
        return f"http://{HOST}:{port}"


SCENARIOS: dict[str, Scenario] = {}
MAIN_PORT = 0
DEAD_PORT = 0


def scenario(name: str, group: str, what: str, **kw):
    def deco(fn: Handler) -> Handler:
        SCENARIOS[name] = Scenario(name, group, what, fn, **kw)
        return fn
    return deco


def page(title: str, body: str = "", links: list[str] = ()) -> str:
    words = " ".join(f"{title.replace(' ', '')}{i}" for i in range(40))
    anchors = "".join(f'<a href="{h}">link {i}</a>\n' for i, h in enumerate(links))
    return (f"<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
            f"<p>This page belongs to the hostile suite scenario {title}. {words}</p>{body}"
            f"{anchors}</body></html>")


def html_ok(conn: Conn, req: Request, sc: Scenario, links: list[str] = ()) -> None:
    conn.respond(page(f"{sc.name} {req.path}", links=links))


# ---------------------------------------------------------------------------------------------
# Cached payloads (built once, lazily)
# ---------------------------------------------------------------------------------------------

_CACHE: dict[str, bytes] = {}
_CACHE_LOCK = threading.Lock()


def cached(key: str, build: Callable[[], bytes]) -> bytes:
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE[key] = build()
        return _CACHE[key]


BOMB_GIB = 10


def _deflate_repeat(block: bytes = bytes(1 << 20), prefix: bytes = b"") -> tuple[bytes, int, int]:
    """Raw deflate of `prefix` + BOMB_GIB GiB of `block` repeated, built from one repeatable
    segment (a full flush resets the compressor, so each copy of `block` compresses to the same
    bytes). Returns (deflate bytes, uncompressed size, CRC-32 of the uncompressed data)."""
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = co.compress(prefix) + co.flush(zlib.Z_FULL_FLUSH) if prefix else b""
    seg = co.compress(block) + co.flush(zlib.Z_FULL_FLUSH)
    n = (BOMB_GIB << 30) // len(block)
    tail = co.flush(zlib.Z_FINISH)  # final empty block
    crc = zlib.crc32(prefix)
    for _ in range(n):
        crc = zlib.crc32(block, crc)
    return head + seg * n + tail, len(prefix) + n * len(block), crc


def _gzip_wrap(raw: bytes, size: int, crc: int) -> bytes:
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + raw + struct.pack("<II", crc, size & 0xFFFFFFFF)


def gzip_bomb() -> bytes:
    return cached("gzip", lambda: _gzip_wrap(*_deflate_repeat()))


def gzip_bomb_html() -> bytes:
    return cached("gzip-html", lambda: _gzip_wrap(*_deflate_repeat(
        b"<p>a</p>" * (1 << 17), b"<!doctype html><html><head><title>bomb</title></head><body>")))


def deflate_bomb() -> bytes:
    def build() -> bytes:
        raw, size, _ = _deflate_repeat()
        adler = ((size % 65521) << 16) | 1  # Adler-32 of zeros: a = 1, b = n mod 65521
        return b"\x78\xda" + raw + struct.pack(">I", adler)
    return cached("deflate", build)


def b36(n: int) -> str:
    s = ""
    while True:
        n, r = divmod(n, 36)
        s = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + s
        if n == 0:
            return s


# ---------------------------------------------------------------------------------------------
# Scenarios: timeouts and stalls
# ---------------------------------------------------------------------------------------------

G = "timeouts and stalls"


@scenario("stall-headers", G, "reads the request, never sends a byte", slow=True)
def _(c, r, s):
    c.hold()


@scenario("stall-body", G, "headers (Content-Length 100000) + 1 KiB of body, then silence", slow=True)
def _(c, r, s):
    c.head(length=100000)
    c.send(b"<html><body>" + b"a" * 1012)
    c.hold()


@scenario("stall-chunked", G, "chunked: one chunk, then silence", slow=True)
def _(c, r, s):
    c.head(headers=[("Transfer-Encoding", "chunked")])
    c.send(b"10\r\n<html><body>abcd\r\n")
    c.hold()


@scenario("trickle-body", G, "body of 1000 bytes at 1 byte/s", slow=True)
def _(c, r, s):
    c.head(length=1000)
    end = time.monotonic() + MAX_HOLD
    for i in range(1000):
        c.send(b"<" if i == 0 else b"a")
        if c.closed_by_peer(1.0) or time.monotonic() > end:
            return


@scenario("trickle-headers", G, "status line and headers at 1 byte/s (slowloris response)", slow=True)
def _(c, r, s):
    head = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-Slow-%d: %s\r\n" % (i, b"y" * 20) for i in range(50))
    for i in range(len(head)):
        c.send(head[i:i + 1])
        if c.closed_by_peer(1.0):
            return


@scenario("close-no-bytes", G, "reads the request and closes without a byte")
def _(c, r, s):
    pass


@scenario("reset-mid-body", G, "Content-Length 100000, 5 KiB of body, then RST (SO_LINGER 0)")
def _(c, r, s):
    c.head(length=100000)
    c.send(b"<html><body>" + b"x" * 5000)
    time.sleep(0.05)
    c.rst()


@scenario("reset-before-response", G, "reads the request, then RST")
def _(c, r, s):
    c.rst()


# ---------------------------------------------------------------------------------------------
# Size
# ---------------------------------------------------------------------------------------------

G = "size"
BLOCK = (b"<p>" + b"lorem ipsum dolor sit amet " * 2000 + b"</p>\n")


@scenario("huge-body-cl", G, "1 GiB text/html with Content-Length, generated on the fly")
def _(c, r, s):
    c.head(length=1 << 30)
    c.send(b"<html><body>")
    c.stream((1 << 30) - 12, BLOCK)


@scenario("huge-body-chunked", G, "1 GiB text/html, chunked, generated on the fly")
def _(c, r, s):
    c.head(headers=[("Transfer-Encoding", "chunked")])
    c.stream(1 << 30, BLOCK, chunked=True)


@scenario("endless-chunked", G, "chunked body that never ends (until the client leaves, <=120 s)")
def _(c, r, s):
    c.head(headers=[("Transfer-Encoding", "chunked")])
    c.stream(None, BLOCK, chunked=True)


@scenario("endless-until-close", G, "no length, no chunking, body never ends (<=120 s)")
def _(c, r, s):
    c.head()
    c.stream(None, BLOCK)


@scenario("gzip-bomb", G, f"Content-Encoding: gzip, ~10 MB of {BOMB_GIB} GiB of zeros (cached)")
def _(c, r, s):
    body = gzip_bomb()
    c.head(headers=[("Content-Encoding", "gzip")], length=len(body))
    c.send(body)


@scenario("deflate-bomb", G, f"Content-Encoding: deflate (zlib), ~10 MB of {BOMB_GIB} GiB of zeros")
def _(c, r, s):
    body = deflate_bomb()
    c.head(headers=[("Content-Encoding", "deflate")], length=len(body))
    c.send(body)


@scenario("gzip-bomb-html", G, f"Content-Encoding: gzip, {BOMB_GIB} GiB of `<p>a</p>` (~10 MB)")
def _(c, r, s):
    body = gzip_bomb_html()
    c.head(headers=[("Content-Encoding", "gzip")], length=len(body))
    c.send(body)


@scenario("gzip-bomb-chunked", G, "gzip bomb, chunked, no Content-Length")
def _(c, r, s):
    body = gzip_bomb()
    c.head(headers=[("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")])
    for i in range(0, len(body), 1 << 16):
        piece = body[i:i + (1 << 16)]
        c.send(b"%x\r\n" % len(piece) + piece + b"\r\n")
    c.send(b"0\r\n\r\n")


@scenario("huge-header-line", G, "one 1 MiB header line")
def _(c, r, s):
    body = page(s.name).encode()
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Huge: " + b"h" * (1 << 20)
           + b"\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)


@scenario("many-headers", G, "10,000 headers")
def _(c, r, s):
    body = page(s.name).encode()
    hdrs = b"".join(b"X-H%d: v\r\n" % i for i in range(10000))
    c.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + hdrs
           + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)


@scenario("endless-headers", G, "headers that never end (1 KiB header lines until the client leaves)")
def _(c, r, s):
    c.send(b"HTTP/1.1 200 OK\r\n")
    end = time.monotonic() + 120
    i = 0
    while time.monotonic() < end:
        c.send(b"X-E%d: %s\r\n" % (i, b"e" * 1024))
        i += 1


@scenario("huge-reason-phrase", G, "status line with a 1 MiB reason phrase")
def _(c, r, s):
    body = page(s.name).encode()
    c.send(b"HTTP/1.1 200 " + b"O" * (1 << 20) + b"\r\nContent-Type: text/html\r\n"
           + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)


# ---------------------------------------------------------------------------------------------
# Protocol
# ---------------------------------------------------------------------------------------------

G = "protocol"


def raw(c: Conn, head: bytes, body: bytes = b"") -> None:
    c.send(head + body)


@scenario("http09", G, "HTTP/0.9 style: HTML body with no status line, then close")
def _(c, r, s):
    c.send(page(s.name).encode())


@scenario("garbage-status", G, "status line `FOO BAR BAZ`")
def _(c, r, s):
    body = page(s.name).encode()
    raw(c, b"FOO BAR BAZ\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body), body)


@scenario("binary-status", G, "256 random bytes instead of a response")
def _(c, r, s):
    c.send(random.Random(7).randbytes(256))


@scenario("status-999", G, "HTTP/1.1 999 Whatever with an HTML body")
def _(c, r, s):
    c.respond(page(s.name), status="999 Whatever")


@scenario("status-100-only", G, "`100 Continue` and nothing else, then close")
def _(c, r, s):
    c.send(b"HTTP/1.1 100 Continue\r\n\r\n")


@scenario("status-100-flood", G, "`100 Continue` repeated forever (<=60 s), no final response", slow=True)
def _(c, r, s):
    end = time.monotonic() + 60
    while time.monotonic() < end:
        c.send(b"HTTP/1.1 100 Continue\r\n\r\n" * 100)
        if c.closed_by_peer(0.01):
            return


@scenario("cl-too-large", G, "Content-Length 100000, 2 KiB sent, close")
def _(c, r, s):
    c.head(length=100000)
    c.send(page(s.name).encode()[:2048])


@scenario("cl-too-small", G, "Content-Length 10, full page sent")
def _(c, r, s):
    c.head(length=10)
    c.send(page(s.name).encode())


@scenario("cl-negative", G, "Content-Length: -1")
def _(c, r, s):
    c.head(length=-1)
    c.send(page(s.name).encode())


@scenario("cl-duplicate-conflict", G, "two Content-Length headers, 50 and 5000")
def _(c, r, s):
    body = page(s.name).encode()
    raw(c, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 50\r\n"
        b"Content-Length: 5000\r\nConnection: close\r\n\r\n", body)


@scenario("te-and-cl", G, "Transfer-Encoding: chunked and Content-Length: 5")
def _(c, r, s):
    body = page(s.name).encode()
    raw(c, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n"
        b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")


@scenario("chunk-size-invalid", G, "chunked, chunk size `zz`")
def _(c, r, s):
    c.head(headers=[("Transfer-Encoding", "chunked")])
    c.send(b"10\r\n<html><body>abcd\r\nzz\r\nhello\r\n0\r\n\r\n")


@scenario("chunk-size-overflow", G, "chunked, chunk size ffffffffffffffffffff")
def _(c, r, s):
    c.head(headers=[("Transfer-Encoding", "chunked")])
    c.send(b"10\r\n<html><body>abcd\r\nffffffffffffffffffff\r\nhello\r\n0\r\n\r\n")


@scenario("chunk-size-negative", G, "chunked, chunk size -5")
def _(c, r, s):
    c.head(headers=[("Transfer-Encoding", "chunked")])
    c.send(b"10\r\n<html><body>abcd\r\n-5\r\nhello\r\n0\r\n\r\n")


@scenario("bare-lf", G, "status line and headers ended by bare LF")
def _(c, r, s):
    body = page(s.name).encode()
    raw(c, b"HTTP/1.1 200 OK\nContent-Type: text/html\nContent-Length: %d\nConnection: close\n\n"
        % len(body), body)


@scenario("nul-in-header", G, "a header value containing NUL and CR bytes")
def _(c, r, s):
    body = page(s.name).encode()
    raw(c, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Bad: a\x00b\rc\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body), body)


@scenario("bad-content-encoding", G, "Content-Encoding: gzip on a plain body")
def _(c, r, s):
    c.respond(page(s.name), headers=[("Content-Encoding", "gzip")])


@scenario("unknown-content-encoding", G, "Content-Encoding: x-gibberish")
def _(c, r, s):
    c.respond(page(s.name), headers=[("Content-Encoding", "x-gibberish")])


@scenario("truncated-gzip", G, "Content-Encoding: gzip, stream cut in the middle")
def _(c, r, s):
    co = zlib.compressobj(6, zlib.DEFLATED, 31)
    z = co.compress(page(s.name).encode() * 20) + co.flush()
    body = z[: len(z) // 2]
    c.respond(body, headers=[("Content-Encoding", "gzip")])


# ---------------------------------------------------------------------------------------------
# Redirects
# ---------------------------------------------------------------------------------------------

G = "redirects"


def redirect(c: Conn, location: bytes | str, status: str = "302 Found") -> None:
    if isinstance(location, str):
        location = location.encode("utf-8")
    raw(c, b"HTTP/1.1 " + status.encode() + b"\r\nLocation: " + location
        + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


ESCAPED = "REACHED AN EXCLUDED HOST"


def _nothing_elsewhere(s: Scenario, rec: dict) -> list[str]:
    """No request reached OTHER_HOST, robots.txt included (it is outside --include)."""
    other = [p for p in rec.get("paths", {}) if p.startswith("other:")]
    return [f"{ESCAPED}: {other[:5]}"] if other else []


def _to_other_host(c: Conn, r: Request, s: Scenario) -> None:
    """The seed (and any page here) redirects to OTHER_HOST, which serves a page."""
    if r.port == s.other_port:
        html_ok(c, r, s)
    else:
        redirect(c, f"http://{OTHER_HOST}:{s.other_port}{s.prefix}escaped")


scenario("seed-redirect-other-host", G,
         "the seed redirects to 127.0.0.2 (outside --include): no request may reach it",
         other_host=True, check=_nothing_elsewhere)(_to_other_host)


@scenario("link-redirect-other-host", G,
          "a link redirects to 127.0.0.2 (outside --include): no request may reach it",
          other_host=True, check=_nothing_elsewhere)
def _(c, r, s):
    if r.port == s.other_port:
        html_ok(c, r, s)
    elif r.path.endswith("/away"):
        redirect(c, f"http://{OTHER_HOST}:{s.other_port}{s.prefix}escaped")
    else:
        html_ok(c, r, s, links=[f"{s.prefix}away"])


@scenario("seed-redirect-excluded-path", G,
          "the seed redirects to a path --exclude names: it is never requested",
          flags=["--exclude", "/excluded/"],
          check=lambda s, rec: [f"{ESCAPED}: {p}" for p in rec.get("paths", {}) if "/excluded/" in p])
def _(c, r, s):
    redirect(c, f"{s.prefix}excluded/x")


@scenario("redirect-loop", G, "A -> B -> A")
def _(c, r, s):
    redirect(c, s.prefix + ("b" if not r.path.endswith("/b") else "a"))


@scenario("redirect-chain-50", G, "50-hop redirect chain, then a page", max_requests=60)
def _(c, r, s):
    m = re.search(r"/hop/(\d+)$", r.path)
    n = int(m.group(1)) if m else 0
    if n >= 50:
        html_ok(c, r, s)
    else:
        redirect(c, f"{s.prefix}hop/{n + 1}")


@scenario("redirect-self", G, "redirects to itself")
def _(c, r, s):
    redirect(c, r.target)


@scenario("redirect-self-absolute", G, "redirects to itself (absolute URL, 301)")
def _(c, r, s):
    redirect(c, f"http://{HOST}:{r.port}{r.target}", "301 Moved Permanently")


@scenario("redirect-empty-location", G, "302 with `Location:` empty")
def _(c, r, s):
    redirect(c, b"")


@scenario("redirect-bad-location", G, "Location: http://[::1 (unparseable)")
def _(c, r, s):
    redirect(c, b"http://[::1")


@scenario("redirect-unicode-location", G, "Location with spaces and raw UTF-8 (`/a b/caf\u00e9/\u65e5\u672c`)")
def _(c, r, s):
    if "/x" in r.path or "%" in r.path or "caf" in r.path:
        html_ok(c, r, s)
    else:
        redirect(c, f"{s.prefix}x a b/caf\u00e9/\u65e5\u672c?q=\u00fc \u00fc")


@scenario("redirect-latin1-location", G, "Location with raw latin-1 bytes (invalid UTF-8)")
def _(c, r, s):
    if "/x" in r.path:
        html_ok(c, r, s)
    else:
        redirect(c, s.prefix.encode() + b"x\xe9\xff\xfe")


@scenario("redirect-no-location", G, "301 without Location")
def _(c, r, s):
    raw(c, b"HTTP/1.1 301 Moved Permanently\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


@scenario("redirect-dead-port", G, "302 to 127.0.0.1:<port where nothing listens>")
def _(c, r, s):
    redirect(c, f"http://{HOST}:{DEAD_PORT}/s/{s.name}/")


@scenario("redirect-file-scheme", G, "302 to file:///etc/passwd (no network involved)")
def _(c, r, s):
    redirect(c, "file:///etc/passwd")


@scenario("redirect-many-locations", G, "302 with two conflicting Location headers")
def _(c, r, s):
    if r.path.endswith("/a") or r.path.endswith("/b"):
        html_ok(c, r, s)
        return
    raw(c, b"HTTP/1.1 302 Found\r\nLocation: " + s.prefix.encode() + b"a\r\nLocation: "
        + s.prefix.encode() + b"b\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


@scenario("meta-refresh-loop", G, "<meta http-equiv=refresh> A -> B -> A")
def _(c, r, s):
    other = s.prefix + ("b" if not r.path.endswith("/b") else "a")
    c.respond(f'<html><head><meta http-equiv="refresh" content="0; url={other}"><title>r</title>'
              f'</head><body>{page(s.name + r.path)}</body></html>')


@scenario("redirect-fanout", G, "every page 302s to 2 fresh URLs via links (bounded trap check)",
          flags=["--max-pages", "200"], max_requests=210)
def _(c, r, s):
    m = re.search(r"/n/(\d+)$", r.path)
    n = int(m.group(1)) if m else 0
    if n % 2:
        redirect(c, f"{s.prefix}n/{n * 2 + 2}")
    else:
        html_ok(c, r, s, [f"{s.prefix}n/{n * 2 + 1}", f"{s.prefix}n/{n * 2 + 3}"])


# ---------------------------------------------------------------------------------------------
# Robots (each on its own listener: robots.txt is per host)
# ---------------------------------------------------------------------------------------------

G = "robots"


def robots_site(c: Conn, r: Request, s: Scenario, robots: Callable[[], None]) -> None:
    if r.path == "/robots.txt" or r.path.startswith("/robots"):
        robots()
    else:
        html_ok(c, r, s, [f"{s.prefix}p1", f"{s.prefix}p2"])


def _robots_check_seed_only(s: Scenario, rec: dict) -> list[str]:
    paths = rec.get("paths", {})
    pages = [p for p in paths if not p.startswith("/robots")]
    return [f"FETCHED DISALLOWED: {pages[:5]}"] if pages else []


def _robots_nonrobots(s: Scenario, rec: dict) -> list[str]:
    pages = [p for p in rec.get("paths", {}) if not p.startswith("/robots")]
    robots = sum(n for p, n in rec.get("paths", {}).items() if p.startswith("/robots"))
    return [f"robots.txt requests {robots}, page requests {len(pages)}"]


@scenario("robots-500", G, "robots.txt answers 500", own_host=True, slow=True,
          check=_robots_nonrobots)
def _(c, r, s):
    robots_site(c, r, s, lambda: c.respond("oops", status="500 Internal Server Error",
                                           ctype="text/plain"))


@scenario("robots-503-retry-after", G, "robots.txt answers 503 with Retry-After: 3600",
          own_host=True, slow=True, check=_robots_nonrobots)
def _(c, r, s):
    robots_site(c, r, s, lambda: c.respond("later", status="503 Service Unavailable",
                                           headers=[("Retry-After", "3600")], ctype="text/plain"))


@scenario("robots-stall", G, "robots.txt request never answered", own_host=True, slow=True,
          check=_robots_nonrobots)
def _(c, r, s):
    robots_site(c, r, s, lambda: c.hold())


@scenario("robots-20mib", G, "robots.txt of 20 MiB (Allow lines, Disallow: /p2 at the very end)",
          own_host=True, check=_robots_nonrobots)
def _(c, r, s):
    def robots():
        line = b"Allow: /" + b"a" * 90 + b"\n"
        total = 20 << 20
        tail = b"User-agent: *\nDisallow: /s/robots-20mib/p2\n"
        c.head(ctype="text/plain", length=total + 14 + len(tail))
        c.send(b"User-agent: *\n")
        c.stream(total, line * 1000)
        c.send(tail)
    robots_site(c, r, s, robots)


@scenario("robots-redirect-loop", G, "robots.txt redirects /robots.txt -> /robots2.txt -> /robots.txt",
          own_host=True, check=_robots_nonrobots)
def _(c, r, s):
    robots_site(c, r, s, lambda: redirect(
        c, "/robots2.txt" if r.path == "/robots.txt" else "/robots.txt"))


@scenario("robots-html", G, "robots.txt is a 200 text/html page", own_host=True,
          check=_robots_nonrobots)
def _(c, r, s):
    robots_site(c, r, s, lambda: c.respond(page("not robots", "<p>Disallow: /</p>")))


@scenario("robots-binary", G, "robots.txt is 64 KiB of random bytes (text/plain)", own_host=True,
          check=_robots_nonrobots)
def _(c, r, s):
    robots_site(c, r, s, lambda: c.respond(random.Random(3).randbytes(65536), ctype="text/plain"))


@scenario("robots-disallow-all", G, "robots.txt `Disallow: /`: nothing but robots.txt may be fetched",
          own_host=True, check=_robots_check_seed_only)
def _(c, r, s):
    robots_site(c, r, s, lambda: c.respond("User-agent: *\nDisallow: /\n", ctype="text/plain"))


@scenario("robots-disallow-ua", G, "robots.txt disallows `simcrawl` by token, allows others",
          own_host=True, check=_robots_check_seed_only)
def _(c, r, s):
    robots_site(c, r, s, lambda: c.respond(
        "User-agent: Googlebot\nAllow: /\n\nUser-agent: simcrawl\nDisallow: /\n", ctype="text/plain"))


@scenario("robots-crawl-delay-huge", G, "robots.txt Crawl-delay: 100000, seed links to 2 pages",
          own_host=True, slow=True, check=_robots_nonrobots)
def _(c, r, s):
    robots_site(c, r, s, lambda: c.respond("User-agent: *\nCrawl-delay: 100000\nAllow: /\n",
                                           ctype="text/plain"))


@scenario("robots-crawl-delay-garbage", G, "robots.txt Crawl-delay: 1e400 / -5 / NaN",
          own_host=True, check=_robots_nonrobots)
def _(c, r, s):
    robots_site(c, r, s, lambda: c.respond(
        "User-agent: *\nCrawl-delay: 1e400\nCrawl-delay: -5\nCrawl-delay: NaN\nAllow: /\n",
        ctype="text/plain"))


@scenario("robots-crawl-delay-inf", G, "robots.txt Crawl-delay: inf (parks the host)",
          own_host=True, check=_robots_nonrobots)
def _(c, r, s):
    robots_site(c, r, s, lambda: c.respond("User-agent: *\nCrawl-delay: inf\nAllow: /\n",
                                           ctype="text/plain"))


# ---------------------------------------------------------------------------------------------
# Retry-After
# ---------------------------------------------------------------------------------------------

G = "retry-after"


def ra(status: str, value: str):
    def handler(c: Conn, r: Request, s: Scenario) -> None:
        if r.path.endswith("/p1") or r.path.endswith("/p2"):
            html_ok(c, r, s)
        elif status.startswith("200"):
            c.respond(page(s.name, links=[f"{s.prefix}p1", f"{s.prefix}p2"]),
                      headers=[("Retry-After", value)])
        else:
            c.respond(page(s.name), status=status, headers=[("Retry-After", value)])
    return handler


for _status, _code in (("429 Too Many Requests", "429"), ("503 Service Unavailable", "503")):
    for _label, _value in (("1e23", "1e23"), ("u64-overflow", "18446744073709551616"),
                           ("negative", "-5"), ("date-far", "Fri, 31 Dec 9999 23:59:59 GMT"),
                           ("garbage", "soon")):
        scenario(f"ra-{_code}-{_label}", G, f"{_code} with Retry-After: {_value!r}",
                 slow=_label in ("negative", "garbage"))(ra(_status, _value))

scenario("ra-200-1e23", G, "200 (linking 2 pages) with Retry-After: 1e23")(ra("200 OK", "1e23"))
scenario("ra-200-date-far", G, "200 (linking 2 pages) with Retry-After: 9999 date")(
    ra("200 OK", "Fri, 31 Dec 9999 23:59:59 GMT"))
scenario("ra-429-1", G, "429 with Retry-After: 1 (counts the retries)", slow=True)(
    ra("429 Too Many Requests", "1"))


# ---------------------------------------------------------------------------------------------
# Content
# ---------------------------------------------------------------------------------------------

G = "stores"
DAMAGED = "DAMAGED STORE ACCEPTED"
WRITTEN = "READ WROTE"


def _store_files(store: str) -> dict[str, tuple[int, int]]:
    out = {}
    for root, _dirs, files in os.walk(store):
        for name in files:
            path = os.path.join(root, name)
            st = os.stat(path)
            out[os.path.relpath(path, store)] = (st.st_size, st.st_mtime_ns)
    return out


def _damaged_records(store: str, binary: str) -> list[str]:
    """A cleanly closed store whose page records lost bytes: every command names the file and exits
    non-zero, and a resume writes nothing over it."""
    path = os.path.join(store, "page_records.records")
    if not os.path.exists(path):
        return ["no page_records.records to damage"]
    with open(path, "r+b") as f:
        size = f.seek(0, os.SEEK_END)
        f.truncate(max(0, size // 2))

    def files() -> dict[str, tuple[int, int]]:
        # The record files: opening the store to find the damage writes the lock file (its
        # holder) and lets sled open its own files, but no record may be written over.
        return {k: v for k, v in _store_files(store).items()
                if k.endswith((".records", ".index"))}

    before = files()
    notes = []
    for cmd in (["stats", "--store", store], ["export", "--store", store],
                ["crawl", "--store", store]):
        p = subprocess.run([binary] + cmd, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode == 0 or "page_records" not in err:
            notes.append(f"{DAMAGED}: `{cmd[0]}` exit {p.returncode}: {err.strip()[-160:]}")
    after = files()
    if after != before:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        notes.append(f"{DAMAGED}: the damaged store was written ({', '.join(changed[:5])})")
    return notes


def _read_only(store: str, binary: str) -> list[str]:
    """Every read command on a store the user may only read: exit 0, and no file of the store
    changed (bytes or modification time), none created or removed."""
    subprocess.run(["chmod", "-R", "a+rX,a-w", store], check=True)
    os.chmod(os.path.dirname(store), 0o755)
    before = _store_files(store)
    # Root may write anything: the commands run as `nobody` when the suite runs as root.
    prefix = (["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
              if os.geteuid() == 0 and shutil.which("setpriv") else [])
    notes = []
    for cmd in (["stats"], ["skipped"], ["export"], ["search", "page"], ["mirrors"], ["failed"]):
        p = subprocess.run(prefix + [binary] + cmd + ["--store", store], capture_output=True,
                           timeout=60, stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            err = p.stderr.decode("utf-8", "replace").strip()[-160:]
            notes.append(f"READ-ONLY `{cmd[0]}` exit {p.returncode}: {err}")
    after = _store_files(store)
    if after != before:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        notes.append(f"{WRITTEN}: a read command changed the store ({', '.join(changed[:5])})")
    subprocess.run(["chmod", "-R", "u+w", store], check=True)
    return notes


@scenario("store-damaged-records", G,
          "a clean store's page records cut in half: stats, export and a resume refuse it",
          after=_damaged_records)
def _(c, r, s):
    html_ok(c, r, s, links=[f"{s.prefix}p{i}" for i in range(3)])


@scenario("store-read-only", G,
          "stats, skipped, export, search, mirrors and failed on a store only readable",
          after=_read_only)
def _(c, r, s):
    html_ok(c, r, s, links=[f"{s.prefix}p{i}" for i in range(3)])


G = "content"


@scenario("charset-latin1-as-utf8", G, "declared utf-8, body latin-1")
def _(c, r, s):
    text = page("caf\u00e9 na\u00efve r\u00e9sum\u00e9 " * 3).encode("latin-1")
    c.respond(text, ctype="text/html; charset=utf-8")


@scenario("charset-sjis-invalid", G, "declared shift_jis, invalid byte sequences")
def _(c, r, s):
    body = page("sjis").encode() + b"\x81\x20\xa0\xfd\xfe\xff\x85\x7f" * 500
    c.respond(body, ctype="text/html; charset=shift_jis")


@scenario("charset-utf16-bom", G, "UTF-16LE with BOM, Content-Type without charset")
def _(c, r, s):
    c.respond(b"\xff\xfe" + page("utf sixteen").encode("utf-16-le"), ctype="text/html")


@scenario("charset-bogus", G, "charset=x-does-not-exist and a conflicting <meta charset=utf-7>")
def _(c, r, s):
    body = page("bogus").replace("<head>", '<head><meta charset="utf-7">')
    c.respond(body + "+ADw-script+AD4-", ctype="text/html; charset=x-does-not-exist")


@scenario("deep-nesting", G, "100,000 nested <div>s")
def _(c, r, s):
    body = cached("deep", lambda: (page("deep", "<div>" * 100000 + "deep text here"
                                         + "</div>" * 100000)).encode())
    c.respond(body)


@scenario("deep-nesting-mixed", G, "100,000 nested <table><tr><td><b><i> with no close tags")
def _(c, r, s):
    body = cached("deep2", lambda: page("deep2", "<table><tr><td><b><i><a><p>" * 15000).encode())
    c.respond(body)


def _million_links() -> bytes:
    # Relative hrefs against /s/million-links/: 1,000,000 links, ~13 MB (the crawler reads 10 MiB).
    parts = [page("million").split("</body>")[0]]
    parts.extend(f"<a href=l/{b36(i)}>" for i in range(1_000_000))
    parts.append("</body></html>")
    return "".join(parts).encode()


@scenario("million-links", G, "~13 MB page with 1,000,000 links to /s/million-links/l/N",
          flags=["--max-pages", "50"], max_requests=60)
def _(c, r, s):
    if "/l/" in r.path:
        c.respond(f"<html><title>{r.path}</title><body>{r.path}</body></html>")
    else:
        c.respond(cached("million", _million_links))


@scenario("million-attributes", G, "one <div> with 1,000,000 attributes (~9 MB)")
def _(c, r, s):
    body = cached("attrs", lambda: ("<html><body><div " + " ".join(
        f"a{b36(i)}=1" for i in range(1_000_000)) + ">text</div>" + page("attrs") + "</body></html>"
    ).encode())
    c.respond(body)


@scenario("null-bytes", G, "HTML sprinkled with NUL bytes (also in tags and hrefs)")
def _(c, r, s):
    if "/p" in r.path:
        html_ok(c, r, s)
        return
    body = page("nul").replace(" ", " \x00").encode() + (
        f'<a hr\x00ef="{s.prefix}p\x001">x</a><a href="{s.prefix}p2\x00">y</a>'.encode())
    c.respond(body)


@scenario("binary-as-html", G, "1 MiB of random bytes labelled text/html")
def _(c, r, s):
    c.respond(random.Random(5).randbytes(1 << 20), ctype="text/html")


@scenario("no-content-type", G, "HTML page with no Content-Type header")
def _(c, r, s):
    c.respond(page(s.name), ctype=None)


@scenario("png-as-html", G, "a PNG (64 KiB) labelled text/html")
def _(c, r, s):
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + random.Random(9).randbytes(65536)
    c.respond(png, ctype="text/html")


@scenario("unclosed-comment", G, "`<!--` never closed, then 5 MiB")
def _(c, r, s):
    c.respond(page("comment").replace("<body>", "<body><!--") + "a-" * (5 << 19))


@scenario("one-huge-word", G, "9 MiB text node with no white space")
def _(c, r, s):
    c.respond(page("word", "x" * (9 << 20)))


@scenario("many-small-tags", G, "~9 MiB of <b></b> (2 million elements)")
def _(c, r, s):
    c.respond(page("tags", "<b>w</b>" * 1_200_000))


@scenario("huge-title", G, "<title> of 5 MiB")
def _(c, r, s):
    c.respond("<html><head><title>" + "t " * (5 << 19) + "</title></head>" + page("title") + "</html>")


@scenario("script-only", G, "8 MiB inside one <script>, with `</scr` + `ipt>` splits")
def _(c, r, s):
    c.respond("<html><body><script>var a='</scr'+'ipt>';" + "x=1;" * (2 << 20)
              + "</script>" + page("script") + "</body></html>")


# ---------------------------------------------------------------------------------------------
# URL oddities in links
# ---------------------------------------------------------------------------------------------

G = "urls"


def _pair_targets(s: Scenario, rec: dict) -> list[str]:
    seen: dict[str, set[str]] = collections.defaultdict(set)
    for p in rec.get("paths", {}):
        m = re.match(re.escape(s.prefix) + r"p(\d+)/", p)
        if m:
            seen[m.group(1)].add(p)
    both = sorted((k for k, v in seen.items() if len(v) > 1), key=int)
    desc = ", ".join(f"p{k}:{len(seen[k])}" for k in sorted(seen, key=int))
    notes = [f"distinct targets per pair: {desc or 'none fetched'}"]
    if both:
        notes.append(f"BOTH SPELLINGS FETCHED for {len(both)}/{len(PAIRS)} pairs "
                     f"({', '.join('p' + k for k in both)})")
    return notes


# (pair id, literal spelling, percent-encoded spelling)
PAIRS = [
    ("1", "a[b]", "a%5Bb%5D"),
    ("2", "a|b", "a%7Cb"),
    ("3", "a^b", "a%5Eb"),
    ("4", "a`b", "a%60b"),
    ("5", "?q=[x]", "?q=%5Bx%5D"),
    ("6", "?q=a|b^c", "?q=a%7Cb%5Ec"),
    ("7", "?q=`x`", "?q=%60x%60"),
    ("8", "a~b", "a%7Eb"),
    ("9", "A", "%41"),
    ("10", "a%5Bb", "a%5bb"),
    ("11", "a b", "a%20b"),
    ("12", "x/./y/../z", "x/z"),
]


@scenario("url-pairs", G, "[ ] | ^ ` ~ space in paths/queries, literal and percent-encoded",
          check=_pair_targets, max_requests=40)
def _(c, r, s):
    m = re.match(re.escape(s.prefix) + r"p(\d+)/", r.path)
    if m:
        c.respond(page(f"pair {m.group(1)}"))  # same content for both spellings of one pair
        return
    links = []
    for pid, a, b in PAIRS:
        links += [f"{s.prefix}p{pid}/{a}", f"{s.prefix}p{pid}/{b}"]
    c.respond(page(s.name, links=links))


@scenario("long-urls", G, "links with 10,000- and 100,000-character URLs", max_requests=40)
def _(c, r, s):
    if "/l/" in r.path:
        html_ok(c, r, s)
        return
    links = [f"{s.prefix}l/{i}/" + "a" * n for i, n in enumerate((2000, 10000, 100000))]
    links += [f"{s.prefix}l/q{i}?" + "&".join(f"k{j}=v" for j in range(n)) for i, n in
              enumerate((500, 5000))]
    c.respond(page(s.name, links=links))


@scenario("js-data-links", G, "javascript:, data:, mailto:, tel:, file:, vbscript:, about: links")
def _(c, r, s):
    links = ["javascript:alert(1)", "javascript:location='/s/js-data-links/evil'",
             "data:text/html,<a href=/s/js-data-links/evil2>x</a>", "mailto:a@127.0.0.1",
             "tel:+100", "file:///etc/passwd", "vbscript:msgbox", "about:blank", "blob:abc",
             "JaVaScRiPt:alert(2)", " javascript:alert(3)", "java\tscript:alert(4)"]
    c.respond(page(s.name, links=links))


@scenario("weird-hrefs", G, "hrefs: `http://[::1`, `http://127.0.0.1:99999/`, `//`, `http:`, "
          "`:::`, `%zz`, lone surrogates")
def _(c, r, s):
    if r.path != s.prefix:
        html_ok(c, r, s)
        return
    links = ["http://[::1", f"http://{HOST}:99999/", "//", "http:", ":::", f"{s.prefix}%zz",
             f"{s.prefix}%", "\ud800".encode("utf-8", "surrogatepass").decode("latin-1"),
             f"http://{HOST}:{r.port}{s.prefix}ok", f"http://{HOST}:0/", "?", "#frag",
             f"{s.prefix}" + "../" * 50 + "etc/passwd"]
    c.respond(page(s.name, links=links))


@scenario("fragment-variants", G, "200 links that differ only by #fragment", max_requests=10)
def _(c, r, s):
    if r.path != s.prefix:
        html_ok(c, r, s)
        return
    c.respond(page(s.name, links=[f"{s.prefix}t#f{i}" for i in range(200)]))


@scenario("query-trap", G, "every page links to itself with one more query parameter",
          flags=["--max-pages", "100"], max_requests=110)
def _(c, r, s):
    q = r.query
    n = q.count("&") + 1 if q else 0
    nxt = r.path + "?" + (q + "&" if q else "") + f"p{n}={n}"
    c.respond(page(f"{s.name} {n}", links=[nxt]))


@scenario("path-trap", G, "relative link `a/` on every page: /a/a/a/a/...",
          flags=["--max-pages", "100"], max_requests=110)
def _(c, r, s):
    c.respond(page(f"{s.name} {r.path.count('/')}", links=["a/"]))


# ---------------------------------------------------------------------------------------------
# Server plumbing
# ---------------------------------------------------------------------------------------------


class MainHandler(socketserver.BaseRequestHandler):
    scenario_name: str | None = None  # set on the per-scenario listener classes

    def handle(self) -> None:
        sock: socket.socket = self.request
        port = self.server.server_address[1]
        conn = Conn(sock)
        req = read_request(sock, port)
        fixed = self.scenario_name
        if req is None:
            if fixed:
                count(fixed, "<no request>")
            return
        if fixed:
            sc = SCENARIOS[fixed]
        else:
            m = re.match(r"/s/([^/?]+)/", req.target)
            sc = SCENARIOS.get(m.group(1)) if m else None
            if sc is None:
                count("<other>", req.target)
                try:
                    if req.path == "/robots.txt":
                        conn.respond("not found", status="404 Not Found", ctype="text/plain")
                    else:
                        conn.respond("no such scenario", status="404 Not Found", ctype="text/plain")
                except Gone:
                    pass
                return
        other = self.server.server_address[0] != HOST
        count(sc.name, ("other:" if other else "") + req.target)
        try:
            sc.handler(conn, req, sc)
        except Gone:
            pass
        except Exception as e:  # a bug in the suite, not in the crawler
            print(f"[server] scenario {sc.name}: {type(e).__name__}: {e}", file=sys.stderr)

    def finish(self) -> None:
        try:
            self.request.close()
        except OSError:
            pass


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def start_listener(handler_cls, host: str = HOST) -> Server:
    srv = Server((host, 0), handler_cls)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def start_servers(selected: list[Scenario]) -> list[Server]:
    global MAIN_PORT, DEAD_PORT
    servers = [start_listener(MainHandler)]
    MAIN_PORT = servers[0].server_address[1]
    for sc in selected:
        if sc.own_host:
            cls = type(f"Handler_{sc.name}", (MainHandler,), {"scenario_name": sc.name})
            srv = start_listener(cls)
            sc.port = srv.server_address[1]
            servers.append(srv)
        else:
            sc.port = MAIN_PORT
        if sc.other_host:
            cls = type(f"OtherHandler_{sc.name}", (MainHandler,), {"scenario_name": sc.name})
            srv = start_listener(cls, OTHER_HOST)
            sc.other_port = srv.server_address[1]
            servers.append(srv)
    # A port on 127.0.0.1 where nothing listens: bind, note, close (kept unbound for the run).
    with socket.socket() as tmp:
        tmp.bind((HOST, 0))
        DEAD_PORT = tmp.getsockname()[1]
    return servers


# ---------------------------------------------------------------------------------------------
# Running the crawler
# ---------------------------------------------------------------------------------------------

TIME_BIN = "/usr/bin/time"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def children_of(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


FAIL_PATTERNS = [
    ("timeout", re.compile(r"timed out")),
    ("connect", re.compile(r"connect failed")),
    ("body", re.compile(r"reading the body failed")),
    ("redirect loop", re.compile(r"redirect loop")),
    ("too many redirects", re.compile(r"more than \d+ redirects")),
    ("invalid url", re.compile(r"invalid URL")),
    ("refused", re.compile(r"refused: ")),
    ("http", re.compile(r"HTTP error")),
]


def failure_reasons(stderr: str) -> collections.Counter[str]:
    reasons: collections.Counter[str] = collections.Counter()
    for line in stderr.splitlines():
        if "DEBUG" not in line and "WARN" not in line:
            continue
        for name, pat in FAIL_PATTERNS:
            if pat.search(line):
                reasons[name] += 1
                break
    return reasons


def run_one(sc: Scenario, args) -> dict:
    store = tempfile.mkdtemp(prefix=f"hostile-{sc.name}-")
    seed = f"http://{HOST}:{sc.port}{sc.seed_path or sc.prefix}"
    cmd = [args.bin, "crawl", seed, "--store", os.path.join(store, "crawl"), "--delay", "0",
           "--scope", "any", "--include", r"^http://127\.0\.0\.1:"] + shlex.split(args.crawl_flags) + sc.flags
    rss_file = os.path.join(store, "rss")
    use_time = os.access(TIME_BIN, os.X_OK) and not args.no_time
    full = ([TIME_BIN, "-f", "%M", "-o", rss_file] + cmd) if use_time else cmd
    env = dict(os.environ, RUST_LOG="warn,simcrawl_crawl=debug", RUST_BACKTRACE="0", NO_COLOR="1")
    with LOCK:
        base_requests = REQUESTS[sc.name]
        base_paths = collections.Counter(PATHS[sc.name])
    out_f = open(os.path.join(store, "stdout"), "wb")
    err_f = open(os.path.join(store, "stderr"), "wb")
    t0 = time.monotonic()
    proc = subprocess.Popen(full, stdout=out_f, stderr=err_f, stdin=subprocess.DEVNULL, env=env,
                            start_new_session=True)
    killed = False
    status = None
    rusage = None
    stage = 0
    deadline = t0 + args.timeout
    while True:
        pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            status, rusage = st, ru
            break
        now = time.monotonic()
        if now >= deadline:
            killed = True
            target = children_of(proc.pid) if use_time else [proc.pid]
            if stage < 2:  # SIGINT twice: a graceful stop that flushes the store, then "quit now"
                for p in target:
                    try:
                        os.kill(p, signal.SIGINT)
                    except OSError:
                        pass
                stage += 1
                deadline = now + 5
            else:
                for p in target or [proc.pid]:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except OSError:
                        pass
                deadline = now + 5
                stage += 1
                if stage > 4:
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except OSError:
                        pass
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    out_f.close()
    err_f.close()
    with open(os.path.join(store, "stderr"), "rb") as f:
        stderr = ANSI.sub("", f.read().decode("utf-8", "replace"))
    with open(os.path.join(store, "stdout"), "rb") as f:
        stdout = f.read().decode("utf-8", "replace")
    exit_code = proc.returncode
    rss_kib = None
    if use_time:
        try:
            with open(rss_file) as f:
                info = f.read()
        except OSError:
            info = ""
        nums = [int(l) for l in info.split() if l.isdigit()]
        rss_kib = nums[-1] if nums else None
        m = re.search(r"exited with non-zero status (\d+)", info)
        sig = re.search(r"terminated by signal (\d+)", info)
        if m:
            exit_code = int(m.group(1))
        elif sig:
            exit_code = -int(sig.group(1))
        elif info:
            exit_code = 0
    else:
        rss_kib = rusage.ru_maxrss if rusage else None
    panicked = "panicked" in stderr
    stats = None
    stats_err = None
    try:
        sp = subprocess.run([args.bin, "stats", "--store", os.path.join(store, "crawl"), "--json"],
                            capture_output=True, timeout=60)
        if sp.returncode == 0:
            stats = json.loads(sp.stdout)
        else:
            stats_err = sp.stderr.decode("utf-8", "replace").strip()[-300:]
        if b"panicked" in sp.stderr:
            panicked = True
    except (subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        stats_err = str(e)
    time.sleep(0.2)  # let server handlers finish counting
    with LOCK:
        requests = REQUESTS[sc.name] - base_requests
        paths = collections.Counter(PATHS[sc.name])
        paths.subtract(base_paths)
        paths = {p: n for p, n in paths.items() if n > 0}
    rec = {
        "scenario": sc.name,
        "group": sc.group,
        "what": sc.what,
        "seed": seed,
        "flags": sc.flags,
        "exit": exit_code,
        "killed": killed,
        "panicked": panicked,
        "time_s": round(wall, 2),
        "rss_mib": round(rss_kib / 1024, 1) if rss_kib else None,
        "requests": requests,
        "distinct_targets": len(paths),
        "stats": stats,
        "stats_error": stats_err,
        "failure_reasons": dict(failure_reasons(stderr)),
        "paths": paths,
        "warnings": [l[:300] for l in stderr.splitlines()
                     if ("WARN" in l or "ERROR" in l or "panicked" in l or "error:" in l)][:10],
        "stdout_tail": stdout[-2000:],
    }
    notes = []
    if requests > sc.max_requests:
        notes.append(f"EXCESSIVE REQUESTS ({requests} > {sc.max_requests})")
    if rec["rss_mib"] and rec["rss_mib"] > args.rss_limit:
        notes.append(f"HIGH RSS ({rec['rss_mib']} MiB > {args.rss_limit})")
    # A seed host parked for its crawl-delay is accounted for by the report's "parked" line
    # (host, delay, URLs left queued) and exit code 1.
    parked = "parked " in stdout and "left queued" in stdout
    if stats and not killed and not parked and not any(
            stats.get(k) for k in ("fetched", "failed", "excluded_total", "http_errors")):
        notes.append("SEED UNACCOUNTED (not fetched, failed, excluded or parked)")
    if sc.check:
        notes += sc.check(sc, rec)
    if sc.after and not killed:
        notes += sc.after(os.path.join(store, "crawl"), args.bin)
    rec["notes"] = notes
    rec["outcome"] = outcome(rec)
    rec["passed"] = (not panicked and not killed and exit_code in (0, 1)
                     and not any(n.startswith((ESCAPED, DAMAGED, WRITTEN, "READ-ONLY"))
                                 for n in notes))
    if not args.keep:
        shutil.rmtree(store, ignore_errors=True)
    else:
        rec["store"] = store
    return rec


def outcome(rec: dict) -> str:
    parts = []
    if rec["panicked"]:
        parts.append("PANIC")
    if rec["killed"]:
        parts.append("TIMEOUT (killed)")
    st = rec["stats"]
    if st is None:
        parts.append(f"no stats ({(rec['stats_error'] or '')[:80]})")
        return "; ".join(parts)
    if st.get("indexed"):
        parts.append(f"indexed {st['indexed']}")
    if st.get("failed"):
        reasons = rec["failure_reasons"]
        why = ", ".join(f"{k}" + (f" x{v}" if v > 1 else "") for k, v in reasons.items())
        parts.append(f"failed {st['failed']}" + (f" ({why})" if why else ""))
    if st.get("http_errors"):
        parts.append(f"http error {st['http_errors']}")
    if st.get("not_html"):
        parts.append(f"not html {st['not_html']}")
    if st.get("noindex"):
        parts.append(f"noindex {st['noindex']}")
    if st.get("skipped_total"):
        why = ", ".join(f"{k} {v}" for k, v in st.get("skipped", {}).items() if v)
        parts.append(f"skipped {st['skipped_total']} ({why})")
    if st.get("excluded_total"):
        why = ", ".join(f"{k} {v}" for k, v in st.get("excluded", {}).items() if v)
        parts.append(f"excluded {st['excluded_total']} ({why})")
    fr = st.get("frontier", {})
    robots = [k.split(".", 2)[-1] for k in ("frontier.robots.unreachable", "frontier.robots.gave_up",
                                            "frontier.robots.truncated", "frontier.robots.unparseable",
                                            "frontier.robots.redirect_limit") if fr.get(k)]
    if robots:
        parts.append("robots " + "/".join(robots))
    if not parts or parts == ["TIMEOUT (killed)"]:
        parts.append(f"fetched {st.get('fetched', 0)}, nothing indexed")
    return "; ".join(parts)


def md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--bin", default=os.path.join(here, "..", "target", "release", "simcrawl"))
    ap.add_argument("--only", help="comma-separated scenario names (or group names)")
    ap.add_argument("--timeout", type=float, default=60.0, help="wall-clock limit per crawl (s)")
    ap.add_argument("--jobs", type=int, default=4, help="crawls run at once")
    ap.add_argument("--json", action="store_true", help="one JSON object per scenario")
    ap.add_argument("--list", action="store_true", help="list the scenarios and exit")
    ap.add_argument("--rss-limit", type=float, default=500.0, help="RSS (MiB) above which a note is made")
    ap.add_argument("--keep", action="store_true", help="keep the crawl stores (paths in --json)")
    ap.add_argument("--no-time", action="store_true", help="measure RSS with wait4, not /usr/bin/time")
    ap.add_argument("--crawl-flags", default="", help="extra flags for every crawl, e.g. '--timeout 15'")
    args = ap.parse_args()

    if args.list:
        for sc in SCENARIOS.values():
            print(f"{sc.name:28} {sc.group:20} {sc.what}")
        print(f"{len(SCENARIOS)} scenarios")
        return 0
    selected = list(SCENARIOS.values())
    if args.only:
        want = {w.strip() for w in args.only.split(",") if w.strip()}
        unknown = want - set(SCENARIOS) - {s.group for s in SCENARIOS.values()}
        if unknown:
            print(f"unknown scenarios: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        selected = [s for s in selected if s.name in want or s.group in want]
    args.bin = os.path.abspath(args.bin)
    if not os.access(args.bin, os.X_OK):
        print(f"not executable: {args.bin}", file=sys.stderr)
        return 2

    names = {s.name for s in selected}
    if names & {"gzip-bomb", "gzip-bomb-chunked"}:
        gzip_bomb()
    if "gzip-bomb-html" in names:
        gzip_bomb_html()
    if "deflate-bomb" in names:
        deflate_bomb()
    servers = start_servers(selected)
    print(f"server on {HOST}:{MAIN_PORT}; {len(selected)} scenarios; {args.jobs} at a time; "
          f"limit {args.timeout:g} s each", file=sys.stderr)

    t0 = time.monotonic()
    order = sorted(selected, key=lambda s: not s.slow)  # long ones first
    results: dict[str, dict] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(run_one, sc, args): sc for sc in order}
        for fut in concurrent.futures.as_completed(futs):
            sc = futs[fut]
            rec = fut.result()
            results[sc.name] = rec
            print(f"  {sc.name:28} {rec['time_s']:6.1f} s  {rec['outcome']}", file=sys.stderr)
    total = time.monotonic() - t0
    STOP.set()
    for srv in servers:
        srv.shutdown()
        srv.server_close()

    ordered = [results[s.name] for s in selected]
    if args.json:
        for rec in ordered:
            rec = dict(rec)
            if len(rec["paths"]) > 50:
                rec["paths"] = dict(sorted(rec["paths"].items(), key=lambda kv: -kv[1])[:50])
            print(json.dumps(rec, ensure_ascii=False))
    else:
        print("| scenario | what the server does | outcome | exit | time s | RSS MiB | requests |")
        print("|---|---|---|---|---|---|---|")
        group = None
        for rec in ordered:
            if rec["group"] != group:
                group = rec["group"]
                print(f"| **{group}** | | | | | | |")
            outc = rec["outcome"] + ("; " + "; ".join(rec["notes"]) if rec["notes"] else "")
            print(f"| {rec['scenario']} | {md_escape(rec['what'])} | {md_escape(outc)} | "
                  f"{rec['exit']} | {rec['time_s']:.1f} | {rec['rss_mib']} | {rec['requests']} |")
    passed = sum(r["passed"] for r in ordered)
    panics = [r["scenario"] for r in ordered if r["panicked"]]
    killed = [r["scenario"] for r in ordered if r["killed"]]
    flagged = [r["scenario"] for r in ordered if r["notes"] and any(
        n[:1].isupper() and n.split()[0].isupper() for n in r["notes"])]
    summary = (f"{passed}/{len(ordered)} passed, {len(panics)} panicked"
               f"{' (' + ', '.join(panics) + ')' if panics else ''}, {len(killed)} killed by the "
               f"{args.timeout:g} s limit{' (' + ', '.join(killed) + ')' if killed else ''}, "
               f"{len(flagged)} flagged{' (' + ', '.join(flagged) + ')' if flagged else ''}; "
               f"suite wall time {total:.0f} s")
    if args.json:
        print(json.dumps({"summary": summary, "passed": passed, "total": len(ordered),
                          "panicked": panics, "killed": killed, "flagged": flagged,
                          "wall_s": round(total, 1)}))
    else:
        print()
        print(summary)
    return 1 if panics or killed else 0


if __name__ == "__main__":
    sys.exit(main())
