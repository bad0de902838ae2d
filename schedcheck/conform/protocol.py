"""Protocol 1: the version, the result schema (result.schema.json) and a small validator for it.

The validator implements the part of JSON Schema the shipped schema uses (type, const, enum,
required, properties, additionalProperties, items, minimum, minLength, pattern, $ref to
#/$defs), so no dependency is needed; a test checks that every keyword of the schema is one of them.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

PROTOCOL = 1
SCHEMA_PATH = Path(__file__).with_name("result.schema.json")
OPS = ("allocate", "pipeline", "evict", "bind", "unallocate", "unpipeline", "unevict")
SUPPORTED_KEYWORDS = {"$schema", "$id", "title", "description", "$defs", "$ref", "type", "const", "enum",
                      "required", "properties", "additionalProperties", "items", "minimum", "minLength", "pattern"}

_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


@lru_cache(maxsize=1)
def result_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def validate(instance: Any, schema: dict[str, Any] | None = None, limit: int = 10) -> list[str]:
    """Schema errors of `instance` (at most `limit`), each 'path: what is wrong'; [] when valid."""
    root = schema if schema is not None else result_schema()
    errors: list[str] = []
    _check(instance, root, root, "$", errors, limit)
    return errors


def _check(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str, errors: list[str],
           limit: int) -> None:
    if len(errors) >= limit:
        return
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        _check(value, root["$defs"][name], root, path, errors, limit)
        return
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected {json.dumps(schema['const'])}, got {_short(value)}")
        return
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: expected one of {', '.join(map(str, schema['enum']))}, got {_short(value)}")
        return
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[k](value) for k in kinds):
            errors.append(f"{path}: expected {' or '.join(kinds)}, got {_short(value)}")
            return
    if isinstance(value, (int, float)) and not isinstance(value, bool) and "minimum" in schema \
            and value < schema["minimum"]:
        errors.append(f"{path}: {value} is below the minimum {schema['minimum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{path}: empty string")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{path}: {_short(value)} is not of the form namespace/name")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                errors.append(f"{path}: missing required field {key!r}")
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                _check(item, properties[key], root, f"{path}.{key}", errors, limit)
            elif isinstance(extra, dict):
                _check(item, extra, root, f"{path}[{json.dumps(key)}]", errors, limit)
            elif extra is False:
                errors.append(f"{path}: unexpected field {key!r}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            _check(item, schema["items"], root, f"{path}[{index}]", errors, limit)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def schema_keywords(schema: Any) -> set[str]:
    """Every keyword used anywhere in a schema (property names excluded), for the self-check test."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            if key in ("properties", "$defs"):
                for sub in value.values():
                    found |= schema_keywords(sub)
            elif isinstance(value, dict):
                found |= schema_keywords(value)
    return found
