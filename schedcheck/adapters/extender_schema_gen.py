"""Regenerate reference_impl/plugins/extender_schema.py: the wire layout (json name, Go type, omitempty /
omitzero, inline) of the Kubernetes and Volcano structs the extender plugin marshals, read from the Go
declarations of the versions upstream builds with (k8s.io/api and k8s.io/apimachinery from the Go module
cache, volcano.sh/apis' internal scheduling types, which the scheduler's api package holds, from a Volcano checkout).

    python -m schedcheck.adapters.extender_schema_gen /tmp/volcano-master > reference_impl/plugins/extender_schema.py

Only names, types and tags are taken: the declaration order is what encoding/json writes.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

K8S_VERSION = "v0.36.1"
ROOTS = ("Pod", "Node", "PodGroup", "Queue")

_STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.S | re.M)
_ALIAS = re.compile(r"^type (\w+) (?!struct)([\w.\[\]*]+)\s*$", re.M)
_FIELD = re.compile(r"^\s*(?:(\w+)\s+)?([\w.\[\]*]+)\s+`[^`]*json:\"([^\"]*)\"")


def _sources(volcano: Path) -> dict[str, list[Path]]:
    cache = Path(subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip())
    api = cache / f"k8s.io/api@{K8S_VERSION}"
    machinery = cache / f"k8s.io/apimachinery@{K8S_VERSION}"
    return {
        "v1": [api / "core/v1/types.go"],
        "metav1": [machinery / "pkg/apis/meta/v1/types.go", machinery / "pkg/apis/meta/v1/time.go",
                   machinery / "pkg/apis/meta/v1/micro_time.go"],
        "vc": [volcano / "staging/src/volcano.sh/apis/pkg/apis/scheduling/types.go"],
    }


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def read(volcano: Path) -> tuple[dict[str, list[tuple[str, str, str]]], dict[str, str]]:
    """Structs (package-qualified name -> fields (json tag, Go name, type)) and named non-struct types."""
    structs: dict[str, list[tuple[str, str, str]]] = {}
    aliases: dict[str, str] = {}
    for package, files in _sources(volcano).items():
        for path in files:
            text = _strip_comments(path.read_text())
            for name, body in _STRUCT.findall(text):
                fields = []
                for line in body.splitlines():
                    match = _FIELD.match(line)
                    if match:
                        go_name, go_type, tag = match.groups()
                        fields.append((tag, go_name or go_type.split(".")[-1], _qualify(go_type, package)))
                structs[f"{package}.{name}"] = fields
            for name, go_type in _ALIAS.findall(text):
                aliases[f"{package}.{name}"] = _qualify(go_type, package)
    return structs, aliases


_BUILTIN = {"string", "bool", "int", "int32", "int64", "uint", "uint32", "uint64", "float32", "float64", "byte"}
_EXTERNAL = {"resource.Quantity": "Quantity", "types.UID": "string", "intstr.IntOrString": "IntOrString",
             "runtime.RawExtension": "Raw", "metav1.Time": "Time", "metav1.MicroTime": "Time", "Time": "Time",
             "MicroTime": "Time", "metav1.Duration": "Raw", "json.RawMessage": "Raw"}


def _qualify(go_type: str, package: str) -> str:
    prefix = ""
    while True:
        if go_type.startswith("*"):
            prefix, go_type = prefix + "*", go_type[1:]
        elif go_type.startswith("[]"):
            prefix, go_type = prefix + "[]", go_type[2:]
        elif go_type.startswith("map["):
            key, _, rest = go_type[4:].partition("]")
            return prefix + "map[string]" + _qualify(rest, package)
        else:
            break
    if go_type in _EXTERNAL:
        return prefix + _EXTERNAL[go_type]
    if go_type in _BUILTIN:
        return prefix + go_type
    if "." in go_type:
        alias = {"corev1": "v1", "v1": "v1", "metav1": "metav1"}.get(go_type.split(".")[0])
        return prefix + (f"{alias}.{go_type.split('.')[1]}" if alias else "Raw")
    return prefix + f"{package}.{go_type}"


def layout(volcano: Path) -> dict[str, tuple[tuple[str, str, str], ...]]:
    """The structs reachable from the roots: name -> ((json name, type, flags), ...), where flags holds
    'e' for omitempty, 'z' for omitzero, 'i' for an inline (embedded) struct; named scalar, slice and map
    types are resolved to their underlying type."""
    structs, aliases = read(volcano)

    def resolve(go_type: str) -> str:
        head = re.match(r"^((?:\*|\[\]|map\[string\])*)(.*)$", go_type)
        prefix, base = head.group(1), head.group(2)
        while base in aliases and base not in structs:
            inner = re.match(r"^((?:\*|\[\]|map\[string\])*)(.*)$", aliases[base])
            prefix, base = prefix + inner.group(1), inner.group(2)
        return prefix + base

    out: dict[str, tuple[tuple[str, str, str], ...]] = {}
    pending = [f"v1.{ROOTS[0]}", f"v1.{ROOTS[1]}", f"vc.{ROOTS[2]}", f"vc.{ROOTS[3]}"]
    while pending:
        name = pending.pop()
        if name in out or name not in structs:
            continue
        rows = []
        for tag, go_name, go_type in structs[name]:
            json_name, *options = tag.split(",")
            if json_name == "-":
                continue
            go_type = resolve(go_type)
            flags = ("e" if "omitempty" in options else "") + ("z" if "omitzero" in options else "")
            if "inline" in options or not json_name and go_name == go_type.split(".")[-1]:
                flags += "i"
            rows.append((json_name or go_name, go_type, flags))
            base = go_type.lstrip("*[]").replace("map[string]", "").lstrip("*[]")
            if base in structs:
                pending.append(base)
        out[name] = tuple(rows)
    return out


def main() -> None:
    volcano = Path(sys.argv[1])
    print('"""Generated by schedcheck/adapters/extender_schema_gen.py from k8s.io/api and k8s.io/apimachinery '
          f'{K8S_VERSION}\nand the internal scheduling package of volcano.sh/apis (Volcano master): each struct '
          "the extender plugin\nmarshals, as (json name, Go type, flags) in declaration order; flags: e omitempty, "
          'z omitzero,\ni inline. Do not edit."""\n')
    print("STRUCTS: dict[str, tuple[tuple[str, str, str], ...]] = {")
    for name, rows in sorted(layout(volcano).items()):
        print(f"    {name!r}: (")
        for row in rows:
            print(f"        {row!r},")
        print("    ),")
    print("}")


if __name__ == "__main__":
    main()
