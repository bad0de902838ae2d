"""The vocabulary of the reduction passes: an edit (a label and the candidates it makes), a drop
(items and how to remove a set of them), and path helpers that delete parts of a document."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from schedcheck import document as d

Doc = d.Doc
Edit = tuple[str, Callable[[Doc], list[Doc]]]  # label, doc -> alternative candidates (best first)


@dataclass(frozen=True)
class Drop:
    """A ddmin-style pass: the droppable items, and the document without a set of them."""

    items: Callable[[Doc], list[Any]]  # the droppable items, in document order
    drop: Callable[[Doc, set[Any]], Doc]  # the document without them


def lower_int(value: int, floor: int) -> list[int]:
    """Smaller values to try, most aggressive first: floor, half, one less."""
    out: list[int] = []
    for candidate in (floor, value // 2, value - 1):
        if floor <= candidate < value and candidate not in out:
            out.append(candidate)
    return out


def path_label(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


def remove(doc: Doc, path: tuple[Any, ...]) -> bool:
    """Delete the path; then delete mappings left empty on the way up (never the object itself)."""
    try:
        parent = d.get(doc, path[:-1])
        del parent[path[-1]]
    except (KeyError, IndexError, TypeError):
        return False
    for depth in range(len(path) - 1, 2, -1):  # objects.<i>.<section> at most
        holder = d.get(doc, path[:depth])
        if isinstance(holder, (dict, list)) and not holder and path[depth - 1] != "metadata":
            del d.get(doc, path[:depth - 1])[path[depth - 1]]
        else:
            break
    return True


def dropper(path: tuple[Any, ...]) -> Callable[[Doc], list[Doc]]:
    def make(doc: Doc) -> list[Doc]:
        return [doc] if remove(doc, path) else []
    return make


def keep_only(path: tuple[Any, ...], keep: set[str]) -> Callable[[Doc], list[Doc]]:
    def make(doc: Doc) -> list[Doc]:
        holder = d.get(doc, path)
        for name in [k for k in holder if k not in keep]:
            del holder[name]
        return [doc]
    return make


def without(doc: Doc, keep: Callable[[Any], bool]) -> Doc:
    doc["objects"] = [o for o in d.objects(doc) or [] if keep(o)]
    return doc
