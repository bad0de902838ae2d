"""Read a scenario (../shared/spec/scenario-format.md, version 1).

Three shapes are accepted: a `kind: Scenario` document; a `kind: List` of
Kubernetes objects; a plain (multi-document) stream of Kubernetes objects.
The last two carry no scheduler conf, which then comes from `--conf` or
upstream's default. YAML or JSON.

Bad input raises ScenarioError naming file, object and field; everything
that is merely unused (unknown kinds and fields, references to objects that
are not there) becomes a line in `Scenario.warnings`.

This module reads the text, the Scenario wrapper, its conf and its `expect`
block; `objects` reads the Kubernetes objects, `references` warns about
what they name but is missing, and `fields` does the typed reads.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from schedcheck.reference.framework.conf import SchedulerConf, default_scheduler_conf
from schedcheck.reference.util.scheduler_helper import ServerOptions
from schedcheck.scenario.conf_loader import load_yaml_documents, parse_scheduler_conf
from schedcheck.scenario import extender
from schedcheck.scenario.errors import ScenarioError, describe
from schedcheck.scenario.fields import Fields
from schedcheck.scenario.model import Expectations, Scenario
from schedcheck.scenario.objects import ObjectsReader
from schedcheck.scenario.options import OPTIONS_KEY, read_options, shard_warnings
from schedcheck.scenario.topology import topology_warnings
from schedcheck.scenario.device_config import config_map_warnings
from schedcheck.scenario.device_warnings import device_warnings
from schedcheck.scenario.dra_warnings import dra_warnings
from schedcheck.scenario.tree_copy import copy_document
from schedcheck.scenario.volumes import volume_warnings
from schedcheck.scenario.references import POD_GROUP_PHASES

API_VERSION = "schedcheck/v1"
INTERNAL_ERROR = "unreadable input (loader bug)"
_SCENARIO_KEYS = {"apiVersion", "kind", "metadata", "schedulerConf", "schedulerOptions", "objects", "cycles", "now",
                  "expect", extender.KEY}
_TASK_STATUSES = set("Pending Allocated Pipelined Binding Bound Running Releasing Succeeded Failed Unknown".split())
MAX_CYCLES = 10_000  # sessions one scenario may ask for (the stateful machine runs longer programs)
_EXPECT_KEYS = {"binds", "bindsInclude", "evicted", "pipelined", "podGroupPhases", "taskStatusCounts", "bindCount", "evictCount"}


# ---------------------------------------------------------------- entry points


def load_scenario(path: str | Path, conf_path: str | Path | None = None) -> Scenario:
    """Read a scenario file ("-" is standard input); `conf_path` overrides its conf."""
    source = "<stdin>" if str(path) == "-" else str(path)
    text = _read_text(path, source)
    conf_text = None
    conf_source = "<conf>"
    if conf_path is not None:
        conf_source = "<stdin>" if str(conf_path) == "-" else str(conf_path)
        conf_text = _read_text(conf_path, conf_source)
    return load_scenario_text(text, source, conf_text, conf_source)


def load_scenario_text(text: str, source: str, conf_text: str | None = None, conf_source: str = "<conf>") -> Scenario:
    """Read a scenario from text; `conf_text` (volcano-scheduler.conf YAML) overrides its conf."""
    conf_override = None if conf_text is None else (conf_text, conf_source)
    return _guarded(source, lambda: _build(_parse_documents(text, source), source, conf_override))


def load_from_dump(dump_path: str | Path, objects_path: str | Path | None = None,
                   conf_path: str | Path | None = None) -> Scenario:
    """A Volcano scheduler cache dump (dumper.go, SIGUSR2) as a scenario, with Queues and any other objects
    from `objects_path` and the conf from `conf_path` (upstream's default conf without one)."""
    from schedcheck.scenario.from_dump import dump_objects

    source = str(dump_path)
    docs: list[Any] = list(dump_objects(dump_path))
    if objects_path is not None:
        objects_source = str(objects_path)
        extra = _parse_documents(_read_text(objects_path, objects_source), objects_source)
        for doc in extra:
            if isinstance(doc, Mapping) and doc.get("kind") == "List":
                docs += list(doc.get("items") or [])
            elif doc is not None:
                docs.append(doc)
    conf_override = None
    if conf_path is not None:
        conf_source = str(conf_path)
        conf_override = (_read_text(conf_path, conf_source), conf_source)
    return _guarded(source, lambda: _build(docs, source, conf_override))


def scenario_from_document(doc: dict[str, Any], source: str) -> Scenario:
    """Build a scenario from an already parsed document (a Scenario, a List or one object)."""
    return _guarded(source, lambda: _build([doc], source, None))


def fresh_copy(scenario: Scenario) -> Scenario:
    """The scenario with its own copy of the objects (a run may change the objects it is handed)."""
    return dataclasses.replace(scenario, objects=copy.deepcopy(scenario.objects))


def with_scheduler_conf(scenario: Scenario, conf_doc: Any, document: dict[str, Any]) -> Scenario:
    """The same objects (copied) under another conf: what loading `document`, the scenario's document with
    `conf_doc` as its schedulerConf, would give, without reading the objects again."""
    warnings = [w for w in scenario.warnings if not w.startswith("schedulerConf")]
    conf, _ = _guarded(scenario.source, lambda: _conf(conf_doc, scenario.source, None, warnings))
    _guarded(scenario.source, lambda: extender.check_conf(conf, scenario.extender_server, scenario.source, warnings))
    name = (document.get("metadata") or {}).get("name") or scenario.name
    return dataclasses.replace(scenario, name=name, conf=conf, objects=copy.deepcopy(scenario.objects),
                               warnings=warnings, document=document)


def _guarded(source: str, read: Callable[[], Scenario]) -> Scenario:
    """Run `read`, turning any stray exception into a ScenarioError.

    Every bad input is meant to be caught where it is read, with a precise
    message; reaching the fallback here is a loader bug (the tests check
    that no input does).
    """
    try:
        return read()
    except ScenarioError:
        raise
    except Exception as err:  # noqa: BLE001 - the contract is "ScenarioError only"
        raise ScenarioError(source, "", "", f"{INTERNAL_ERROR}: {type(err).__name__}: {err}") from err


# ---------------------------------------------------------------- text


def _read_text(path: str | Path, source: str) -> str:
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else Path(path).read_bytes()
    except OSError as err:
        raise ScenarioError(source, "", "", f"cannot read: {err.strerror or err}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ScenarioError(source, "", f"byte {err.start}", "not UTF-8 text") from None


class _DuplicateKey(ValueError):
    pass


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(f"duplicate key {key!r}")
        result[key] = value
    return result


def _parse_documents(text: str, source: str) -> list[Any]:
    """JSON for a .json file; otherwise YAML, though JSON-looking text is tried as JSON first."""
    strict_json = source.lower().endswith(".json")
    if strict_json or text.lstrip()[:1] in ("{", "["):
        try:
            return [json.loads(text, object_pairs_hook=_json_object)]
        except _DuplicateKey as err:
            raise ScenarioError(source, "", "", f"invalid JSON: {err}") from None
        except json.JSONDecodeError as err:
            json_error = ScenarioError(source, "", f"line {err.lineno}, column {err.colno}", f"invalid JSON: {err.msg}")
        except RecursionError:
            json_error = ScenarioError(source, "", "", "invalid JSON: nested too deeply")
        if strict_json:
            raise json_error
        try:
            return load_yaml_documents(text, source)
        except ScenarioError:
            raise json_error from None
    return load_yaml_documents(text, source)


# ---------------------------------------------------------------- the scenario


def _is_wrapper(doc: Any) -> bool:
    if not isinstance(doc, Mapping):
        return False
    api = doc.get("apiVersion")
    return (
        doc.get("kind") == "Scenario"
        or (isinstance(api, str) and api.startswith("schedcheck/"))
        or ("kind" not in doc and ("objects" in doc or "schedulerConf" in doc))
    )


def _build(docs: list[Any], source: str, conf_override: tuple[str, str] | None) -> Scenario:
    docs = [d for d in docs if d is not None]
    if not docs:
        raise ScenarioError(source, "", "", "holds no document")
    if any(_is_wrapper(d) for d in docs):
        if len(docs) > 1:
            raise ScenarioError(source, "Scenario", "", "a Scenario must be the only document in its file")
        return _from_wrapper(dict(docs[0]), source, conf_override)
    located = [(f"document {i + 1}" if len(docs) > 1 else "document", d) for i, d in enumerate(docs)]
    for where, doc in located:
        if not isinstance(doc, Mapping):
            raise ScenarioError(
                source,
                where,
                "",
                f"expected a mapping (a Scenario, a List or a Kubernetes object), got {describe(doc)}",
            )
    warnings: list[str] = []
    objects = ObjectsReader(source, warnings).read(located)
    volume_warnings(objects, ServerOptions(), warnings)
    dra_warnings(objects, warnings)
    device_warnings(objects, warnings, source)
    conf, conf_doc = _conf(None, source, conf_override, warnings)
    config_map_warnings(objects, conf, warnings, source)
    extender.check_conf(conf, None, source, warnings)
    name = Path(source).stem or source
    document = {
        "apiVersion": API_VERSION,
        "kind": "Scenario",
        "metadata": {"name": name},
        "objects": copy_document(docs),
    }
    if conf_doc is not None:
        document["schedulerConf"] = conf_doc
    return Scenario(name=name, source=source, conf=conf, objects=objects, warnings=warnings, document=document)


def _from_wrapper(doc: dict[str, Any], source: str, conf_override: tuple[str, str] | None) -> Scenario:
    f = Fields(source, "Scenario")
    for key in doc:
        if not isinstance(key, str):
            f.fail("", f"expected string keys, got {describe(key)}")
    if doc.get("apiVersion") != API_VERSION:
        f.fail("apiVersion", f"expected {API_VERSION}, got {describe(doc.get('apiVersion'))}")
    if doc.get("kind") != "Scenario":
        f.fail("kind", f"expected Scenario, got {describe(doc.get('kind'))}")
    warnings: list[str] = []
    unknown = sorted(set(doc) - _SCENARIO_KEYS)
    if unknown:
        warnings.append(f"Scenario: ignored unknown keys {', '.join(unknown)}")
    metadata = f.mapping(doc.get("metadata"), "metadata")
    name = f.string(metadata.get("name"), "metadata.name") or Path(source).stem or source
    annotations = f.str_map(metadata.get("annotations"), "metadata.annotations")
    cycles = f.integer(doc.get("cycles"), "cycles", default=1, minimum=1, bits=None)
    if cycles > MAX_CYCLES:  # a mistyped count would run for hours: one line, not a hang
        f.fail("cycles", f"at most {MAX_CYCLES} sessions, got {cycles}")
    now = f.timestamp(doc.get("now"), "now")
    expect = _expectations(f, doc.get("expect"))
    objects = ObjectsReader(source, warnings).read(_object_items(f, doc.get("objects")))
    conf, conf_doc = _conf(doc.get("schedulerConf"), source, conf_override, warnings)
    config_map_warnings(objects, conf, warnings, source)
    options = read_options(f, doc.get(OPTIONS_KEY), warnings)
    extender_server = extender.read_server(f, doc.get(extender.KEY), warnings)
    extender.check_conf(conf, extender_server, source, warnings)
    shard_warnings(options, objects, warnings)
    topology_warnings(objects, warnings)
    volume_warnings(objects, options, warnings)
    dra_warnings(objects, warnings)
    device_warnings(objects, warnings, source)
    document = copy_document(doc)
    if conf_override is not None:
        document["schedulerConf"] = conf_doc
    return Scenario(
        name=name,
        source=source,
        conf=conf,
        objects=objects,
        cycles=cycles,
        now=now,
        expect=expect,
        warnings=warnings,
        document=document,
        annotations=annotations,
        options=options,
        extender_server=extender_server,
    )


def _object_items(f: Fields, value: Any) -> list[tuple[str, Any]]:
    if value is None:
        return []
    if isinstance(value, Mapping):
        if value.get("kind") != "List":
            f.fail("objects", f"expected a list or a kind: List document, got a {describe(value.get('kind'))} mapping")
        return [("objects", value)]
    if not isinstance(value, list):
        f.fail("objects", f"expected a list, got {describe(value)}")
    return [(f"objects[{i}]", item) for i, item in enumerate(value)]


def _conf(
    embedded: Any, source: str, override: tuple[str, str] | None, warnings: list[str]
) -> tuple[SchedulerConf, Any]:
    """The conf in force and the document it came from (None for the default)."""
    if override is not None:
        text, conf_source = override
        if embedded is not None:
            warnings.append(f"schedulerConf: the scenario's own conf is overridden by {conf_source}")
        return parse_scheduler_conf(text, conf_source, warnings), text
    if embedded is None:
        return default_scheduler_conf(), None
    if not isinstance(embedded, (Mapping, str)):
        raise ScenarioError(
            source, "schedulerConf", "", f"expected a mapping or a YAML string, got {describe(embedded)}"
        )
    return parse_scheduler_conf(embedded, source, warnings), embedded


# ---------------------------------------------------------------- expectations


def _object_key(f: Fields, key: Any, field: str) -> str:
    if not isinstance(key, str) or key.count("/") != 1 or not all(key.split("/")):
        f.fail(field, f'expected a "namespace/name" key, got {describe(key)}')
    return key


def _expectations(f: Fields, value: Any) -> Expectations:
    doc = f.mapping(value, "expect")
    for key in doc:
        if key not in _EXPECT_KEYS:
            f.fail(f"expect.{key}", f"unknown expectation (known: {', '.join(sorted(_EXPECT_KEYS))})")
    out = Expectations()
    if doc.get("bindsInclude") is not None:
        out.binds_include = {
            _object_key(f, k, "expect.bindsInclude"): f.string(v, f"expect.bindsInclude[{k}]", required=True)
            for k, v in f.mapping(doc["bindsInclude"], "expect.bindsInclude").items()
        }
    if doc.get("binds") is not None:
        out.binds = {
            _object_key(f, k, "expect.binds"): f.string(v, f"expect.binds[{k}]", required=True)
            for k, v in f.mapping(doc["binds"], "expect.binds").items()
        }
    if doc.get("evicted") is not None:
        out.evicted = [
            _object_key(f, item, f"expect.evicted[{i}]")
            for i, item in enumerate(f.sequence(doc["evicted"], "expect.evicted"))
        ]
    if doc.get("pipelined") is not None:
        out.pipelined = {}
        for k, v in f.mapping(doc["pipelined"], "expect.pipelined").items():
            field = f"expect.pipelined[{k}]"
            nodes = [f.string(n, f"{field}[{i}]", required=True) for i, n in enumerate(f.sequence(v, field))]
            if not nodes:
                f.fail(field, "expected at least one node")
            out.pipelined[_object_key(f, k, "expect.pipelined")] = nodes
    if doc.get("podGroupPhases") is not None:
        out.pod_group_phases = {
            _object_key(f, k, "expect.podGroupPhases"): f.choice(v, f"expect.podGroupPhases[{k}]", POD_GROUP_PHASES)
            for k, v in f.mapping(doc["podGroupPhases"], "expect.podGroupPhases").items()
        }
    if doc.get("taskStatusCounts") is not None:
        out.task_status_counts = {}
        for k, v in f.mapping(doc["taskStatusCounts"], "expect.taskStatusCounts").items():
            field = f"expect.taskStatusCounts[{k}]"
            counts = {}
            for status, n in f.mapping(v, field).items():
                f.choice(status, f"{field}", _TASK_STATUSES)
                counts[status] = f.integer(n, f"{field}.{status}", minimum=0, bits=None)
            out.task_status_counts[_object_key(f, k, "expect.taskStatusCounts")] = counts
    out.bind_count = f.integer(doc.get("bindCount"), "expect.bindCount", minimum=0, bits=None)
    out.evict_count = f.integer(doc.get("evictCount"), "expect.evictCount", minimum=0, bits=None)
    return out
