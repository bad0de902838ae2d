"""The cluster objects of a scenario, read for the pictures that need more than the state excerpt
(queues, the HyperNode tree): from a document in hand, or from the file a check report names.
Nothing here raises; what cannot be read is None."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def objects_of(doc: Any) -> Any:
    """ClusterObjects of a scenario document (a dict), or None."""
    if not isinstance(doc, dict):
        return None
    try:
        from schedcheck.scenario.loader import scenario_from_document

        return scenario_from_document(doc, "<report>").objects
    except Exception:  # noqa: BLE001 - a picture's input, never a failure of the report
        return None


def objects_from_source(source: Any) -> Any:
    """ClusterObjects of the scenario file a report names (payload["source"]), or None when it is not a
    readable scenario file (standard input, a cache dump, a file since removed)."""
    if not isinstance(source, str) or not source or source.startswith("<"):
        return None
    try:
        if not Path(source).is_file():
            return None
        from schedcheck.scenario.loader import load_scenario

        return load_scenario(source).objects
    except Exception:  # noqa: BLE001
        return None
