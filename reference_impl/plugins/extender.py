"""extender: scheduling decisions delegated to an HTTP server (pkg/scheduler/plugins/extender/extender.go,
argument.go).

Arguments, all under the `extender.` prefix as upstream names them: `urlPrefix`; `httpTimeout` (a Go
duration, 1s when absent, not a string or not parsable; zero or negative: no timeout); one path per verb:
`onSessionOpenVerb`, `onSessionCloseVerb`, `predicateVerb`, `prioritizeVerb`, `preemptableVerb`,
`reclaimableVerb`, `queueOverusedVerb`, `jobEnqueueableVerb`, `jobEnqueuedVerb`, `jobReadyVerb`,
`allocateFuncVerb`, `deallocateFuncVerb` (a value that is not a string counts as unset); `ignorable`
(bool or a string strconv.ParseBool accepts, else false); `managedResources` (a list of resource names;
anything else makes upstream exit, here ExtenderArgumentError).

Each call POSTs `<urlPrefix without trailing slashes>/<verb>` with a JSON body (extender_json.py says which
fields are rendered) and Content-Type application/json. A transport error, a timeout, a status other than
200, a reply body over 10 MiB or one that does not decode is an error (Go's decoder fails only when it must
read past 10 MiB to finish the first JSON value; the reference fails on any longer body); what an error
does depends on the verb:

- onSessionOpen (only when its verb is set): on an error, a non-ignorable extender registers nothing at all
  for the session (it returns before registering); an ignorable one goes on.
- predicate -> PredicateFn: tasks the extender is not interested in pass; an error passes when ignorable,
  else fails the node with status Error and the error text. A reply with an empty `status` passes;
  otherwise the node fails with the reply's `code` (0, or absent, becomes Error 1; any other number is kept,
  so 2 is Unschedulable, which preempt may resolve) and `status` as the reason.
- prioritize -> BatchNodeOrderFn: not interested: no scores; an error: no scores when ignorable, else a
  scoring error; a reply with a non-empty `errorMessage` or without `nodeScore` is a scoring error even when
  ignorable (upstream returns errors.New of the message). A scoring error makes PrioritizeNodes return no
  scores at all for the task.
- preemptable / reclaimable -> PreemptableFn / ReclaimableFn: not interested: abstain; an error: no victims
  with Permit when ignorable, Reject otherwise (both end the tier's intersection with nothing: upstream
  only checks for abstention); else the reply's `victims` and `status` (0 abstains).
- jobEnqueueable -> JobEnqueueableFn (no interest check): an error is Permit when ignorable, else Reject;
  else the reply's `status` (an int: >0 permits, <0 rejects, 0 abstains).
- jobEnqueued -> JobEnqueuedFn: the call only; errors are logged.
- queueOverused -> OverusedFn and jobReady -> JobReadyFn: an error answers `not ignorable` (so a
  non-ignorable extender that is down calls every queue overused and every job ready); else the reply's
  `overused` / `status`.
- allocateFunc / deallocateFunc -> an event handler (always added; a handler only for the verbs set):
  tasks not of interest are skipped; an error sets the event's error unless ignorable; a reply's non-empty
  `errorMessage` sets it in any case (a failed allocate event rolls the allocation back).
- onSessionClose: the call only, with an empty object.

`managedResources` (isInterested): when the list is empty every task is of interest; else a task is when one
of its containers or init containers requests or limits one of the listed resources (requests here hold the
limits too, as the API server defaults them, so one look covers both).

Victims come back as upstream has them: each a new TaskInfo decoded from the reply, whatever it holds
(extender_victims.py): an echo of an evictee, a copy whose fields differ, a task the session does not have,
one with fields missing (a nil pointer upstream reads through, and panics), or null.
The exchange itself (the whole-exchange timeout, redirects, gzip) is Go's client's:
extender_http.py, which says what it leaves out; Go's error texts are not reproduced word for word.
"""

from __future__ import annotations

from typing import Any

from schedcheck.reference.api.task_info import TaskInfo, parse_go_bool
from schedcheck.reference.api.unschedule_info import FitError, ScoringError, Status, StatusCode
from schedcheck.reference.framework.event import Event, EventHandler
from schedcheck.reference.framework.plugin import Plugin, register_plugin_builder
from schedcheck.reference.framework.session import ABSTAIN, PERMIT, REJECT, Session
from schedcheck.reference.plugins import extender_http as http
from schedcheck.reference.plugins import extender_json as wire
from schedcheck.reference.plugins import extender_victims as victims_wire
from schedcheck.reference.plugins.sla import DurationError, parse_go_duration
from schedcheck.reference.util.nil import is_nil

PLUGIN_NAME = "extender"
PREFIX = "extender."
URL_PREFIX = PREFIX + "urlPrefix"
HTTP_TIMEOUT = PREFIX + "httpTimeout"
IGNORABLE = PREFIX + "ignorable"
MANAGED_RESOURCES = PREFIX + "managedResources"
VERBS = ("onSessionOpen", "onSessionClose", "predicate", "prioritize", "preemptable", "reclaimable",
         "queueOverused", "jobEnqueueable", "jobEnqueued", "jobReady", "allocateFunc", "deallocateFunc")
ARGUMENTS = (URL_PREFIX, HTTP_TIMEOUT, *(f"{PREFIX}{verb}Verb" for verb in VERBS), IGNORABLE, MANAGED_RESOURCES)
MAX_BODY_SIZE = 10 << 20  # 10 MiB, as upstream's http.MaxBytesReader
DEFAULT_TIMEOUT_NS = 1_000_000_000


class ExtenderArgumentError(ValueError):
    """An argument upstream cannot decode (it exits); the message is one line."""


class ExtenderError(Exception):
    """One call failed (transport, timeout, status, size or decoding); the message is one line."""


class ExtenderConfig:
    def __init__(self, arguments: dict[str, Any]) -> None:
        def text(key: str) -> str:
            value = arguments.get(key)
            return value if isinstance(value, str) else ""

        self.url_prefix = text(URL_PREFIX)
        self.verbs = {verb: text(f"{PREFIX}{verb}Verb") for verb in VERBS}
        ignorable = arguments.get(IGNORABLE)
        if isinstance(ignorable, str):
            ignorable = parse_go_bool(ignorable)
        self.ignorable = ignorable is True
        self.timeout_ns = DEFAULT_TIMEOUT_NS
        if text(HTTP_TIMEOUT):
            try:
                self.timeout_ns = parse_go_duration(text(HTTP_TIMEOUT))
            except DurationError:
                pass
        self.managed_resources = managed_resources(arguments)


def managed_resources(arguments: dict[str, Any]) -> frozenset[str]:
    """framework.Get[[]string]: a list of strings (null reads as empty); anything else is fatal upstream."""
    value = arguments.get(MANAGED_RESOURCES)
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ExtenderArgumentError(f"{MANAGED_RESOURCES}: expected a list of resource names, got {value!r}")
    return frozenset(value)


def send(config: ExtenderConfig, verb: str, payload: bytes, shape: str | None) -> dict[str, Any]:
    """POST the marshalled body to the verb's URL (extender_http.py: redirects, gzip, the whole-exchange
    timeout); the decoded reply (None shape: the reply is not read)."""
    url = config.url_prefix.rstrip("/") + "/" + verb
    timeout = config.timeout_ns / 1e9 if config.timeout_ns > 0 else None
    try:
        status, data, _ = http.post(url, payload, timeout, MAX_BODY_SIZE, read=shape is not None)
    except http.TransportError as err:
        raise ExtenderError(str(err)) from None
    if status != 200:
        raise ExtenderError(f"failed {verb} with extender at URL {url}, code {status}")
    if shape is None:
        return {}
    if len(data) > MAX_BODY_SIZE:
        raise ExtenderError("http: request body too large")
    fields, err = wire.decode(data, shape)
    if err is not None:
        raise _DecodeError(str(err), fields)
    return fields


class _DecodeError(ExtenderError):
    """The reply did not decode; `fields` holds what Go would have decoded before failing."""

    def __init__(self, message: str, fields: dict[str, Any]) -> None:
        super().__init__(message)
        self.fields = fields


def is_interested(config: ExtenderConfig, task: TaskInfo) -> bool:
    if not config.managed_resources:
        return True
    pod = task.pod
    containers = [*pod.containers, *pod.init_containers] if pod is not None else []
    return any(name in config.managed_resources for container in containers for name in container.requests)


class ExtenderPlugin(Plugin):
    name = PLUGIN_NAME

    def __init__(self, arguments: dict[str, Any]) -> None:
        super().__init__(arguments)
        self.config = ExtenderConfig(arguments)
        self.ssn: Session | None = None
        self.calls: list[tuple[str, str]] = []  # (verb, outcome) of every call this session, in order
        # What the extender answered, by (verb, request body): an observer's question (ssn.observing, a
        # harness's checks re-asking a vote) gets the same answer without a call the scheduler never made.
        self.answers: dict[tuple[str, bytes], dict[str, Any] | ExtenderError] = {}
        # The predicate's last verdict for (task uid, node name) this session, None for a pass: what the
        # scheduler was told, for an observer to judge placements by.
        self.verdicts: dict[tuple[str, str], FitError | None] = {}
        # UIDs of the victims this session's replies named other than as the action offered them (outside the
        # evictees, or with fields of their own): the rules that restate the actions' victim filters pass them
        # over
        self.outside_victims: set[str] = set()
        self.named_victims: list[TaskInfo] = []  # those victims as decoded (invariants/known.py, F59)

    def call(self, verb_key: str, body: Any, shape: str | None) -> dict[str, Any]:
        verb = self.config.verbs[verb_key]
        payload = wire.marshal(body)
        key = (verb_key, payload)
        if self.ssn is not None and self.ssn.observing and key in self.answers:
            answer = self.answers[key]
            if isinstance(answer, ExtenderError):
                raise answer
            return dict(answer)
        try:
            fields = send(self.config, verb, payload, shape)
        except ExtenderError as err:
            self.calls.append((verb_key, f"error: {err}"))
            self.answers[key] = err
            raise
        self.calls.append((verb_key, "ok"))
        self.answers[key] = dict(fields)
        return fields

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        config = self.config
        verbs = config.verbs
        if verbs["onSessionOpen"]:
            body = {"Jobs": {uid: wire.render_job(ssn.jobs[uid]) for uid in sorted(ssn.jobs)},
                    "Nodes": {name: wire.render_node(ssn.nodes[name]) for name in sorted(ssn.nodes)},
                    "Queues": {uid: wire.render_queue(ssn.queues[uid]) for uid in sorted(ssn.queues)},
                    "NamespaceInfo": {}, "RevocableNodes": {}, "NodeList": None}
            try:
                self.call("onSessionOpen", body, None)
            except ExtenderError:
                if not config.ignorable:
                    return
        if verbs["predicate"]:
            ssn.add_fn("predicate", self.name, self.predicate)
        if verbs["prioritize"]:
            ssn.add_fn("batch_node_order", self.name, self.prioritize)
        if verbs["preemptable"]:
            ssn.add_fn("preemptable", self.name, lambda evictor, evictees: self.victims("preemptable", evictor, evictees))
        if verbs["reclaimable"]:
            ssn.add_fn("reclaimable", self.name, lambda evictor, evictees: self.victims("reclaimable", evictor, evictees))
        if verbs["jobEnqueueable"]:
            ssn.add_fn("job_enqueueable", self.name, self.job_enqueueable)
        if verbs["jobEnqueued"]:
            ssn.add_fn("job_enqueued", self.name, self.job_enqueued)
        if verbs["queueOverused"]:
            ssn.add_fn("overused", self.name, self.queue_overused)
        if verbs["jobReady"]:
            ssn.add_fn("job_ready", self.name, self.job_ready)
        ssn.add_event_handler(EventHandler(
            allocate_func=(lambda event: self.event("allocateFunc", event)) if verbs["allocateFunc"] else None,
            deallocate_func=(lambda event: self.event("deallocateFunc", event)) if verbs["deallocateFunc"] else None,
        ))

    def on_session_close(self, ssn: Session) -> None:
        if self.config.verbs["onSessionClose"]:
            try:
                self.call("onSessionClose", {}, None)
            except ExtenderError:
                pass  # upstream logs it

    # -- extension points ---------------------------------------------------------------

    def predicate(self, task: TaskInfo, node: Any) -> Exception | None:
        verdict = self._predicate(task, node)
        if self.ssn is None or not self.ssn.observing:
            self.verdicts[(task.uid, node.name)] = verdict
        return verdict

    def _predicate(self, task: TaskInfo, node: Any) -> FitError | None:
        if not is_interested(self.config, task):
            return None
        try:
            reply = self.call("predicate", {"task": wire.render_task(task), "node": wire.render_node(node)},
                              "predicate")
        except ExtenderError as err:
            if self.config.ignorable:
                return None
            return FitError(task.key, node.name, [Status(StatusCode.Error, str(err))])
        reason = reply.get("status", "")
        if not reason:
            return None
        code = reply.get("code", 0) or int(StatusCode.Error)
        return FitError(task.key, node.name, [Status(_status_code(code), reason, PLUGIN_NAME)])

    def prioritize(self, task: TaskInfo, nodes: list[Any]) -> dict[str, float]:
        if not is_interested(self.config, task):
            return {}
        try:
            reply = self.call("prioritize", {"task": wire.render_task(task), "nodes": [wire.render_node(n) for n in nodes]},
                              "prioritize")
        except ExtenderError as err:
            if self.config.ignorable:
                return {}
            raise ScoringError(str(err)) from None
        message = reply.get("errorMessage", "")
        if not message and "nodeScore" in reply:
            return reply["nodeScore"]
        raise ScoringError(message)

    def victims(self, verb: str, evictor: TaskInfo, evictees: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
        if not is_interested(self.config, evictor):
            return [], ABSTAIN
        body = {"evictor": wire.render_task(evictor), "evictees": [wire.render_task(t) for t in evictees]}
        try:
            reply = self.call(verb, body, "victims")
        except ExtenderError:
            return [], PERMIT if self.config.ignorable else REJECT
        try:
            chosen = victims_wire.decode_victims(reply.get("victims") or [], self.ssn)
        except victims_wire.VictimDecodeError as err:  # Go's Decoder failed: the call failed
            if self.calls and not (self.ssn is not None and self.ssn.observing):
                self.calls[-1] = (verb, f"error: {err}")
            return [], PERMIT if self.config.ignorable else REJECT
        offered = {task.uid: task for task in evictees}
        for task in chosen:
            if not is_nil(task) and not (task.uid in offered and victims_wire.echoes(task, offered[task.uid])):
                self.outside_victims.add(task.uid)
                self.named_victims.append(task)
        return chosen, reply.get("status", 0)

    def job_enqueueable(self, job: Any) -> int:
        try:
            reply = self.call("jobEnqueueable", {"job": wire.render_job(job)}, "status_int")
        except ExtenderError:
            return PERMIT if self.config.ignorable else REJECT
        return reply.get("status", 0)

    def job_enqueued(self, job: Any) -> None:
        try:
            self.call("jobEnqueued", {"job": wire.render_job(job)}, "empty")
        except ExtenderError:
            pass  # upstream logs it

    def queue_overused(self, queue: Any) -> bool:
        try:
            reply = self.call("queueOverused", {"queue": wire.render_queue(queue)}, "overused")
        except ExtenderError:
            return not self.config.ignorable
        return reply.get("overused", False)

    def job_ready(self, job: Any) -> bool:
        try:
            reply = self.call("jobReady", {"job": wire.render_job(job)}, "status_bool")
        except ExtenderError:
            return not self.config.ignorable
        return reply.get("status", False)

    def event(self, verb: str, event: Event) -> None:
        if not is_interested(self.config, event.task):
            return
        reply: dict[str, Any] = {}
        try:
            reply = self.call(verb, {"task": wire.render_task(event.task)}, "error_message")
        except ExtenderError as err:
            reply = getattr(err, "fields", {})
            if not self.config.ignorable:
                event.err = err
        if reply.get("errorMessage"):
            event.err = ExtenderError(reply["errorMessage"])


def _status_code(code: int) -> int:
    try:
        return StatusCode(code)
    except ValueError:
        return code  # upstream keeps any number; only the known failing codes fail allocate or preempt


register_plugin_builder(PLUGIN_NAME, ExtenderPlugin)
