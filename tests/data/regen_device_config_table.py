"""Regenerate device_config_table.json: device ConfigMap documents as gopkg.in/yaml.v2 v2.4.0 decodes them.

Run from the repository root with the Go toolchain (the Go module proxy or a warm module cache):
    python tests/data/regen_device_config_table.py
It builds adapters/yamloracle (yaml.v2 decoding into a type of the shape of upstream's device Config) and
records, per document, whether Unmarshal fails (upstream then uses its default device config) or the values
the reference keeps. tests/api/test_device_config_yaml.py holds reference_impl/api/devices/config.py to the
recorded answers (without Go).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

VALUES = ["ten", "5", "-1", "1.5", "-1.5", "1e3", "yes", "y", "true", "off", "0x10", "08", "017", "0o17", "~", '""',
          "'7'", "[1]", "{a: 1}", "!!int 5", "!!str 5", "!!int x", "2147483648", "4294967296", "18446744073709551615",
          "18446744073709551616", "-9223372036854775809", "9223372036854775808", ".inf", "-.inf", ".nan", "1_000",
          "2001-12-14", "!!float 3", "!!bool yes", "!!null", "0b11", "+3", "1e19", "-1e300", "9.3e18", "abc def",
          "!custom 5", "null", "Null", "NULL", "", ".5", "5.", "1e400", "0x", "-0x10", "  7  ", "|\n    12",
          "!!timestamp 2001-12-14", "!!timestamp 2001-12-14T21:59:43.10-05:00", "!!timestamp 2001-12-14 21:59:43.10 -5",
          "!!timestamp x", "!!timestamp 5", "'2001-12-14'", "2001-12-14T21:59:43Z",
          "!!timestamp 2001-2-29", "!!timestamp 2000-2-29", "!!timestamp 2001-12-14t21:59:43,5+01:00",
          "!!timestamp 2001-12-14 21:59:43", "!!timestamp 2001-12-14T25:00:00Z", "!!timestamp 2001-13-01",
          "!!timestamp 2001-12-14T21:59:43", "!!timestamp 01-12-14", "!!timestamp 2001-12-14 21:59:43Z",
          "!!timestamp 2001-12-14T1:2:3.1234567891+25:00", "!!timestamp 2001-12-14T1:2:3.+01:00"]
FIELDS = [
    "nvidia:\n  resourceCountName: {v}\n",
    "nvidia:\n  deviceSplitCount: {v}\n",
    "nvidia:\n  deviceMemoryScaling: {v}\n",
    "nvidia:\n  overwriteEnv: {v}\n",
    "nvidia:\n  knownMigGeometries:\n  - models: [A100]\n    allowedGeometries:\n    - group: g\n      geometries:\n"
    "      - {{name: 1g, memory: 10, count: {v}}}\n",
    "nvidia:\n  knownMigGeometries:\n  - models: [A100, {v}]\n    allowedGeometries:\n    - group: g\n"
    "      geometries:\n      - name: 1g\n        memory: {v}\n",
    "vnpus:\n  hamiVnpuCore: {v}\n  configs: []\n",
    "vnpus:\n  configs:\n  - commonWord: X\n    aiCore: {v}\n",
    "vnpus:\n  configs:\n  - commonWord: X\n    memoryAllocatable: {v}\n",
    "vnpus:\n- commonWord: X\n  templates:\n  - name: t\n    memory: {v}\n",
    "vnpus:\n- commonWord: X\n  aiCPU: {v}\n",
    "nvidia: {v}\n",
    "vnpus: {v}\n",
    "nvidia:\n  other: {v}\nvnpus:\n  x: {v}\n  configs: []\n",
    "{v}",
]
EXTRA = [
    "", "---\n", "# c\n", "nvidia:\n  resourceCountName: a\n---\nnvidia: [\n", "nvidia:\n\tresourceCountName: a\n",
    "base: &b {resourceCountName: a, deviceSplitCount: 3}\nnvidia:\n  <<: *b\n  deviceSplitCount: 4\n",
    "nvidia:\n  <<: [{resourceCountName: a}, {resourceCountName: b, gpuMemoryFactor: 2}]\n",
    "nvidia:\n  <<: 5\n", "nvidia:\n  '<<': {resourceCountName: a}\n", "nvidia:\n  ? [a]\n  : 1\n",
    "vnpus:\n  ? [a]\n  : 1\n  configs: []\n", "vnpus:\n  k: {? [a] : 1}\n  configs: []\n",
    "vnpus:\n  k: !!int zz\n  configs: []\n", "vnpus:\n  configs:\n  - ~\n", "vnpus: []\n", "vnpus: {}\n",
    "nvidia:\n  resourceCountName: a\n  resourceCountName: b\n", "nvidia: &a\n  x: *a\n",
    "nvidia:\n  knownMigGeometries:\n  - ~\n", "nvidia:\n  knownMigGeometries: [1]\n",
    "nvidia:\n  resourceCountName: !!binary aGk=\n", "nvidia:\n  resourceCountName: !!binary %%%\n",
    "vnpus:\n  hamiVnpuCore: true\n", "vnpus:\n- !!map {commonWord: X}\n", "nvidia: !!map\n  resourceCountName: a\n",
]


def kept(config: dict) -> dict:
    """The decoded values the reference keeps, in the shape tests/api/test_device_config_yaml.py builds."""
    n, v = config["Nvidia"], config["VNPUs"]
    mig = [[m["Models"] or [], [[g["Group"], [[i["Name"], i["Memory"], i["Count"]] for i in g["Instances"] or []]]
                                for g in m["Groups"] or []]] for m in n["MigModels"] or []]
    kinds = [[k["CommonWord"], k["ChipName"], k["ResourceName"], k["ResourceMemoryName"], k["MemoryAllocatable"],
              k["MemoryCapacity"], k["AICore"], k["AICPU"],
              [[t["Name"], t["Memory"], t["AICore"], t["AICPU"]] for t in k["Templates"] or []]] for k in v["Kinds"] or []]
    return {"nvidia": [n["CountName"], n["MemoryName"], n["CoreName"], n["MemoryPercentageName"], n["SplitCount"],
                       n["MemoryFactor"], mig],
            "vnpus": [v["HamiCore"], kinds]}


def main() -> None:
    root = Path(__file__).resolve().parents[2]
    texts = [template.format(v=value) for template in FIELDS for value in VALUES] + EXTRA
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "yamloracle"
        subprocess.run(["go", "build", "-o", str(binary), "."], cwd=root / "adapters" / "yamloracle", check=True,
                       env={**os.environ, "GOFLAGS": "-mod=mod"})
        done = subprocess.run([str(binary)], input="".join(json.dumps(t) + "\n" for t in texts), capture_output=True,
                              text=True, check=True)
    cases = []
    for text, line in zip(texts, done.stdout.splitlines(), strict=True):
        answer = json.loads(line)
        if answer.get("unrepresentable"):
            continue
        cases.append({"text": text, "error": answer["error"]} if "error" in answer
                     else {"text": text, "kept": kept(answer["config"])})
    table = {"source": "gopkg.in/yaml.v2 v2.4.0 Unmarshal into the shape of upstream's device Config", "cases": cases}
    out = root / "tests" / "data" / "device_config_table.json"
    out.write_text(json.dumps(table, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(cases)} cases written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
