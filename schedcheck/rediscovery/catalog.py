"""The rediscovery catalog: upstream bug fixes as (parent, fix) commit pairs (bugs.yaml beside this file)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

CATALOG = Path(__file__).with_name("bugs.yaml")
FIELDS = ("id", "title", "upstream", "fix", "parent", "release", "area", "bug")


class CatalogError(ValueError):
    """A one-line error naming the catalog entry and field."""


@dataclass(frozen=True)
class Bug:
    id: str
    title: str  # one line
    upstream: str  # the pull request (and issue) that fixed it, e.g. "volcano-sh/volcano#4121"
    fix: str  # the fix commit
    parent: str  # the commit before it: the buggy build
    release: str  # the first release with the fix, or "master"
    area: str  # action or plugin
    bug: str  # what went wrong, in a scheduler developer's words


def load_catalog(path: Path = CATALOG) -> list[Bug]:
    try:
        docs = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogError(f"{path}: {exc}".splitlines()[0]) from None
    if not isinstance(docs, list):
        raise CatalogError(f"{path}: expected a list of bugs")
    bugs, seen = [], set()
    for index, doc in enumerate(docs):
        where = f"{path.name}: bug {doc.get('id', index) if isinstance(doc, dict) else index}"
        if not isinstance(doc, dict):
            raise CatalogError(f"{where}: expected a mapping")
        unknown = sorted(set(doc) - set(FIELDS))
        if unknown:
            raise CatalogError(f"{where}: unknown field {unknown[0]}")
        for name in FIELDS:
            if not isinstance(doc.get(name), str) or not doc[name].strip():
                raise CatalogError(f"{where}: field {name}: expected a non-empty string")
        if doc["id"] in seen:
            raise CatalogError(f"{where}: field id: {doc['id']} appears twice")
        seen.add(doc["id"])
        bugs.append(Bug(**{name: " ".join(doc[name].split()) for name in FIELDS}))
    return bugs


def select(bugs: list[Bug], ids: list[str] | None) -> list[Bug]:
    if not ids:
        return bugs
    known = {bug.id: bug for bug in bugs}
    missing = [i for i in ids if i not in known]
    if missing:
        raise CatalogError(f"no bug {missing[0]} in the catalog (known: {', '.join(sorted(known))})")
    return [known[i] for i in ids]
