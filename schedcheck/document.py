"""Read-only accessors over scenario documents (the plain mappings a YAML or JSON scenario loads into).

The minimiser and the counterexample report read documents that may be
half-reduced or hand-written, so every accessor tolerates a missing or
mistyped part and answers with an empty value instead of raising. This is the
one place that knows where a scenario keeps its objects, names, PodGroup links
and conf; nothing here validates (that is `schedcheck.scenario.loader`'s job).
"""

from __future__ import annotations

from typing import Any

from schedcheck.reference.k8s import GROUP_NAME_ANNOTATION

Doc = dict[str, Any]
Key = tuple[str, str, str]  # (kind, namespace, name); the namespace is "" for cluster-scoped kinds

NAMESPACED = frozenset({"Pod", "PodGroup", "ResourceQuota"})
CORE_KINDS = frozenset({"Node", "Pod", "PodGroup", "Queue"})


def objects(doc: Any) -> list[Any] | None:
    """The document's `objects` list, or None when it has none (or it is not a list)."""
    if not isinstance(doc, dict):
        return None
    found = doc.get("objects")
    return found if isinstance(found, list) else None


def typed(doc: Any, kind: str) -> list[tuple[int, dict[str, Any]]]:
    """(index, object) of every object of one kind, in document order."""
    return [(i, o) for i, o in enumerate(objects(doc) or []) if isinstance(o, dict) and o.get("kind") == kind]


def sub(obj: Any, key: str) -> dict[str, Any]:
    """The mapping under `key`, or {} when absent or not a mapping."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


def dig(obj: Any, *path: str) -> Any:
    """The value at a path of mapping keys, or None where the path breaks off."""
    for part in path:
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def get(doc: Any, path: tuple[Any, ...]) -> Any:
    """The value at a path of keys and list indices; raises KeyError/IndexError/TypeError where it breaks."""
    for part in path:
        doc = doc[part]
    return doc


def meta(obj: Any) -> dict[str, Any]:
    return sub(obj, "metadata")


def namespace(obj: Any) -> str:
    return str(meta(obj).get("namespace") or "default")


def key(obj: dict[str, Any]) -> Key:
    """(kind, namespace, name) of an object."""
    kind = str(obj.get("kind"))
    return kind, namespace(obj) if kind in NAMESPACED else "", str(meta(obj).get("name"))


def display_name(obj: dict[str, Any], namespaced: bool) -> str:
    """`namespace/name` for namespaced objects, `name` otherwise."""
    name = str(meta(obj).get("name"))
    return f"{namespace(obj)}/{name}" if namespaced else name


def group_name(pod: Any) -> str | None:
    """The PodGroup a pod names in its group-name annotation, or None."""
    group = sub(meta(pod), "annotations").get(GROUP_NAME_ANNOTATION)
    return group if isinstance(group, str) and group else None


def pod_group(pod: dict[str, Any]) -> Key | None:
    """The key of the PodGroup a pod belongs to, or None."""
    group = group_name(pod)
    return None if group is None else ("PodGroup", namespace(pod), group)


def pod_nodes(pod: dict[str, Any]) -> set[str]:
    """The nodes a pod names: where it runs (spec.nodeName) and where it is nominated."""
    names = {sub(pod, "spec").get("nodeName"), sub(pod, "status").get("nominatedNodeName")}
    return {n for n in names if isinstance(n, str) and n}


def conf(doc: Any) -> dict[str, Any] | None:
    """The scheduler conf when given as a mapping (not as text, not absent)."""
    found = doc.get("schedulerConf") if isinstance(doc, dict) else None
    return found if isinstance(found, dict) else None


def actions(conf_doc: dict[str, Any]) -> list[str]:
    """The conf's action names, in order."""
    found = conf_doc.get("actions")
    return [a.strip() for a in found.split(",")] if isinstance(found, str) else []


def tiers(conf_doc: dict[str, Any]) -> list[dict[str, Any]]:
    found = conf_doc.get("tiers")
    return [t for t in found if isinstance(t, dict)] if isinstance(found, list) else []
