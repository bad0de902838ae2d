"""extender plugin: arguments, the wire format, and every extension point against a live HTTP server
(extender.go, argument.go, extender_test.go)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from schedcheck.reference.api.unschedule_info import FitError, ScoringError, StatusCode
from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.event import Event
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.framework.session import ABSTAIN, PERMIT, REJECT
from schedcheck.reference.k8s import ClusterObjects
from schedcheck.reference.plugins import extender_json as wire
from schedcheck.reference.plugins.extender import (MAX_BODY_SIZE, ExtenderArgumentError, ExtenderConfig,
                                                   ExtenderPlugin, is_interested)
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util.nil import Nil, NilDereference, is_nil
from tests.builders import node, pod, pod_group

NOW = "2026-05-01T10:00:00Z"
DOWN = "http://127.0.0.1:1"  # nothing listens on port 1


@pytest.fixture(autouse=True)
def _sigpipe_ignored():
    """The test servers run in this process: a write to a socket the other side closed must raise, not kill the
    worker (schedcheck's CLI, which other tests call in-process, restores SIGPIPE's default action)."""
    from schedcheck.scenario.extender import sigpipe_ignored

    with sigpipe_ignored():
        yield


# ---------------------------------------------------------------- a scriptable extender


class Recorder:
    """The requests a test server got, and how it answers: path -> (status, body bytes, delay seconds)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict]] = []
        self.answers: dict[str, Callable[[dict], tuple[int, bytes]]] = {}
        self.delay = 0.0

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]


@contextmanager
def extender(recorder: Recorder) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"null")
            recorder.requests.append((self.path, body))
            time.sleep(recorder.delay)
            status, data = recorder.answers.get(self.path, lambda _: (200, b"{}"))(body)
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # closing the server waits for its handlers: one still answering a client that gave up (a timeout)
    # writes while SIGPIPE is still ignored, not after the fixture has restored it (which kills the worker)
    server.daemon_threads = False
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def reply(value) -> Callable[[dict], tuple[int, bytes]]:
    return lambda _: (200, json.dumps(value).encode())


def session(arguments: dict, pods=None, nodes=None, tier_plugins=("extender",)):
    options = [PluginOption(name, arguments=arguments if name == "extender" else {}) for name in tier_plugins]
    for option in options:
        apply_plugin_conf_defaults(option)
    objects = ClusterObjects(nodes=nodes or [node("n1", labels={"zone": "a"}), node("n2")],
                             pods=pods or [pod("p0"), pod("gpu0", group="pg", annotations={})],
                             pod_groups=[pod_group("pg", 1, phase="Inqueue")])
    return open_session(SchedulerCache(objects, now=NOW), SchedulerConf(actions=["allocate"], tiers=[Tier(options)]),
                        0, 0)


def task(ssn, name):
    return next(t for job in ssn.jobs.values() for t in job.tasks.values() if t.name == name)


def args(url: str, **verbs) -> dict:
    out = {"extender.urlPrefix": url}
    out.update({f"extender.{verb}Verb": path for verb, path in verbs.items()})
    return out


# ---------------------------------------------------------------- arguments


def test_arguments_default_and_lenient_reads():
    config = ExtenderConfig({})
    assert config.url_prefix == "" and config.timeout_ns == 1_000_000_000 and not config.ignorable
    assert all(v == "" for v in config.verbs.values()) and config.managed_resources == frozenset()
    config = ExtenderConfig({"extender.httpTimeout": "100ms", "extender.ignorable": "true",
                             "extender.predicateVerb": 7, "extender.managedResources": ["a", "b"]})
    assert config.timeout_ns == 100_000_000 and config.ignorable
    assert config.verbs["predicate"] == ""  # not a string: unset, as `.(string)` fails upstream
    assert config.managed_resources == {"a", "b"}
    assert ExtenderConfig({"extender.httpTimeout": "soon"}).timeout_ns == 1_000_000_000
    assert ExtenderConfig({"extender.httpTimeout": "0s"}).timeout_ns == 0
    assert not ExtenderConfig({"extender.ignorable": "maybe"}).ignorable
    assert not ExtenderConfig({"extender.ignorable": 1}).ignorable


@pytest.mark.parametrize("value", ["nvidia.com/gpu", [1], {"a": 1}])
def test_managed_resources_must_be_a_list_of_names(value):
    with pytest.raises(ExtenderArgumentError):
        ExtenderConfig({"extender.managedResources": value})


def test_is_interested_in_tasks_asking_for_a_managed_resource():
    gpu = pod("g", group="pg")
    gpu.containers[0].requests["nvidia.com/gpu"] = Quantity.parse("1")
    init = pod("i", group="pg")
    init.init_containers = [type(init.containers[0])("init", {"nvidia.com/gpu": Quantity.parse("1")})]
    ssn = session({}, pods=[pod("p0"), gpu, init])
    managed = ExtenderConfig({"extender.managedResources": ["nvidia.com/gpu"]})
    assert not is_interested(managed, task(ssn, "p0"))
    assert is_interested(managed, task(ssn, "g")) and is_interested(managed, task(ssn, "i"))
    assert is_interested(ExtenderConfig({"extender.managedResources": []}), task(ssn, "p0"))


# ---------------------------------------------------------------- the wire format


@pytest.mark.parametrize("value, text", [
    (1000.0, "1000"), (0.5, "0.5"), (1e-7, "1e-7"), (1e21, "1e+21"), (123456789.25, "123456789.25"),
    (0.00001, "0.00001"), (-0.0, "-0"), (1.5e300, "1.5e+300"), (0.0, "0"),
])
def test_floats_are_written_as_go_writes_them(value, text):
    assert wire.go_float(value) == text


def test_marshal_escapes_html_and_rejects_nan():
    assert wire.marshal({"a": "<b>&", "n": [1, 2.5, None, True]}) == b'{"a":"\\u003cb\\u003e\\u0026","n":[1,2.5,null,true]}'
    with pytest.raises(wire.GoJSONError):
        wire.marshal({"x": float("nan")})


def test_task_and_node_render_under_go_field_names():
    ssn = session({})
    rendered = wire.render_task(task(ssn, "p0"))
    assert list(rendered)[:6] == ["UID", "Job", "Name", "Namespace", "TaskRole", "Resreq"]
    assert rendered["Resreq"] == {"MilliCPU": 1000.0, "Memory": 1073741824.0, "ScalarResources": {"pods": 1.0},
                                  "MaxTaskNum": 0}
    assert b'"Resreq":{"MilliCPU":1000,"Memory":1073741824,"ScalarResources":{"pods":1},"MaxTaskNum":0}' \
        in wire.marshal(rendered)
    assert rendered["Status"] == 1 and rendered["Pod"]["metadata"]["name"] == "p0"
    assert rendered["Pod"]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    node_json = wire.render_node(ssn.nodes["n1"])
    assert node_json["Name"] == "n1" and node_json["Node"]["metadata"]["labels"] == {"zone": "a"}
    assert node_json["Idle"]["MilliCPU"] == 4000.0 and node_json["Tasks"] == {}


@pytest.mark.parametrize("body, shape, fields, error", [
    (b'{"status":"no","code":2}', "predicate", {"status": "no", "code": 2}, None),
    (b'{"STATUS":"no","Code":3}', "predicate", {"status": "no", "code": 3}, None),  # keys match ignoring case
    (b'  {"status":""} trailing', "predicate", {"status": ""}, None),  # only the first value is read
    (b'{"status":"x","code":1.5}', "predicate", {"status": "x"}, "cannot unmarshal number 1.5"),
    (b'{"code":"2","status":"x"}', "predicate", {"status": "x"}, "cannot unmarshal string"),
    (b'null', "predicate", {}, None),
    (b'', "predicate", {}, "EOF"),
    (b'{"status":', "predicate", {}, "unexpected EOF"),
    (b'[1]', "predicate", {}, "cannot unmarshal array"),
    (b'{"nodeScore":{"n1":5,"n2":null}}', "prioritize", {"nodeScore": {"n1": 5.0, "n2": 0.0}}, None),
    (b'{"overused":1}', "overused", {}, "cannot unmarshal number"),
])
def test_replies_decode_as_go_decodes_them(body, shape, fields, error):
    decoded, err = wire.decode(body, shape)
    assert decoded == fields
    assert (err is None) if error is None else (error in str(err))


# ---------------------------------------------------------------- extension points


def test_only_the_configured_verbs_are_registered_and_called():
    recorder = Recorder()
    with extender(recorder) as url:
        ssn = session(args(url, predicate="filter"))
        assert ssn.registered("predicate") == [[("extender", ssn.registered("predicate")[0][0][1])]]
        assert ssn.registered("batch_node_order") == [[]] and ssn.registered("preemptable") == [[]]
        assert ssn.predicate_fn(task(ssn, "p0"), ssn.nodes["n1"]) is None
        ssn.plugins["extender"].on_session_close(ssn)
    assert recorder.paths() == ["/filter"]  # the urlPrefix's trailing slash is trimmed
    body = recorder.requests[0][1]
    assert body["task"]["Name"] == "p0" and body["node"]["Name"] == "n1"


def test_predicate_refusal_carries_the_reason_and_code():
    recorder = Recorder()
    recorder.answers["/predicate"] = lambda body: (200, json.dumps(
        {"status": f"not {body['node']['Name']}", "code": 0 if body["node"]["Name"] == "n1" else 2}).encode())
    with extender(recorder) as url:
        ssn = session(args(url, predicate="predicate"))
        refused = ssn.predicate_fn(task(ssn, "p0"), ssn.nodes["n1"])
        unschedulable = ssn.predicate_fn(task(ssn, "p0"), ssn.nodes["n2"])
        assert ssn.predicate_for_preempt_action(task(ssn, "p0"), ssn.nodes["n2"]) is None  # preempt may resolve it
        assert ssn.predicate_for_allocate_action(task(ssn, "p0"), ssn.nodes["n2"]) is not None
    assert isinstance(refused, FitError) and refused.reasons() == ["not n1"]
    assert refused.codes() == {StatusCode.Error}  # code 0 (Success) becomes Error
    assert [s.plugin for s in refused.statuses] == ["extender"]
    assert unschedulable.codes() == {StatusCode.Unschedulable}


@pytest.mark.parametrize("ignorable", [False, True])
def test_an_unreachable_extender_fails_or_passes_by_ignorable(ignorable):
    ssn = session({**args(DOWN, predicate="p", prioritize="s", preemptable="v", jobEnqueueable="e",
                          queueOverused="o", jobReady="r"), "extender.ignorable": ignorable})
    t = task(ssn, "p0")
    err = ssn.predicate_fn(t, ssn.nodes["n1"])
    plugin = ssn.plugins["extender"]
    job = ssn.jobs[t.job]
    if ignorable:
        assert err is None and plugin.prioritize(t, list(ssn.nodes.values())) == {}
        assert plugin.victims("preemptable", t, [t]) == ([], PERMIT)
        assert plugin.job_enqueueable(job) == PERMIT
        assert not plugin.queue_overused(ssn.queues[job.queue]) and not plugin.job_ready(job)
    else:
        assert isinstance(err, FitError) and err.codes() == {StatusCode.Error}
        with pytest.raises(ScoringError):
            plugin.prioritize(t, list(ssn.nodes.values()))
        assert plugin.victims("preemptable", t, [t]) == ([], REJECT)
        assert plugin.job_enqueueable(job) == REJECT
        assert plugin.queue_overused(ssn.queues[job.queue]) and plugin.job_ready(job)


def test_prioritize_scores_are_summed_and_an_error_message_fails_even_when_ignorable():
    recorder = Recorder()
    recorder.answers["/score"] = reply({"nodeScore": {"n1": 3, "n2": 7.5}})
    with extender(recorder) as url:
        ssn = session(args(url, prioritize="score"))
        t = task(ssn, "p0")
        assert ssn.batch_node_order_fn(t, list(ssn.nodes.values())) == {"n1": 3.0, "n2": 7.5}
        for answer in ({"errorMessage": "busy", "nodeScore": {"n1": 1}}, {}):
            recorder.answers["/score"] = reply(answer)
            ignorable = session({**args(url, prioritize="score"), "extender.ignorable": True})
            with pytest.raises(ScoringError):
                ignorable.batch_node_order_fn(task(ignorable, "p0"), list(ignorable.nodes.values()))


def test_victims_are_decoded_from_the_reply_as_upstream_decodes_them():
    """Each returned victim is a new TaskInfo filled from its entry: an echo of an evictee renders as the
    evictee, an entry naming a UID only has Go's zero values (a nil Resreq), null is a nil task."""
    recorder = Recorder()
    recorder.answers["/victims"] = lambda body: (200, json.dumps(
        {"status": 1, "victims": [body["evictees"][1], {"UID": "unknown"}, None]}).encode())
    with extender(recorder) as url:
        ssn = session(args(url, preemptable="victims", reclaimable="victims"))
        evictor, a, b = task(ssn, "p0"), task(ssn, "p0"), task(ssn, "gpu0")
        chosen, vote = ssn.plugins["extender"].victims("preemptable", evictor, [a, b])
        assert vote == PERMIT and len(chosen) == 3
        copy, ghost, null = chosen
        assert copy is not b and copy.pod is b.pod and wire.render_task(copy) == wire.render_task(b)
        assert ghost.uid == "unknown" and ghost.job == "" and ghost.status == 0 and is_nil(ghost.resreq)
        assert is_nil(null)
        with pytest.raises(NilDereference):
            ghost.resreq.add(copy.resreq)  # upstream's ValidateVictims reads it: a nil pointer panic
        with pytest.raises(NilDereference):
            _ = null.uid
        assert ssn.plugins["extender"].outside_victims == {"unknown"}  # the echo is the offered b
        again = ssn.preemptable(evictor, [a, b])  # alone in its tier: its list, read no further
        assert [None if is_nil(t) else t.uid for t in again] == [b.uid, "unknown", None]
        recorder.answers["/victims"] = reply({"status": 0, "victims": []})
        assert ssn.preemptable(evictor, [a, b]) is None  # status 0 abstains


@pytest.mark.parametrize("entry", [{"Priority": 1.5}, {"Priority": 2**31}, {"UID": 5}, {"Preemptable": "yes"},
                                   {"Resreq": {"MilliCPU": "1"}}, {"Resreq": []}, {"Pod": "p"},
                                   {"PodAnnotations": {"a": 1}}, {"LastTransaction": {"Status": "Running"}},
                                   {"Pod": {"metadata": {"name": 5}}}])
@pytest.mark.parametrize("ignorable", [False, True])
def test_a_victim_go_cannot_decode_fails_the_reply(entry, ignorable):
    recorder = Recorder()
    recorder.answers["/victims"] = reply({"status": 1, "victims": [entry]})
    with extender(recorder) as url:
        ssn = session({**args(url, preemptable="victims"), "extender.ignorable": ignorable})
        evictor = task(ssn, "p0")
        plugin = ssn.plugins["extender"]
        assert plugin.victims("preemptable", evictor, [evictor]) == ([], PERMIT if ignorable else REJECT)
        assert plugin.calls[-1][1].startswith("error: json: cannot unmarshal") or "Pod" in plugin.calls[-1][1]


def test_the_intersection_reads_every_uid_and_keeps_a_victim_per_matching_candidate():
    """Upstream's nested loop: a candidate listed twice keeps the victim twice; a nil candidate panics."""
    from schedcheck.reference.framework.session import Session

    a, b = pod("a"), pod("b")
    ssn = Session.__new__(Session)
    first = [a, b]
    ssn._tiered = lambda point: [[lambda *_: (first, PERMIT), lambda *_: (second, PERMIT)]]
    second = [b, a, b]
    assert Session._tiered_intersection(ssn, "preemptable") == [a, b, b]
    second = [b, Nil("*api.TaskInfo")]
    with pytest.raises(NilDereference):
        Session._tiered_intersection(ssn, "preemptable")


def test_errors_status_codes_body_limit_and_timeout():
    recorder = Recorder()
    recorder.answers["/fail"] = lambda _: (503, b"{}")
    recorder.answers["/huge"] = lambda _: (200, b'{"status":"' + b"a" * MAX_BODY_SIZE + b'"}')
    with extender(recorder) as url:
        ssn = session(args(url, predicate="fail"))
        err = ssn.predicate_fn(task(ssn, "p0"), ssn.nodes["n1"])
        assert "failed fail with extender at URL" in err.reasons()[0] and "code 503" in err.reasons()[0]
        ssn = session(args(url, predicate="huge"))
        assert "request body too large" in ssn.predicate_fn(task(ssn, "p0"), ssn.nodes["n1"]).reasons()[0]
        recorder.delay = 0.5
        ssn = session({**args(url, predicate="slow"), "extender.httpTimeout": "100ms"})
        err = ssn.predicate_fn(task(ssn, "p0"), ssn.nodes["n1"])
        assert err is not None and "timed out" in err.reasons()[0].lower()


def test_a_failed_session_open_turns_a_non_ignorable_extender_off():
    recorder = Recorder()
    recorder.answers["/open"] = lambda _: (500, b"")
    with extender(recorder) as url:
        off = session(args(url, onSessionOpen="open", predicate="p"))
        on = session({**args(url, onSessionOpen="open", predicate="p"), "extender.ignorable": "true"})
    assert off.registered("predicate") == [[]] and off.event_handlers == []
    assert [name for name, _ in on.registered("predicate")[0]] == ["extender"]
    opened = [body for path, body in recorder.requests if path == "/open"][0]
    assert list(opened) == ["Jobs", "Nodes", "Queues", "NamespaceInfo", "RevocableNodes", "NodeList"]
    assert opened["NodeList"] is None and set(opened["Nodes"]) == {"n1", "n2"}


def test_event_handlers_set_the_events_error():
    recorder = Recorder()
    recorder.answers["/alloc"] = reply({"errorMessage": "no"})
    with extender(recorder) as url:
        ssn = session({**args(url, allocateFunc="alloc", deallocateFunc="gone"), "extender.ignorable": True})
        event = Event(task(ssn, "p0"))
        ssn.event_handlers[-1].allocate_func(event)
        assert str(event.err) == "no"  # a reply's message counts even when ignorable
        event = Event(task(ssn, "p0"))
        ssn.event_handlers[-1].deallocate_func(event)
        assert event.err is None
    assert recorder.paths() == ["/alloc", "/gone"]
    down = session({**args(DOWN, allocateFunc="a")})
    event = Event(task(down, "p0"))
    down.event_handlers[-1].allocate_func(event)
    assert event.err is not None and down.event_handlers[-1].deallocate_func is None


def test_an_observer_gets_the_answers_already_given_without_a_new_call():
    recorder = Recorder()
    recorder.answers["/ready"] = reply({"status": True})
    with extender(recorder) as url:
        ssn = session(args(url, jobReady="ready"))
        job = next(iter(ssn.jobs.values()))
        assert ssn.job_ready(job)
        ssn.observing = True
        assert ssn.job_ready(job)
        ssn.observing = False
        assert ssn.job_ready(job)
    assert recorder.paths() == ["/ready", "/ready"]


def test_plugin_builder_is_registered():
    from schedcheck.reference.framework.plugin import get_plugin_builder

    assert get_plugin_builder("extender") is ExtenderPlugin


def test_objects_render_whole_in_go_order_with_omitempty():
    from schedcheck.reference import k8s
    from schedcheck.reference.plugins.extender_json import render_go, render_pod

    doc = {"metadata": {"name": "p", "creationTimestamp": "2024-01-02T04:04:05+01:00"},
           "spec": {"tolerations": [{"key": "k", "operator": "Exists"}], "containers": [{"name": "c"}],
                    "overhead": {"cpu": "1000m"}, "hostNetwork": False, "priority": 0},
           "status": {"phase": "Pending"}}
    rendered = render_go("v1.Pod", doc)
    assert list(rendered) == ["metadata", "spec", "status"]
    assert rendered["metadata"] == {"name": "p", "creationTimestamp": "2024-01-02T03:04:05Z"}
    spec = rendered["spec"]  # declaration order; hostNetwork false omitted; priority a pointer: kept at 0
    assert list(spec) == ["containers", "tolerations", "priority", "overhead"]
    assert spec["overhead"] == {"cpu": "1"} and spec["containers"] == [{"name": "c", "resources": {}}]
    assert render_go("v1.Node", None)["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 0}}
    pod = k8s.Pod("p", "default", "default-p", labels={"a": "b"}, raw=k8s.RawDocument(doc))
    body = render_pod(pod)  # the reference's values laid over the document, which stays as it was
    assert body["metadata"]["labels"] == {"a": "b"}
    assert body["spec"]["tolerations"] == [{"key": "k", "operator": "Exists"}]
    assert "priority" not in body["spec"] and doc["spec"]["priority"] == 0


def test_scheduler_side_fields_read_the_annotations_as_upstream_does():
    from schedcheck.reference import k8s
    from schedcheck.reference.api.types import TaskStatus
    from schedcheck.reference.plugins import extender_json as wire

    group = k8s.PodGroup("g", "default", "podgroup-default-g", annotations={
        "volcano.sh/sla-waiting-time": "-1s", "sla-waiting-time": "1m30s", "volcano.sh/preemptable": "true",
        "volcano.sh/jdb-max-unavailable": "20%"})
    assert wire._waiting_time(group) == 90_000_000_000  # the first key does not parse as positive: the second
    assert wire._revocable_zone(group) == "*"
    assert wire._budget(group) == {"MinAvailable": "", "MaxUnavailable": "20%"}
    group.annotations["volcano.sh/revocable-zone"] = "rz1"  # only "*" counts
    assert wire._revocable_zone(group) == "" and wire._waiting_time(None) is None
    index = {TaskStatus(2): {}, TaskStatus(16): {}, TaskStatus(128): {}}
    assert list(wire._status_index(index)) == ["128", "16", "2"]  # int keys written as strings, sorted so
    pod = k8s.Pod("p", "default", "u", annotations={
        "volcano.sh/numa-topology-policy": "single-numa-node",
        "volcano.sh/topology-decision": '{"numa": {"1": {"cpu": "2000m"}}}'})
    assert wire._numa_info(pod) == {"Policy": "single-numa-node", "ResMap": {"1": {"cpu": "2"}}}
    pod.annotations["volcano.sh/topology-decision"] = "{}"  # decodes, without resources: a nil map
    assert wire._numa_info(pod)["ResMap"] is None


def test_a_victim_outside_the_evictees_or_with_fields_of_its_own_is_recorded_for_the_victim_rules():
    """Upstream goes on with every returned victim as decoded: an echo of a task the action did not offer,
    a copy whose request differs, one without its requests (nil), one naming a job the session lacks."""
    recorder = Recorder()
    with extender(recorder) as url:
        ssn = session(args(url, preemptable="victims"))
        evictor, a, b = task(ssn, "p0"), task(ssn, "p0"), task(ssn, "gpu0")
        plugin = ssn.plugins["extender"]
        echo = json.loads(wire.marshal(wire.render_task(b)))
        changed = {**echo, "Resreq": {**echo["Resreq"], "MilliCPU": echo["Resreq"]["MilliCPU"] + 1}}
        partial = {key: echo[key] for key in ("UID", "Job", "Name", "Namespace", "NodeName")}
        recorder.answers["/victims"] = reply({"status": 1, "victims": [echo, changed, partial,
                                                                       {**echo, "Job": "default/none"}]})
        chosen, vote = plugin.victims("preemptable", evictor, [a])
        assert vote == PERMIT and [t.uid for t in chosen] == [b.uid] * 4
        assert wire.render_task(chosen[0]) == wire.render_task(b) and chosen[0] is not b
        assert chosen[1].resreq.milli_cpu == b.resreq.milli_cpu + 1 and chosen[1].init_resreq.milli_cpu == \
            b.init_resreq.milli_cpu
        assert is_nil(chosen[2].resreq) and is_nil(chosen[2].pod) and chosen[2].name == b.name
        with pytest.raises(NilDereference):
            _ = chosen[2].pod_key  # upstream's PodKey(nil)
        assert chosen[3].job == "default/none"
        assert plugin.outside_victims == {b.uid}
        plugin.outside_victims.clear()
        recorder.answers["/victims"] = reply({"status": 1, "victims": [json.loads(wire.marshal(wire.render_task(a)))]})
        assert [t.uid for t in plugin.victims("preemptable", evictor, [a])[0]] == [a.uid]
        assert plugin.outside_victims == set()  # the offered evictee, echoed


def test_victim_preemptable_passes_an_extender_named_victim_and_still_catches_any_other(monkeypatch):
    from pathlib import Path

    from schedcheck.invariants.engine import InvariantEngine
    from schedcheck.reference.plugins import extender as extender_module
    from schedcheck.runner import run_scenario
    from schedcheck.scenario.loader import load_scenario

    path = Path(__file__).resolve().parent.parent / "scenarios" / \
        "extender-preemptable-victim-outside-the-evictees.yaml"

    def violations() -> list[str]:
        engine = InvariantEngine(only=["victim.preemptable"])
        result = run_scenario(load_scenario(path), engine=engine)
        assert sorted(result.evicted) == ["default/keep-0", "default/low-0"]
        return [v.invariant for v in engine.violations]

    assert violations() == []
    # the same evictions without the extender's record of the victim it named: the rule fires
    original = extender_module.ExtenderPlugin.victims

    def unrecorded(self, verb, evictor, evictees):
        found = original(self, verb, evictor, evictees)
        self.outside_victims.clear()
        return found
    monkeypatch.setattr(extender_module.ExtenderPlugin, "victims", unrecorded)
    assert "victim.preemptable" in violations()


def test_a_victim_pod_the_session_does_not_hold_is_read_as_a_pod_document():
    """A Pod that renders as none of the session's pods (here an older version of gpu0, with another label)
    is decoded on its own: the scenario reader reads it (schedcheck.scenario registers it), keeping its
    document; its annotations beyond the pod's are kept as the task's PodAnnotations."""
    recorder = Recorder()
    with extender(recorder) as url:
        ssn = session(args(url, preemptable="victims"))
        evictor, b = task(ssn, "p0"), task(ssn, "gpu0")
        echo = json.loads(wire.marshal(wire.render_task(b)))
        stale = json.loads(json.dumps(echo))
        stale["Pod"]["metadata"]["labels"] = {"era": "old"}
        stale["PodAnnotations"] = {**(stale["PodAnnotations"] or {}), "volcano.sh/extra": "1"}
        recorder.answers["/victims"] = reply({"status": 1, "victims": [stale]})
        (copy,), _ = ssn.plugins["extender"].victims("preemptable", evictor, [b])
        assert copy.pod is not b.pod and copy.pod.labels == {"era": "old"} and copy.pod.key == b.pod.key
        assert wire.render_pod(copy.pod) == stale["Pod"] and copy.pod_annotations == {"volcano.sh/extra": "1"}
        assert ssn.plugins["extender"].outside_victims == {b.uid}  # not the evictee as offered


def test_the_example_server_patches_a_victim_with_a_json_merge_patch():
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "extender_server", Path(__file__).resolve().parents[2] / "examples" / "extender_server.py")
    server = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(server)
    task_ = {"UID": "u", "Resreq": {"MilliCPU": 1000, "Memory": 1}, "Pod": {"metadata": {"annotations": {
        server.VICTIM_PATCH: '{"UID": "x", "Resreq": {"MilliCPU": 0, "Memory": null}}'}}}}
    patched = server.patched(task_)
    assert patched["UID"] == "x" and patched["Resreq"] == {"MilliCPU": 0} and task_["UID"] == "u"
    task_["Pod"]["metadata"]["annotations"][server.VICTIM_PATCH] = "null"
    assert server.patched(task_) is None
    assert server.patched({"UID": "u"}) == {"UID": "u"}
