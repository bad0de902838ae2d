"""The process serving the extender plugin, named by the scenario (a schedcheck extension of the format).

    extenderServer:
      command: ["{python}", "../../examples/extender_server.py", "--port", "{port}"]
      startupTimeout: 10s        # optional, a Go duration; 10s when absent
    schedulerConf:
      tiers:
      - plugins:
        - name: extender
          arguments:
            extender.urlPrefix: "{extenderURL}"
            extender.predicateVerb: predicate

Before a run the runner picks a free TCP port on 127.0.0.1, starts `command` (placeholders: `{port}`,
`{python}` the interpreter running schedcheck, `{dir}` the scenario file's directory; the working
directory is the scenario file's directory), waits until the port accepts connections, and replaces
`{extenderURL}` in every extender plugin's `extender.urlPrefix` with `http://127.0.0.1:<port>`. The process
(its whole process group) is stopped when the run ends, however it ends (an exception, Ctrl-C, a SIGTERM to
schedcheck; on Linux the process also gets SIGTERM if schedcheck is killed outright). Each run gets a fresh process:
the differential starts one for the reference and one for upstream's scheduler, from the same command.

A urlPrefix without the placeholder is used as written (a closed port stands for an extender that is
down). Bad input is a one-line error naming the file, the object and the field: a missing or empty
command, a command that cannot be started or exits or does not listen in time, the placeholder without
an `extenderServer`, a urlPrefix that is not an http(s) URL with a host, a `managedResources` that is not a
list of strings (upstream exits on it). Extender arguments the plugin does not read, and arguments of a
type upstream ignores, are warnings.
"""

from __future__ import annotations

import contextlib
import copy
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedcheck.reference.framework.conf import SchedulerConf
from schedcheck.scenario.errors import ScenarioError, describe
from schedcheck.scenario.fields import Fields

KEY = "extenderServer"
URL_PLACEHOLDER = "{extenderURL}"
DEFAULT_STARTUP_NS = 10_000_000_000
_SERVER_KEYS = {"command", "startupTimeout"}


@dataclass(frozen=True)
class ExtenderServer:
    """The scenario's extenderServer block, read."""

    command: tuple[str, ...]
    startup_timeout: float  # seconds
    source: str  # the scenario file (the working directory is its directory)


def read_server(f: Fields, value: Any, warnings: list[str]) -> ExtenderServer | None:
    if value is None:
        return None
    block = f.mapping(value, KEY)
    unknown = sorted(set(block) - _SERVER_KEYS, key=str)
    if unknown:
        warnings.append(f"Scenario: {KEY}: ignored unknown keys {', '.join(map(str, unknown))}")
    command = block.get("command")
    if command is None:
        f.fail(f"{KEY}.command", "missing: the command line that serves the extender")
    if isinstance(command, str):
        f.fail(f"{KEY}.command", "expected a list of arguments (the command is not run by a shell), got a string")
    items = f.sequence(command, f"{KEY}.command")
    if not items:
        f.fail(f"{KEY}.command", "empty: give the program and its arguments")
    for index, item in enumerate(items):
        if not isinstance(item, (str, int)) or isinstance(item, bool):
            f.fail(f"{KEY}.command[{index}]", f"expected a string, got {describe(item)}")
    startup = DEFAULT_STARTUP_NS
    text = block.get("startupTimeout")
    if text is not None:
        from schedcheck.reference.plugins.sla import DurationError, parse_go_duration

        if not isinstance(text, str):
            f.fail(f"{KEY}.startupTimeout", f"expected a duration such as 10s, got {describe(text)}")
        try:
            startup = parse_go_duration(text)
        except DurationError as err:
            f.fail(f"{KEY}.startupTimeout", f"not a duration: {err}")
        if startup <= 0:
            f.fail(f"{KEY}.startupTimeout", f"must be positive, got {describe(text)}")
    return ExtenderServer(tuple(str(item) for item in items), startup / 1e9, f.file)


def _extender_options(conf: SchedulerConf) -> list[tuple[str, Any]]:
    """(field path, plugin option) of every extender entry of the conf."""
    return [(f"tiers[{t}].plugins[{p}].arguments", option)
            for t, tier in enumerate(conf.tiers) for p, option in enumerate(tier.plugins)
            if option.name == "extender"]


def check_conf(conf: SchedulerConf, server: ExtenderServer | None, source: str, warnings: list[str]) -> None:
    """The extender arguments: errors for what can never work, warnings for what upstream ignores."""
    from schedcheck.reference.plugins.extender import (ARGUMENTS, HTTP_TIMEOUT, MANAGED_RESOURCES, URL_PREFIX,
                                                      ExtenderArgumentError, managed_resources)

    for field, option in _extender_options(conf):
        args = option.arguments
        for key in sorted(set(args) - set(ARGUMENTS), key=str):
            warnings.append(f"schedulerConf: {field}.{key}: not an extender argument; upstream ignores it")
        for key in ARGUMENTS:
            if key in (MANAGED_RESOURCES, "extender.ignorable") or key not in args:
                continue
            if not isinstance(args[key], str):
                warnings.append(f"schedulerConf: {field}.{key}: expected a string, got {describe(args[key])}; "
                                f"upstream ignores it")
        try:
            managed_resources(args)
        except ExtenderArgumentError:
            raise ScenarioError(source, "schedulerConf", f"{field}.{MANAGED_RESOURCES}",
                                f"expected a list of resource names, got {describe(args[MANAGED_RESOURCES])} "
                                f"(upstream exits on it)") from None
        ignorable = args.get("extender.ignorable")
        if ignorable is not None and not isinstance(ignorable, (bool, str)):
            warnings.append(f"schedulerConf: {field}.extender.ignorable: expected true or false, got "
                            f"{describe(ignorable)}; upstream reads false")
        timeout = args.get(HTTP_TIMEOUT)
        if isinstance(timeout, str) and timeout:
            from schedcheck.reference.plugins.sla import DurationError, parse_go_duration

            try:
                parse_go_duration(timeout)
            except DurationError:
                warnings.append(f"schedulerConf: {field}.{HTTP_TIMEOUT}: {describe(timeout)} is not a duration; "
                                f"upstream uses 1s")
        url = args.get(URL_PREFIX)
        if not isinstance(url, str):
            continue
        if URL_PLACEHOLDER in url:
            if server is None:
                raise ScenarioError(source, "schedulerConf", f"{field}.{URL_PREFIX}",
                                    f"{URL_PLACEHOLDER} needs an {KEY} block naming the process to start")
            url = url.replace(URL_PLACEHOLDER, "http://127.0.0.1:1")
        try:
            parts = urllib.parse.urlsplit(url)
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError as err:
            raise ScenarioError(source, "schedulerConf", f"{field}.{URL_PREFIX}", f"not a URL: {err}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ScenarioError(source, "schedulerConf", f"{field}.{URL_PREFIX}",
                                f"expected an http:// or https:// URL with a host, got {describe(url)}")
    if server is not None and not _extender_options(conf):
        warnings.append(f"Scenario: {KEY}: no extender plugin in the conf; the process is not started")


def resolve_conf(conf: SchedulerConf, url: str) -> SchedulerConf:
    """The conf with the placeholder of every extender urlPrefix replaced by the served URL."""
    resolved = copy.deepcopy(conf)
    for _, option in _extender_options(resolved):
        value = option.arguments.get("extender.urlPrefix")
        if isinstance(value, str):
            option.arguments["extender.urlPrefix"] = value.replace(URL_PLACEHOLDER, url)
    return resolved


def resolve_document(doc: dict[str, Any], url: str) -> dict[str, Any]:
    """The scenario document for another implementation: placeholder replaced, extenderServer removed."""
    out = copy.deepcopy(doc)
    out.pop(KEY, None)
    conf = out.get("schedulerConf")
    if isinstance(conf, str):
        out["schedulerConf"] = conf.replace(URL_PLACEHOLDER, url)
    elif isinstance(conf, dict):
        for tier in conf.get("tiers") or []:
            for plugin in (tier or {}).get("plugins") or []:
                args = (plugin or {}).get("arguments")
                if plugin.get("name") == "extender" and isinstance(args, dict) \
                        and isinstance(args.get("extender.urlPrefix"), str):
                    args["extender.urlPrefix"] = args["extender.urlPrefix"].replace(URL_PLACEHOLDER, url)
    return out


def uses_extender(conf: SchedulerConf) -> bool:
    return bool(_extender_options(conf))


@contextlib.contextmanager
def _signal_handled(signum: signal.Signals, handler: Any) -> Iterator[None]:
    """`handler` for `signum` while the block runs, the previous one restored after. Only the main thread
    may set it; elsewhere the disposition is left as it is."""
    try:
        previous = signal.signal(signum, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signum, previous)


def sigpipe_ignored() -> contextlib.AbstractContextManager[None]:
    """SIGPIPE ignored (Python's own default) while the extender's HTTP calls run: the CLI restores the
    default action for its stdout (`schedcheck ... | head`), under which a write to a socket the extender
    has closed would kill the process instead of raising BrokenPipeError."""
    return _signal_handled(signal.SIGPIPE, signal.SIG_IGN)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _fail(server: ExtenderServer, reason: str) -> ScenarioError:
    return ScenarioError(server.source, "Scenario", f"{KEY}.command", reason)


@contextlib.contextmanager
def serving(server: ExtenderServer) -> Iterator[str]:
    """Start the server's process on a free port; yield its URL; stop it (and its process group) on exit."""
    port = _free_port()
    directory = Path(server.source).resolve().parent if Path(server.source).is_file() else Path.cwd()
    argv = [item.replace("{port}", str(port)).replace("{python}", sys.executable).replace("{dir}", str(directory))
            for item in server.command]
    log = tempfile.TemporaryFile()
    try:
        try:
            process = subprocess.Popen(argv, cwd=directory, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                       start_new_session=True, preexec_fn=_die_with_parent)
        except (OSError, subprocess.SubprocessError) as err:
            raise _fail(server, f"cannot start {argv[0]}: {getattr(err, 'strerror', None) or err}") from None
        try:
            with _terminate_raises():
                _wait_listening(server, process, port, log)
                yield f"http://127.0.0.1:{port}"
        finally:
            _stop(process)
    finally:
        log.close()


def _libc_prctl() -> Any:
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return None


_PRCTL = _libc_prctl() if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:
    """In the child, before exec (Linux): SIGTERM when schedcheck dies, even by SIGKILL."""
    if _PRCTL is not None:
        _PRCTL(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG


def _terminate_raises() -> contextlib.AbstractContextManager[None]:
    """SIGTERM to schedcheck unwinds (SystemExit) so the process is stopped; main thread only."""
    def unwind(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    return _signal_handled(signal.SIGTERM, unwind)


def _wait_listening(server: ExtenderServer, process: subprocess.Popen, port: int, log: Any) -> None:
    deadline = time.monotonic() + server.startup_timeout
    while True:
        if process.poll() is not None:
            raise _fail(server, f"the process exited with status {process.returncode} before listening on "
                                f"port {port}{_last_line(log)}")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.settimeout(0.2)
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        if time.monotonic() > deadline:
            raise _fail(server, f"nothing listened on port {port} within {server.startup_timeout:g}s"
                                f"{_last_line(log)}")
        time.sleep(0.02)


def _last_line(log: Any) -> str:
    log.seek(0)
    lines = log.read().decode("utf-8", errors="replace").strip().splitlines()
    return f" (its last output: {lines[-1].strip()})" if lines else ""


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
