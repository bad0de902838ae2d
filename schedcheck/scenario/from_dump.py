"""A Volcano scheduler's own cache dump as a scenario.

Upstream's scheduler writes its cache to `snapshot-<time>.json` on SIGUSR2
(pkg/scheduler/cache/dumper.go): several JSON values one after another (the nodes with their tasks,
hypernode tiers, the jobs with their tasks and PodGroups), each Go struct marshalled with its own field
names. The Kubernetes objects inside are found by their shape, whatever the struct around them: a Pod
has spec.containers, a PodGroup spec.minMember, a Node status.allocatable. Queues are not in the dump:
`--objects FILE` adds them (and anything else, as ordinary documents), and the loader warns about every
queue a PodGroup names that is still missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from schedcheck.scenario.errors import ScenarioError

KINDS = {"Pod": "v1", "Node": "v1", "PodGroup": "scheduling.volcano.sh/v1beta1"}


def _kind(value: dict[str, Any]) -> str | None:
    meta, spec, status = value.get("metadata"), value.get("spec"), value.get("status")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        return None
    spec = spec if isinstance(spec, dict) else {}
    status = status if isinstance(status, dict) else {}
    if value.get("kind") in KINDS:
        return value["kind"]
    if isinstance(spec.get("containers"), list):
        return "Pod"
    if "minMember" in spec:
        return "PodGroup"
    if "allocatable" in status or "capacity" in status:
        return "Node"
    return None


def _walk(value: Any, found: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    if isinstance(value, dict):
        kind = _kind(value)
        if kind is not None:
            meta = value["metadata"]
            namespace = meta.get("namespace") or ""  # any type: the object reader names a bad one in one line
            key = (kind, namespace if isinstance(namespace, str) else repr(namespace), meta["name"])
            if key not in found:
                doc = {k: v for k, v in value.items() if k in ("metadata", "spec", "status")}
                found[key] = {"apiVersion": value.get("apiVersion") or KINDS[kind], "kind": kind, **doc}
            return
        for item in value.values():
            _walk(item, found)
    elif isinstance(value, list):
        for item in value:
            _walk(item, found)


def dump_objects(path: str | Path) -> list[dict[str, Any]]:
    """The Nodes, Pods and PodGroups of a scheduler cache dump, as documents."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as err:
        raise ScenarioError(source, "", "", f"cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise ScenarioError(source, "", f"byte {err.start}", "not UTF-8 text") from None
    decoder = json.JSONDecoder()
    values, index = [], 0
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if index >= len(text):
            break
        try:
            value, index = decoder.raw_decode(text, index)
        except json.JSONDecodeError as err:
            raise ScenarioError(source, "", f"line {err.lineno}, column {err.colno}",
                                f"not a scheduler cache dump (JSON values one after another): {err.msg}") from None
        except RecursionError:
            raise ScenarioError(source, "", "", "not a scheduler cache dump: nested too deeply") from None
        values.append(value)
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for value in values:
        _walk(value, found)
    if not found:
        raise ScenarioError(source, "", "", "no Node, Pod or PodGroup found: not a Volcano scheduler cache dump")
    order = {"Node": 0, "PodGroup": 1, "Pod": 2}
    return [found[key] for key in sorted(found, key=lambda k: (order[k[0]], k[1], k[2]))]
