"""The extender's HTTP exchange as Go's client makes it (reference_impl/plugins/extender_http.py): redirects,
gzip, and a timeout over the whole exchange, against a live server."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from schedcheck.reference.plugins import extender_http as http
from schedcheck.reference.plugins.extender import MAX_BODY_SIZE, ExtenderConfig, ExtenderError, send

Answer = Callable[[BaseHTTPRequestHandler, str, bytes], None]


@pytest.fixture(autouse=True)
def _sigpipe_ignored():
    from schedcheck.scenario.extender import sigpipe_ignored

    with sigpipe_ignored():
        yield


@contextmanager
def server(answer: Answer, seen: list[tuple[str, str, bytes, dict[str, str]]]) -> Iterator[str]:
    """A server that records (method, path, body, headers) and lets `answer` write the response."""

    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            seen.append((self.command, self.path, body, dict(self.headers)))
            answer(self, self.path, body)

        do_GET = do_POST = _handle  # noqa: N815

        def log_message(self, *args) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # closing the server waits for its handlers: one still answering a client that gave up (a timeout)
    # writes while SIGPIPE is still ignored, not after the fixture has restored it (which kills the worker)
    srv.daemon_threads = False
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def respond(handler: BaseHTTPRequestHandler, status: int, body: bytes = b"", **headers: str) -> None:
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key.replace("_", "-"), value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def config(url: str, timeout: str = "2s") -> ExtenderConfig:
    return ExtenderConfig({"extender.urlPrefix": url, "extender.httpTimeout": timeout})


def test_a_gzip_reply_is_read_decompressed_and_gzip_is_asked_for():
    seen: list = []

    def answer(h, path, body):
        respond(h, 200, gzip.compress(b'{"status": "no room"}'), Content_Encoding="GZIP")

    with server(answer, seen) as url:
        assert send(config(url), "predicate", b"{}", "predicate")["status"] == "no room"
    assert seen[0][3].get("Accept-Encoding") == "gzip"


def test_a_plain_reply_with_gzip_in_another_header_is_read_as_it_is():
    def answer(h, path, body):
        respond(h, 200, b'{"status": "x"}', Content_Type="application/gzip")

    with server(answer, []) as url:
        assert send(config(url), "predicate", b"{}", "predicate")["status"] == "x"


def test_two_gzip_members_are_one_body_and_a_cut_stream_is_an_error():
    def answer(h, path, body):
        whole = gzip.compress(b'{"status": ') + gzip.compress(b'"joined"}')
        respond(h, 200, whole if path.endswith("two") else whole[:-6], Content_Encoding="gzip")

    with server(answer, []) as url:
        assert send(config(url), "two", b"{}", "predicate")["status"] == "joined"
        with pytest.raises(ExtenderError, match="EOF"):
            send(config(url), "cut", b"{}", "predicate")


def test_the_size_limit_applies_to_the_decompressed_body():
    def answer(h, path, body):
        respond(h, 200, gzip.compress(b'{"status":"' + b"a" * MAX_BODY_SIZE + b'"}'), Content_Encoding="gzip")

    with server(answer, []) as url:
        with pytest.raises(ExtenderError, match="request body too large"):
            send(config(url), "predicate", b"{}", "predicate")


@pytest.mark.parametrize("code,method,body", [(301, "GET", b""), (302, "GET", b""), (303, "GET", b""),
                                              (307, "POST", b'{"a":1}'), (308, "POST", b'{"a":1}')])
def test_redirects_follow_go_s_method_rules(code, method, body):
    seen: list = []

    def answer(h, path, got):
        if path == "/predicate":
            respond(h, code, Location="moved/here")  # relative to the URL that answered
        else:
            respond(h, 200, b'{"status": "after"}')

    with server(answer, seen) as url:
        assert send(config(url), "predicate", b'{"a":1}', "predicate")["status"] == "after"
    assert [(m, p, b) for m, p, b, _ in seen] == [("POST", "/predicate", b'{"a":1}'), (method, "/moved/here", body)]


def test_a_redirect_without_location_is_the_final_answer_and_the_eleventh_redirect_fails():
    def answer(h, path, got):
        if path == "/bare":
            respond(h, 302)
        else:
            respond(h, 307, Location=f"/loop{int(path.rsplit('p', 1)[-1] or 0) + 1 if 'loop' in path else 1}")

    seen: list = []
    with server(answer, seen) as url:
        with pytest.raises(ExtenderError, match="code 302"):
            send(config(url), "bare", b"{}", "predicate")
        with pytest.raises(ExtenderError, match="stopped after 10 redirects"):
            send(config(url), "start", b"{}", "predicate")
    assert len([s for s in seen if s[1] != "/bare"]) == 11


def test_the_timeout_covers_the_whole_exchange_not_each_read():
    done, outcome = threading.Event(), []

    def answer(h, path, got):
        h.send_response(200)
        h.send_header("Content-Length", "60")
        h.end_headers()
        try:
            for _ in range(60):  # every byte well inside the timeout, all of them far beyond it
                h.wfile.write(b" ")
                h.wfile.flush()
                time.sleep(0.05)
            outcome.append("all sent")
        except OSError:
            outcome.append("client gone")  # the client gave up before the body ended
        finally:
            done.set()

    with server(answer, []) as url:
        with pytest.raises(ExtenderError, match="timed out"):
            send(config(url, "300ms"), "predicate", b"{}", "predicate")
        done.wait(10)
    assert outcome == ["client gone"]


def test_a_redirect_to_another_scheme_fails():
    def answer(h, path, got):
        respond(h, 302, Location="ftp://example.invalid/x")

    with server(answer, []) as url:
        with pytest.raises(ExtenderError, match="unsupported protocol scheme"):
            send(config(url), "predicate", b"{}", "predicate")


def test_deadline_without_timeout_never_expires():
    assert http.Deadline(None).left() is None
