"""Plainer forms of the same scenario, tried once before the reduction passes.

Each returns None where it does not apply; each is kept only if the failure survives it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedcheck.minimize.edits import Doc
from schedcheck.reference.framework.conf import DEFAULT_ACTIONS, DEFAULT_TIERS


def is_wrapper(doc: Any) -> bool:
    return isinstance(doc, dict) and (doc.get("kind") == "Scenario" or ("kind" not in doc and "objects" in doc))


def wrap(doc: Any) -> Doc | None:
    """A `kind: List` or a single Kubernetes object becomes a Scenario holding its objects."""
    if is_wrapper(doc) or not isinstance(doc, dict) or "kind" not in doc:
        return None
    items = doc.get("items") if doc.get("kind") == "List" else [doc]
    if not isinstance(items, list):
        return None
    return {"apiVersion": "schedcheck/v1", "kind": "Scenario", "metadata": {"name": "minimised"},
            "objects": items}


def plain_objects(doc: Any) -> Doc | None:
    objects = doc.get("objects") if is_wrapper(doc) else None
    if isinstance(objects, dict) and objects.get("kind") == "List" and isinstance(objects.get("items"), list):
        doc["objects"] = objects["items"]
        return doc
    return None


def conf_mapping(doc: Any) -> Doc | None:
    if not is_wrapper(doc):
        return None
    conf = doc.get("schedulerConf")
    if isinstance(conf, str):
        import yaml

        try:
            parsed = yaml.safe_load(conf)
        except yaml.YAMLError:
            return None
        if isinstance(parsed, dict) and parsed.get("kind") != "ConfigMap":
            doc["schedulerConf"] = parsed
            return doc
    elif conf is None:  # upstream's default conf, written out so that it can be reduced too
        doc["schedulerConf"] = {"actions": ", ".join(DEFAULT_ACTIONS),
                                "tiers": [{"plugins": [{"name": n} for n in tier]} for tier in DEFAULT_TIERS]}
        return doc
    return None


NORMALISATIONS: list[Callable[[Any], Doc | None]] = [wrap, plain_objects, conf_mapping]
