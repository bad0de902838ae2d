"""The scenario's extenderServer: reading it, starting and stopping the process, the URL in the conf, the
one-line errors, and the example server (examples/extender_server.py) driven through whole runs."""

from __future__ import annotations

import copy
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from schedcheck.runner import run_scenario
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.extender import ExtenderServer, resolve_document, serving
from schedcheck.scenario.loader import load_scenario, scenario_from_document

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = Path(__file__).parent / "scenarios"
PREDICATE = SCENARIOS / "extender-predicate-refuses-a-labelled-node.yaml"
SERVER = str(ROOT / "examples" / "extender_server.py")


def document(**changes) -> dict:
    doc = yaml.safe_load(PREDICATE.read_text())
    doc["extenderServer"]["command"] = ["{python}", SERVER, "--port", "{port}"]
    for key, value in changes.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    return doc


def extender_args(doc: dict) -> dict:
    return doc["schedulerConf"]["tiers"][1]["plugins"][4]["arguments"]


def load(doc: dict, source: str = "s.yaml"):
    return scenario_from_document(doc, source)


def closed(url: str) -> bool:
    port = int(url.rsplit(":", 1)[1])
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


# ---------------------------------------------------------------- reading


@pytest.mark.parametrize("server, field, reason", [
    ({}, "extenderServer.command", "missing"),
    ({"command": "python3 server.py"}, "extenderServer.command", "not run by a shell"),
    ({"command": []}, "extenderServer.command", "empty"),
    ({"command": ["x", {"a": 1}]}, "extenderServer.command[1]", "expected a string"),
    ({"command": ["x"], "startupTimeout": "soon"}, "extenderServer.startupTimeout", "not a duration"),
    ({"command": ["x"], "startupTimeout": "0s"}, "extenderServer.startupTimeout", "must be positive"),
    ("python3", "extenderServer", "expected a mapping"),
])
def test_a_bad_server_block_is_one_line_naming_the_field(server, field, reason):
    with pytest.raises(ScenarioError) as caught:
        load(document(extenderServer=server))
    message = str(caught.value)
    assert message.startswith(f"s.yaml: Scenario: {field}: ") and reason in message and "\n" not in message


@pytest.mark.parametrize("url, reason", [
    ("ftp://127.0.0.1/x", "expected an http:// or https:// URL"),
    ("http://", "expected an http:// or https:// URL"),
    ("http://127.0.0.1:port", "not a URL"),
])
def test_a_bad_url_prefix_is_one_line_naming_the_field(url, reason):
    doc = document()
    extender_args(doc)["extender.urlPrefix"] = url
    with pytest.raises(ScenarioError) as caught:
        load(doc)
    assert str(caught.value).startswith(
        "s.yaml: schedulerConf: tiers[1].plugins[4].arguments.extender.urlPrefix: ") and reason in str(caught.value)


def test_the_placeholder_needs_a_server_and_managed_resources_a_list():
    with pytest.raises(ScenarioError, match=r"extender.urlPrefix: \{extenderURL\} needs an extenderServer"):
        load(document(extenderServer=None))
    doc = document()
    extender_args(doc)["extender.managedResources"] = "nvidia.com/gpu"
    with pytest.raises(ScenarioError, match=r"arguments.extender.managedResources: expected a list"):
        load(doc)


def test_arguments_upstream_ignores_are_warnings():
    doc = document()
    extender_args(doc).update({"extender.predicateverb": "x", "extender.httpTimeout": "soon",
                               "extender.prioritizeVerb": 3, "extender.ignorable": 1})
    warnings = load(doc).warnings
    assert any("extender.predicateverb: not an extender argument" in w for w in warnings)
    assert any("extender.httpTimeout: \"soon\" is not a duration; upstream uses 1s" in w for w in warnings)
    assert any("extender.prioritizeVerb: expected a string, got 3" in w for w in warnings)
    assert any("extender.ignorable: expected true or false" in w for w in warnings)
    assert not load(document()).warnings


def test_resolve_document_fills_the_url_and_drops_the_server():
    doc = document()
    resolved = resolve_document(doc, "http://127.0.0.1:5")
    assert "extenderServer" not in resolved and "extenderServer" in doc
    assert extender_args(resolved)["extender.urlPrefix"] == "http://127.0.0.1:5"
    text = copy.deepcopy(doc)
    text["schedulerConf"] = yaml.safe_dump(doc["schedulerConf"])
    assert "http://127.0.0.1:5" in resolve_document(text, "http://127.0.0.1:5")["schedulerConf"]


# ---------------------------------------------------------------- the process


def test_the_process_is_stopped_after_the_block_and_after_an_exception():
    server = ExtenderServer(("{python}", SERVER, "--port", "{port}"), 10.0, str(PREDICATE))
    with serving(server) as url:
        assert not closed(url)
    assert closed(url)
    with pytest.raises(RuntimeError), serving(server) as url:
        raise RuntimeError("the run failed")
    assert closed(url)


def test_a_process_that_exits_or_never_listens_is_one_line(tmp_path):
    pid_file = tmp_path / "pid"
    sleeper = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    cases = [
        ({"command": ["{python}", "-c", "import sys; print('bad flag'); sys.exit(3)"]}, "exited with status 3",
         "its last output: bad flag"),
        ({"command": ["{python}", "-c", sleeper], "startupTimeout": "500ms"}, "nothing listened on port", ""),
        ({"command": ["/no/such/program"]}, "cannot start /no/such/program", ""),
    ]
    for server, reason, output in cases:
        scenario = load(document(extenderServer=server))
        with pytest.raises(ScenarioError) as caught:
            run_scenario(scenario)
        message = str(caught.value)
        assert message.startswith("s.yaml: Scenario: extenderServer.command: ") and reason in message
        assert output in message and "\n" not in message
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # the process that never listened was killed
        import os

        os.kill(pid, 0)


def test_the_cli_prints_one_line_and_exits_2(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(document(extenderServer={"command": ["{python}", "-c", "raise SystemExit(1)"]})))
    done = subprocess.run([sys.executable, "-m", "schedcheck.cli", "run", str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"schedcheck: {path}: Scenario: extenderServer.command: the process exited with status 1 before "
        f"listening on port {done.stderr.split('port ')[1].split()[0]}"]


# ---------------------------------------------------------------- whole runs with the example server


def test_only_configured_verbs_reach_the_server(tmp_path):
    log = tmp_path / "calls.txt"
    doc = document(extenderServer={"command": ["{python}", SERVER, "--port", "{port}", "--log", str(log)]})
    result = run_scenario(load(doc, str(PREDICATE)))
    assert result.ok and result.binds == {"default/small-0": "n2"}
    calls = log.read_text().split()
    assert calls and set(calls) == {"/predicate"}
    # small-0 on n1 and n2, big-0 on n1 (n2 is too small for it: the resource check comes first), in the
    # order upstream's scheduler asks (the Go adapter's run of this file asks the same three times)
    assert len(calls) == 3


def _without_extender(doc: dict) -> None:
    for tier in doc["schedulerConf"]["tiers"]:
        tier["plugins"] = [p for p in tier["plugins"] if p["name"] != "extender"]
    doc.pop("extenderServer", None)


def _extender(doc: dict) -> dict:
    return next(p for tier in doc["schedulerConf"]["tiers"] for p in tier["plugins"] if p["name"] == "extender")


def _session_opens(doc: dict) -> None:
    del _extender(doc)["arguments"]["extender.onSessionOpenVerb"]


def _extender_up(doc: dict) -> None:
    _extender(doc)["arguments"]["extender.urlPrefix"] = "{extenderURL}"
    doc["extenderServer"] = {"command": ["{python}", SERVER, "--port", "{port}"]}


def _not_redirected(doc: dict) -> None:
    arguments = _extender(doc)["arguments"]
    arguments["extender.predicateVerb"] = arguments["extender.predicateVerb"].rsplit("/", 1)[-1]


def _unpatched(doc: dict) -> None:
    """The extender returns its victims as it was shown them (no example.extender/victim-patch)."""
    for obj in doc["objects"]:
        (obj.get("metadata", {}).get("annotations") or {}).pop("example.extender/victim-patch", None)


# What each scenario turns on: undone, the scenario's expectations fail. Most test the extender's own
# decision (left out, the cluster decides otherwise); two test the extender doing nothing (a failed session
# open, an ignorable extender that is down), undone by letting it work; a 302 turns the POST into a GET the
# extender answers as an empty request, undone by asking the verb directly; the victims the extender returns
# other than as it was shown them (another UID, another request, a field or the whole entry missing), undone
# by returning them as shown.
COUNTERFACTUALS = {"extender-failed-session-open-turns-it-off": _session_opens,
                   "extender-ignorable-down-scheduling-continues": _extender_up,
                   "extender-redirect-302-turns-the-post-into-a-get": _not_redirected,
                   **dict.fromkeys(("extender-victim-of-an-unknown-uid-joins-its-job",
                                    "extender-reclaimable-victim-copy-with-a-larger-request",
                                    "extender-victim-of-a-job-the-session-lacks-frees-nothing",
                                    "extender-preemptable-victim-copy-with-a-larger-request-fails-drf",
                                    "extender-victim-without-its-request-is-a-nil-dereference",
                                    "extender-victim-without-its-pod-is-a-nil-dereference",
                                    "extender-null-victim-is-a-nil-dereference"), _unpatched)}


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("extender-*.yaml")), ids=lambda p: p.stem)
def test_each_extender_scenario_depends_on_what_it_tests(path):
    assert run_scenario(load_scenario(path)).ok
    doc = yaml.safe_load(path.read_text())
    if doc.get("extenderServer"):
        doc["extenderServer"]["command"] = ["{python}", SERVER, "--port", "{port}"]
    COUNTERFACTUALS.get(path.stem, _without_extender)(doc)
    assert not run_scenario(scenario_from_document(doc, str(path))).ok, f"{path.name} passes without its cause"


def test_there_are_extender_scenarios():
    assert len(list(SCENARIOS.glob("extender-*.yaml"))) >= 11


def test_generated_confs_leave_the_extender_out():
    from schedcheck.generators.confs import OPTIONAL_PLUGINS, TIER_SETS

    assert "extender" not in OPTIONAL_PLUGINS
    assert all(p.get("name") != "extender" for tiers in TIER_SETS.values() for tier in tiers for p in tier)


def test_corpus_mutations_leave_the_extender_scenarios_out():
    """The gate edits corpus scenarios and runs them from no file: the server's path would not resolve."""
    from schedcheck.gate_corpus import corpus, corpus_documents
    from schedcheck.gate_properties import _uses_extender

    left_out = {entry.path.stem for entry, doc in zip(corpus(), corpus_documents()) if _uses_extender(doc)}
    assert left_out == {p.stem for p in SCENARIOS.glob("extender-*.yaml")}


def test_a_run_with_the_extender_ignores_sigpipe_and_restores_it():
    """The CLI sets SIGPIPE's default action (for `| head`); a write to a socket the extender closed would
    then kill schedcheck. The run ignores SIGPIPE while the extender is configured and restores it after."""
    import signal

    from schedcheck.reference.plugins import extender as plugin

    seen = []
    original = plugin.send

    def spy(*args, **kwargs):
        seen.append(signal.getsignal(signal.SIGPIPE))
        return original(*args, **kwargs)

    previous = signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        plugin.send = spy
        assert run_scenario(load_scenario(SCENARIOS / "extender-ignorable-down-scheduling-continues.yaml")).ok
        assert seen and set(seen) == {signal.SIG_IGN}
        assert signal.getsignal(signal.SIGPIPE) == signal.SIG_DFL
    finally:
        plugin.send = original
        signal.signal(signal.SIGPIPE, previous)


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_the_process_goes_when_schedcheck_is_killed(how):
    """SIGTERM unwinds the run (the process is stopped as on any exit); SIGKILL leaves no chance to clean up,
    so on Linux the process is started with a parent-death signal."""
    import signal
    import time

    program = ("import sys, time\n"
               "from schedcheck.scenario.extender import ExtenderServer, serving\n"
               f"server = ExtenderServer(('{{python}}', {SERVER!r}, '--port', '{{port}}'), 10.0, {str(PREDICATE)!r})\n"
               "with serving(server) as url:\n"
               "    print(url, flush=True)\n"
               "    time.sleep(60)\n")
    runner = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    try:
        url = runner.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and not closed(url)
        runner.send_signal(getattr(signal, how))
        runner.wait(timeout=30)
        deadline = time.monotonic() + 10
        while not closed(url) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert closed(url)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
