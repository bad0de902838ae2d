"""Compare the extender request bodies the reference and upstream's scheduler (the Go adapter) send for
the same scenarios, request by request, value by value.

    SCHEDCHECK_VOLCANO_SRC=/tmp/volcano-master python examples/compare_extender_bodies.py \
        tests/scenarios/extender-*.yaml

Each scenario's extenderServer command (examples/extender_server.py) gets `--bodies FILE`, once for the
reference's run and once for upstream's; the two files' requests are paired per path by what they are
about (task, node, job, queue; evictees sorted by UID: upstream's call order varies) and every
differing JSON path is printed, except TypeMeta (kind, apiVersion: the adapter decodes the scenario's
documents, which carry them; informer objects do not). Two kinds of difference are only counted: the
scheduler-side fields extender_json.py does not render (named), and timestamps, which the adapter moves by
(the real time - the scenario's clock) so that upstream's plugins reading the real time see the scenario's
clock (adapters/volcano/run.go, fill); the reference sends the scenario's own times, as a real cluster's
scheduler sends its objects' times. Exit status 1 when any other difference remains.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from schedcheck.adapters.differential import run_reference, run_upstream
from schedcheck.adapters.volcano import adapter_command

IGNORED = {"kind", "apiVersion"}
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _walk(a: Any, b: Any, path: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        if list(k for k in a if k not in IGNORED) != list(k for k in b if k not in IGNORED) and \
                set(a) - IGNORED == set(b) - IGNORED:
            out.append(f"{path}: key order {list(a)} vs {list(b)}")
        for key in dict.fromkeys([*a, *b]):
            if key in IGNORED:
                continue
            if key not in a or key not in b:
                out.append(f"{path}.{key}: {'only upstream' if key not in a else 'only reference'}: "
                           f"{json.dumps(b.get(key) if key not in a else a[key])[:160]}")
            else:
                _walk(a[key], b[key], f"{path}.{key}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b)):
            _walk(x, y, f"{path}[{index}]", out)
    elif isinstance(a, str) and isinstance(b, str) and _TIME.fullmatch(a) and _TIME.fullmatch(b):
        if a != b:  # the adapter moves every timestamp by (now - the scenario's clock): see below
            out.append(f"{path}: time {a} vs {b}")
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: reference {json.dumps(a)[:160]} upstream {json.dumps(b)[:160]}")


def _identity(body: Any) -> str:
    """What a request is about (its task, node, job or queue by UID or Name): requests are paired by it,
    since upstream's order of calls (predicates over nodes in parallel) and of evictees (map iteration) varies."""
    if not isinstance(body, dict):
        return ""
    names = []
    for key in sorted(body):
        value = body[key]
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                names.append(f"{key}={item.get('UID') or item.get('Name')}")
    return ",".join(sorted(names))


def _normalise(body: Any) -> Any:
    if isinstance(body, dict) and isinstance(body.get("evictees"), list):
        body = {**body, "evictees": sorted(body["evictees"], key=lambda task: str((task or {}).get("UID")))}
    return body


def _requests(path: Path) -> dict[str, list[Any]]:
    by_path: dict[str, list[Any]] = defaultdict(list)
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            by_path[item["path"]].append(_normalise(json.loads(item["body"] or "null")))
    return {path: sorted(bodies, key=_identity) for path, bodies in by_path.items()}


def compare(scenario: Path, command: list[str]) -> list[str]:
    doc = yaml.safe_load(scenario.read_text(encoding="utf-8"))
    if "extenderServer" not in doc:
        return []
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for side in ("reference", "upstream"):
            bodies = Path(tmp) / f"{side}.jsonl"
            doc["extenderServer"]["command"] = [*doc["extenderServer"]["command"], "--bodies", str(bodies)]
            copy = scenario.with_name(f".bodies-{side}-{scenario.name}")
            copy.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
            try:
                (run_reference if side == "reference" else lambda p: run_upstream(command, p))(copy)
            finally:
                copy.unlink()
            doc["extenderServer"]["command"] = doc["extenderServer"]["command"][:-2]
            results[side] = _requests(bodies)
    ref, up = results["reference"], results["upstream"]
    out: list[str] = []
    for path in sorted(set(ref) | set(up)):
        if len(ref[path]) != len(up[path]):
            out.append(f"{path}: {len(ref[path])} requests from the reference, {len(up[path])} from upstream")
        for index, (a, b) in enumerate(zip(ref[path], up[path])):
            _walk(a, b, f"{path}#{index}", out)
    return out


def main() -> int:
    command = adapter_command()
    failed = 0
    for name in sys.argv[1:]:
        differences = compare(Path(name), command)
        # the scheduler-side fields extender_json.py lists as not rendered, counted by name
        unrendered = [d for d in differences if re.search(r"\.([A-Z]\w*): only upstream", d)]
        names = sorted({re.search(r"\.([A-Z]\w*): only upstream", d).group(1) for d in unrendered})
        times = [d for d in differences if ": time " in d]
        rest = [d for d in differences if d not in unrendered and d not in times]
        print(f"{name}: {'same' if not rest else f'{len(rest)} differences'}"
              + (f"; {len(times)} timestamps moved by the adapter's clock shift" if times else "")
              + (f" (not rendered: {', '.join(names)})" if names else ""))
        for line in rest[:40]:
            print("   ", line)
        failed += bool(rest)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
