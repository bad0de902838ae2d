"""Running an implementation under test: a command (protocol 1) or a Python callable.

`call(doc, seed)` gives the implementation one scenario document and returns an `Outcome`: the
parsed result object, or a `Fault` saying how the implementation misbehaved (crash, non-zero
exit, hang, no output, partial or oversized output, not JSON, not an object). Every call runs in
a process of its own in a new process group, so a hang is ended by killing the whole group, and
standard output is read through a cap, so nothing the implementation does can stall the harness.
A Python callable runs in a forked child for the same reasons.
"""

from __future__ import annotations

import importlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TIMEOUT = 20.0
DEFAULT_MAX_OUTPUT = 16 * 1024 * 1024  # bytes of standard output read before giving up
STDERR_TAIL = 4000  # characters of standard error kept for the report


class ImplSpecError(ValueError):
    """--impl names nothing runnable (one line, for exit 2)."""


@dataclass
class Fault:
    kind: str  # crash, exit, timeout, no-output, partial, oversized, not-json, not-object
    message: str
    stderr: str = ""
    exit_code: int | None = None


@dataclass
class Outcome:
    result: dict[str, Any] | None = None
    fault: Fault | None = None
    seconds: float = 0.0
    stderr: str = ""


@dataclass
class Implementation:
    """Something that speaks protocol 1. `label` names it in reports."""

    label: str
    argv: list[str] = field(default_factory=list)  # a command; empty for a Python callable
    target: Any = None  # the Python callable
    timeout: float = DEFAULT_TIMEOUT
    max_output: int = DEFAULT_MAX_OUTPUT
    stdin: bool = False  # give the scenario on standard input (`-`) instead of as a file path

    def call(self, doc: dict[str, Any], seed: int = 0) -> Outcome:
        started = time.monotonic()
        outcome = self._call_python(doc, seed) if self.target is not None else self._call_command(doc, seed)
        outcome.seconds = time.monotonic() - started
        return outcome

    # -- a command -----------------------------------------------------------------------

    def _call_command(self, doc: dict[str, Any], seed: int) -> Outcome:
        text = json.dumps(doc)  # JSON is YAML: every scenario reader accepts it
        env = {**os.environ, "SCHEDCHECK_PROTOCOL": "1", "SCHEDCHECK_SEED": str(seed)}
        with tempfile.TemporaryDirectory(prefix="schedcheck-conform-") as tmp:
            path = os.path.join(tmp, "scenario.json")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
            argv = [*self.argv, "-" if self.stdin else path]
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.PIPE if self.stdin else subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                        start_new_session=True)
            except OSError as exc:
                return Outcome(fault=Fault("crash", f"could not start {argv[0]}: {exc.strerror or exc}"))
            if self.stdin:
                threading.Thread(target=_feed, args=(proc.stdin, text.encode()), daemon=True).start()
            return _collect(proc, proc.pid, proc.stdout, proc.stderr, self.timeout, self.max_output,
                            lambda: proc.wait(), lambda t: proc.wait(timeout=t))

    # -- a Python callable, in a forked child ----------------------------------------------

    def _call_python(self, doc: dict[str, Any], seed: int) -> Outcome:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: run the callable, write its result, never return
            code = 0
            try:
                os.setpgid(0, 0)
                os.close(out_r)
                os.close(err_r)
                os.dup2(err_w, 2)
                sys.stderr = os.fdopen(2, "w", closefd=False)
                os.environ.update({"SCHEDCHECK_PROTOCOL": "1", "SCHEDCHECK_SEED": str(seed)})
                result = self.target(doc)
                data = json.dumps(result).encode()
                view = memoryview(data)
                while view:
                    view = view[os.write(out_w, view):]
            except BaseException:  # noqa: BLE001 - the callable's fault, reported by the parent
                traceback.print_exc()
                sys.stderr.flush()
                code = 1
            os._exit(code)
        os.close(out_w)
        os.close(err_w)
        with os.fdopen(out_r, "rb") as out, os.fdopen(err_r, "rb") as err:
            return _collect(None, pid, out, err, self.timeout, self.max_output,
                            lambda: _wait_pid(pid, None), lambda t: _wait_pid(pid, t))


def _feed(pipe: Any, data: bytes) -> None:
    try:
        pipe.write(data)
        pipe.close()
    except OSError:
        pass  # the implementation stopped reading: its business


def _wait_pid(pid: int, timeout: float | None) -> int:
    """waitpid with a timeout (polling); the status as subprocess reports it (negative: a signal)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    delay = 0.001
    while True:
        done, status = os.waitpid(pid, 0 if deadline is None else os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if deadline is not None and time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(str(pid), timeout or 0)
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _collect(proc: Any, pgid: int, stdout: Any, stderr: Any, timeout: float, cap: int,
             wait: Any, wait_for: Any) -> Outcome:
    out = bytearray()
    err = bytearray()
    oversized = threading.Event()

    def read_out() -> None:
        while True:
            chunk = stdout.read1(65536) if hasattr(stdout, "read1") else stdout.read(65536)
            if not chunk:
                return
            out.extend(chunk)
            if len(out) > cap:
                oversized.set()
                _kill_group(pgid)
                return

    def read_err() -> None:
        while True:
            chunk = stderr.read1(65536) if hasattr(stderr, "read1") else stderr.read(65536)
            if not chunk:
                return
            err.extend(chunk)
            del err[:-STDERR_TAIL * 4]

    readers = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        code = wait_for(timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(pgid)
        code = wait()
    _kill_group(pgid)  # children left behind by a finished implementation go too
    for reader in readers:
        reader.join(timeout=2.0)  # a grandchild that escaped the group may hold a pipe open
    tail = err.decode("utf-8", "replace")[-STDERR_TAIL:]
    if oversized.is_set():
        return Outcome(fault=Fault("oversized", f"printed more than {cap} bytes on standard output", tail, code),
                       stderr=tail)
    if timed_out:
        return Outcome(fault=Fault("timeout", f"did not finish within {timeout:g} s (its process group was killed)",
                                   tail, None), stderr=tail)
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        return Outcome(fault=Fault("crash", f"was killed by signal {name}", tail, code), stderr=tail)
    if code != 0:
        last = tail.strip().splitlines()[-1] if tail.strip() else "no message on standard error"
        return Outcome(fault=Fault("exit", f"exited with status {code} ({last[:200]})", tail, code), stderr=tail)
    return _parse(bytes(out), tail)


def _parse(data: bytes, tail: str) -> Outcome:
    text = data.decode("utf-8", "replace").strip()
    if not text:
        return Outcome(fault=Fault("no-output", "exited 0 but printed nothing on standard output", tail, 0),
                       stderr=tail)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text) - 1 and text[:1] in "{[":
            return Outcome(fault=Fault("partial", f"printed an incomplete JSON document ({len(text)} characters, "
                                                  f"{exc.msg} at the end)", tail, 0), stderr=tail)
        first = text.splitlines()[0][:80]
        return Outcome(fault=Fault("not-json", f"printed something that is not one JSON object: {exc.msg} at "
                                               f"character {exc.pos} (starts {first!r})", tail, 0), stderr=tail)
    if not isinstance(value, dict):
        return Outcome(fault=Fault("not-object", f"printed a JSON {type(value).__name__}, not an object", tail, 0),
                       stderr=tail)
    return Outcome(result=value, stderr=tail)


# ---------------------------------------------------------------- naming an implementation


def parse_impl(spec: str, timeout: float = DEFAULT_TIMEOUT, max_output: int = DEFAULT_MAX_OUTPUT,
               stdin: bool = False) -> Implementation:
    """'python:module:callable', 'volcano' (the Go adapter), or a command line; ImplSpecError if unusable."""
    spec = spec.strip()
    if not spec:
        raise ImplSpecError("--impl is empty")
    if spec.startswith("python:"):
        return Implementation(spec, target=load_callable(spec[len("python:"):]), timeout=timeout,
                              max_output=max_output)
    if spec == "volcano":
        try:
            from schedcheck.adapters.volcano import AdapterError, adapter_command
        except ImportError as exc:
            raise ImplSpecError(f"--impl volcano: the Volcano adapter is not available ({exc})") from None
        try:
            argv = list(adapter_command())
        except AdapterError as exc:
            raise ImplSpecError(f"--impl volcano: {exc}") from None
        return Implementation(spec, argv=argv, timeout=timeout, max_output=max_output, stdin=stdin)
    try:
        argv = shlex.split(spec)
    except ValueError as exc:
        raise ImplSpecError(f"--impl {spec!r}: {exc}") from None
    if not argv:
        raise ImplSpecError("--impl is empty")
    if shutil.which(argv[0]) is None:
        raise ImplSpecError(f"--impl {spec!r}: {argv[0]} is not an executable command")
    return Implementation(spec, argv=argv, timeout=timeout, max_output=max_output, stdin=stdin)


def load_callable(target: str) -> Any:
    """'module:name' -> a callable taking a scenario document; a class is instantiated and its `run`
    method (or the instance itself) is used."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ImplSpecError(f"--impl python:{target}: expected python:MODULE:CALLABLE")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure is a usage error here
        raise ImplSpecError(f"--impl python:{target}: cannot import {module_name}: {exc}") from None
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise ImplSpecError(f"--impl python:{target}: {module_name} has no {attr}")
    if isinstance(obj, type):
        instance = obj()
        obj = getattr(instance, "run", instance)
    if not callable(obj):
        raise ImplSpecError(f"--impl python:{target}: {attr} is not callable")
    return obj
