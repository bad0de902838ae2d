"""The extender plugin's HTTP exchange, as Go's http.Client{Timeout} over the default transport makes it
(net/http client.go and transport.go; upstream's extender.go `send`).

- The timeout covers the whole exchange, redirects and reading the body included (Client.Timeout): every
  socket operation waits at most for what is left of it.
- Redirects are followed as Go's default policy does, at most 10: 301, 302 and 303 turn the POST into a GET
  without a body; 307 and 308 repeat the POST with its body; a redirect without a Location header is the
  final response (so its status fails the call); the Location is resolved against the URL that answered;
  the 11th redirect is an error.
- The transport asks for gzip (Accept-Encoding: gzip) and, when the response says Content-Encoding gzip (in
  any case), reads the body decompressed; the 10 MiB limit applies to the decompressed body, which
  may hold several gzip members, as Go's reader accepts.

Not reproduced: HTTP/2, keep-alive connection reuse, proxies from the environment, the Referer header Go
adds on a redirect, and Go's error texts word for word. A gzip stream that is corrupt or cut short after
the first JSON value is an error here; Go's decoder may already have returned the value.
"""

from __future__ import annotations

import http.client
import socket
import time
import urllib.parse
import zlib

MAX_REDIRECTS = 10
TO_GET = frozenset({301, 302, 303})
SAME_METHOD = frozenset({307, 308})
CHUNK = 64 << 10


class TransportError(Exception):
    """The exchange failed before a final response was read; the message is one line."""


class Deadline:
    """What is left of the client's timeout (None: no timeout)."""

    def __init__(self, seconds: float | None) -> None:
        self.end = None if seconds is None else time.monotonic() + seconds

    def left(self) -> float | None:
        if self.end is None:
            return None
        left = self.end - time.monotonic()
        if left <= 0:
            raise socket.timeout("timed out (Client.Timeout exceeded)")
        return left


def post(url: str, payload: bytes, timeout: float | None, limit: int, read: bool) -> tuple[int, bytes, str]:
    """POST `payload` as JSON to `url`, following redirects: (final status, body read up to `limit` + 1 bytes
    decompressed (only with `read` and a 200), the URL that gave the final response). TransportError when the
    exchange fails."""
    deadline = Deadline(timeout)
    method, body, current = "POST", payload, url
    for hop in range(MAX_REDIRECTS + 1):
        try:
            status, location, data = _once(method, current, body, deadline, limit, read)
        except TransportError:
            raise
        except (OSError, http.client.HTTPException, ValueError, EOFError, zlib.error) as err:
            raise TransportError(f'Post "{current}": {type(err).__name__}: {err}') from None
        if location is None or (status not in TO_GET and status not in SAME_METHOD):
            return status, data, current
        if hop == MAX_REDIRECTS:
            raise TransportError(f'Post "{current}": stopped after {MAX_REDIRECTS} redirects')
        current = urllib.parse.urljoin(current, location)
        if status in TO_GET:
            method, body = "GET", None
    raise AssertionError("unreachable")


def _once(method: str, url: str, body: bytes | None, deadline: Deadline, limit: int,
          read: bool) -> tuple[int, str | None, bytes]:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise TransportError(f'Post "{url}": unsupported protocol scheme "{parts.scheme}"')
    if not parts.hostname:
        raise TransportError(f'Post "{url}": no host in request URL')
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname, parts.port, timeout=deadline.left())
    try:
        headers = {"Accept-Encoding": "gzip"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=body, headers=headers)
        sock = connection.sock  # the response reads through it; each wait gets what is left of the timeout
        sock.settimeout(deadline.left())
        response = connection.getresponse()
        location = response.getheader("Location") or None
        if response.status != 200 or not read:
            return response.status, location, b""
        gzipped = (response.getheader("Content-Encoding") or "").lower() == "gzip"
        body_out = _Gunzip(limit + 1) if gzipped else _Plain(limit + 1)
        while not body_out.full():
            left = deadline.left()  # past the deadline: socket.timeout
            if not response.isclosed():  # (the response closes the socket once its body is read)
                sock.settimeout(left)
            chunk = response.read1(CHUNK)  # one receive at a time, so that the deadline is checked between
            if not chunk:
                body_out.finish()
                break
            body_out.feed(chunk)
        return 200, location, bytes(body_out.out[: limit + 1])
    finally:
        connection.close()


class _Plain:
    def __init__(self, cap: int) -> None:
        self.cap, self.out = cap, bytearray()

    def full(self) -> bool:
        return len(self.out) >= self.cap

    def feed(self, data: bytes) -> None:
        self.out += data

    def finish(self) -> None:
        pass


class _Gunzip(_Plain):
    """Gzip members one after another (Go's multistream reader), decompressed up to `cap` bytes."""

    def __init__(self, cap: int) -> None:
        super().__init__(cap)
        self.member = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.started = False

    def feed(self, data: bytes) -> None:
        while data and not self.full():
            if self.member.eof:  # another member follows (or bytes that are not one: zlib.error)
                self.member = zlib.decompressobj(16 + zlib.MAX_WBITS)
            self.started = True
            self.out += self.member.decompress(data, self.cap - len(self.out))
            data = self.member.unconsumed_tail or self.member.unused_data

    def finish(self) -> None:
        if not self.started or not self.member.eof:
            raise EOFError("unexpected EOF in the gzip body")
