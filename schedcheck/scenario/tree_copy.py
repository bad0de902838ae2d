"""Copying parsed documents (the plain trees YAML and JSON load into)."""

from __future__ import annotations

import copy
from typing import Any

_SCALARS = (str, int, float, bool, type(None))


def copy_document(value: Any) -> Any:
    """A deep copy of a parsed document: what copy.deepcopy gives for YAML/JSON trees, several times
    faster. YAML aliases become separate copies; a document that contains itself (a recursive alias)
    takes copy.deepcopy's path."""
    try:
        return _copy_tree(value)
    except RecursionError:
        return copy.deepcopy(value)


def _copy_tree(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _SCALARS else _copy_tree(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _SCALARS else _copy_tree(v) for v in value]
    if kind is tuple:
        return tuple(v if type(v) in _SCALARS else _copy_tree(v) for v in value)
    if kind in _SCALARS:
        return value
    return copy.deepcopy(value)
