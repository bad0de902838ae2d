"""Regenerate cel_table.json: every expression below, on every device below, as Kubernetes v1.36.1 judges it.

Run from the repository root with the Go toolchain (the Go module proxy or a warm module cache):
    python tests/data/regen_cel_table.py
It builds adapters/celoracle (Kubernetes' own DRA CEL compiler, k8s.io/dynamic-resource-allocation v0.36.1) and
records, per case, the compile error, the runtime error or the boolean. tests/test_dra_cel.py holds
reference_impl/util/dra_cel.py to the recorded answers (without Go).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

D = "gpu.example.com"
DEVICES = {
    "a100": {"driver": D, "allowMultipleAllocations": False,
             "attributes": {"model": {"string": "a100"}, "cores": {"int": 8}, "healthy": {"bool": True},
                            "driverVersion": {"version": "1.2.3"}, "other.example.com/zone": {"string": "z1"},
                            "index": {"int": -3}},
             "capacity": {"memory": "40Gi", "other.example.com/slots": "4", "power": "250500m"}},
    "t4": {"driver": D, "allowMultipleAllocations": True,
           "attributes": {"model": {"string": "T4-pcie"}, "cores": {"int": 9223372036854775807},
                          "healthy": {"bool": False}, "driverVersion": {"version": "2.0.0-rc.1+build.5"},
                          "index": {"int": 0}},
           "capacity": {"memory": "16Gi"}},
}
A = f'device.attributes["{D}"]'
C = f'device.capacity["{D}"]'
EXPRESSIONS = [
    # the old subset
    f'device.driver == "{D}"', f'{A}.model == "a100"', f'{A}["cores"] >= 8 && {A}.healthy', f'!{A}.healthy',
    f'"other.example.com" in device.attributes', f'{A}.model == 4', f'false && {A}.missing', f'true || {A}.missing',
    f'{A}.missing', f'device.attributes["none.io"].x == 1', f'device.attributes["none.io"] == {{}}',
    f'{A}.healthy', f'{A}.model', f'{A}.cores',
    # arithmetic and ints
    f'{A}.cores + 1 > 8', f'{A}.cores * 2 == 16', f'{A}.cores / 0 == 1', f'{A}.cores % 3 == 2', f'{A}.index / 2 == -1',
    f'{A}.index % 2 == -1', f'-{A}.index == 3', '-9223372036854775808 < 0', '9223372036854775807 + 1 > 0',
    '-9223372036854775807 - 2 < 0', '9223372036854775807 * 2 > 0', '-(-9223372036854775807 - 1) > 0',
    '(-9223372036854775807 - 1) / -1 > 0', '(-9223372036854775807 - 1) % -1 == 0', '7 / 2 == 3', '-7 / 2 == -3',
    '-7 % 2 == -1', '1u + 2u == 3u', '0u - 1u == 0u', '1u == 1', '1 == 1.0', 'dyn(1) == 1.0', 'dyn(1) < 1.5',
    f'{A}.cores == 8.0', f'{A}.cores < 8.5', f'{A}.cores > 8u', '2.5 * 2.0 == 5.0', '1.0 / 0.0 > 0.0', '0x10 == 16',
    '1e3 == 1000.0', '"a" < "b"', '"a" + "b" == "ab"', '[1, 2] + [3] == [1, 2, 3]', 'true < false', 'b"ab" < b"b"',
    'int("12") == 12', 'int("x") == 1', 'int(2.9) == 2', 'int(-2.9) == -2', 'uint(-1) == 1u', 'double(2) == 2.0',
    'string(12) == "12"', 'string(1.5) == "1.5"', 'string(true) == "true"', 'bool("true")', 'bool("maybe")',
    'int(1e19) > 0', 'string(b"ab") == "ab"', 'type(1) == int', 'type("a") == string', 'null == null',
    f'{A}.model != null', 'size("héllo") == 5', 'size([1, 2]) == 2', 'size({"a": 1}) == 1', 'size(b"ab") == 2',
    # ternary and logic
    f'{A}.healthy ? {A}.cores > 4 : false', f'({A}.cores > 100 ? "big" : "small") == "small"',
    f'{A}.missing || true', f'{A}.missing && false', f'{A}.missing || false', f'{A}.model || true',
    f'{A}.cores > 4 && {A}.model', '1 ? true : false', f'{A}.missing ? true : true',
    # strings
    f'{A}.model.startsWith("a")', f'{A}.model.endsWith("00")', f'{A}.model.contains("10")',
    f'{A}.model.matches("^[a-z][0-9]+$")', f'{A}.model.matches("(")', f'{A}.model.size() == 4',
    f'{A}.model.lowerAscii() == "t4-pcie"', f'{A}.model.upperAscii() == "A100"', f'{A}.model.indexOf("0") == 2',
    f'{A}.model.lastIndexOf("0") == 3', f'{A}.model.charAt(1) == "1"', f'{A}.model.charAt(10) == ""',
    f'{A}.model.substring(1, 3) == "10"', f'{A}.model.substring(2) == "00"', f'{A}.model.substring(3, 1) == ""',
    f'{A}.model.replace("0", "x") == "a1xx"', f'{A}.model.replace("0", "x", 1) == "a1x0"',
    f'{A}.model.split("-") == ["T4", "pcie"]', f'{A}.model.split("-").size() == 1', f'{A}.model.split("", 2) == ["a", "100"]',
    f'"  {D}  ".trim() == device.driver', f'["a", "b"].join("-") == "a-b"', f'["a", "b"].join() == "ab"',
    '"abc".reverse() == "cba"', '"a\\"b".size() == 3', "'it''s' == 'its'", r'"\u00e9" == "é"', "r'\\d' == '\\\\d'",
    f'{A}.model.find("[0-9]+") == "100"', f'{A}.model.find("x") == ""', f'{A}.model.findAll("[0-9]") == ["1", "0", "0"]',
    f'{A}.model.findAll("[0-9]", 2) == ["1", "0"]', f'"{D}".indexOf("example", 5) == 4', '"abc".indexOf("") == 0',
    '"%s-%d".format(["a", 1]) == "a-1"', '"ab".quote() == "\\"ab\\""', f'{A}.model.startsWith(1)',
    # lists and maps
    f'{A}.cores in [8, 9]', f'{A}.model in ["a100", "h100"]', f'"model" in {A}', f'"cores" in {A} && {A}.cores > 2',
    '[1, 2, 3].all(x, x > 0)', '[1, 2, 3].exists(x, x > 2)', '[1, 2, 3].exists_one(x, x > 1)',
    '[1, 2, 3].map(x, x * 2) == [2, 4, 6]', '[1, 2, 3].filter(x, x % 2 == 1) == [1, 3]',
    '[1, 2, 3].map(x, x > 1, x * 10) == [20, 30]', f'{A}.all(k, k != "")', f'device.attributes.exists(d, d == "{D}")',
    f'{A}.exists(k, k == "model")', 'device.attributes.all(d, device.attributes[d].size() > 0)',
    f'device.capacity.exists_one(d, d == "{D}")', '[0, 1].all(x, 1 / x > 0)', '[0, 1].exists(x, 1 / x > 0)',
    '{"a": 1, "b": 2}.all(k, k != "c")', '[1, 2][1] == 2', '[1, 2][2] == 2', '{"a": 1}["b"] == 1', '{"a": 1}.a == 1',
    '[1, "a"] == [1, "a"]', '{"a": 1, "b": "x"}.size() == 2', '[[1], [2]].size() == 2', '[1, 2, 3].sum() == 6',
    '[3, 1, 2].min() == 1', '[3, 1, 2].max() == 3', '[1, 2, 3].isSorted()', '[1, 3, 2].isSorted()', '[].sum() == 0',
    '[].min() == 0', '[1, 2, 1].indexOf(1) == 0', '[1, 2, 1].lastIndexOf(1) == 2', '[3, 1, 2].sort() == [1, 2, 3]',
    '[1, 1, 2].distinct() == [1, 2]', '[[1], [2, 3]].flatten() == [1, 2, 3]', 'lists.range(3) == [0, 1, 2]',
    '[1, 2, 3].slice(1, 2) == [2]', '[1, 2].reverse() == [2, 1]', '[1, 2, 3].first().value() == 1',
    'sets.contains([1, 2, 3], [2, 3])', 'sets.equivalent([1, 2], [2, 1, 1])', 'sets.intersects([1], [2])',
    'has(device.attributes.foo)', f'has({A}.model)', f'has({A}.missing)', 'has(device.driver)',
    'has(device.attributes)', 'has({"a": 1}.a)',
    'cel.bind(x, 2, x * x == 4)', '[1, 2].all(i, v, v > i)', '{"a": 1}.exists(k, v, v == 1)',
    '[1, 2].transformList(i, v, v * 2) == [2, 4]',
    # versions
    f'{A}.driverVersion.isGreaterThan(semver("1.0.0"))', f'{A}.driverVersion.isLessThan(semver("2.0.0"))',
    f'{A}.driverVersion.compareTo(semver("1.2.3")) == 0', f'{A}.driverVersion == semver("1.2.3")',
    f'{A}.driverVersion.major() == 1', f'{A}.driverVersion.minor() == 2', f'{A}.driverVersion.patch() == 3',
    'semver("2.0.0-rc.1").isLessThan(semver("2.0.0"))', 'semver("2.0.0-rc.1") == semver("2.0.0-rc.1+other")',
    'semver("2.0.0-alpha.10").isGreaterThan(semver("2.0.0-alpha.9"))', 'semver("2.0.0-alpha").isLessThan(semver("2.0.0-alpha.1"))',
    'semver("1.0.0-2").isLessThan(semver("1.0.0-a"))', 'isSemver("1.2.3")', 'isSemver("v1.2.3")', 'isSemver("1.2")',
    'isSemver("1.2", true)', 'semver("v1.2", true) == semver("1.2.0")', 'semver("01.2.3") == semver("1.2.3")',
    'semver("bad") == semver("1.0.0")', f'{A}.driverVersion == "1.2.3"', f'{A}.driverVersion > semver("1.0.0")',
    # quantities
    f'{C}.memory.isGreaterThan(quantity("20Gi"))', f'{C}.memory.compareTo(quantity("40Gi")) == 0',
    f'{C}.memory == quantity("40Gi")', f'{C}.memory == quantity("42949672960")', f'{C}.memory.isLessThan(quantity("1Ti"))',
    f'{C}.memory.asInteger() == 42949672960', f'{C}.power.isInteger()', f'{C}.power.asApproximateFloat() > 250.0',
    f'{C}.power.asInteger() > 0', f'{C}.memory.sign() == 1', 'quantity("-1").sign() == -1',
    f'{C}.memory.add(quantity("1Gi")) == quantity("41Gi")', f'{C}.memory.add(1) == quantity("42949672961")',
    f'{C}.memory.sub(quantity("40Gi")).isInteger()', f'{C}.memory.sub(1).sign() == 1',
    'isQuantity("1.5Gi")', 'isQuantity("1.5 Gi")', 'quantity("1.5Gi") == quantity("1536Mi")', 'quantity("x").sign() == 1',
    'quantity("1k") == quantity("1000")', 'quantity("1e3") == quantity("1k")', 'quantity("9223372036854775807").add(1).isInteger()',
    f'device.capacity["other.example.com"].slots.isGreaterThan(quantity("3"))', f'{C}.memory > quantity("1")',
    f'{C}.memory == 42949672960', f'{C}.missing.isInteger()',
    # the device itself
    'device.allowMultipleAllocations', '!device.allowMultipleAllocations', 'device.foo == 1', 'device.driver.size() > 3',
    'device.driver > 1', 'device.driver == 1', 'device.driver', 'device.attributes', '1', '"true"', 'x == 1',
    'device.attributes["a"]["b"]["c"] == 1', 'unknownFunc(1)', f'{A}.model.noSuchMethod()', '1 +', '[1, "a"].size() == 2',
    'device["driver"] == "x"', 'optional.of(1).hasValue()', f'{A}.?model.orValue("") == "a100"',
    'url("https://x.io/p").getHost() == "x.io"', 'isURL("nope")', 'ip("10.0.0.1").family() == 4', 'cidr("10.0.0.0/8").containsIP("10.1.2.3")',
    'timestamp("2024-01-01T00:00:00Z") < timestamp("2025-01-01T00:00:00Z")', 'duration("1h") > duration("30m")',
    '"x".matches("[")', f'{A}.model.matches(device.driver)',
]


def main() -> None:
    root = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "celoracle"
        env = {**os.environ, "GOFLAGS": (os.environ.get("GOFLAGS", "") + " -mod=mod").strip()}
        subprocess.run(["go", "build", "-o", str(binary), "."], cwd=root / "adapters/celoracle", env=env, check=True)
        lines = [json.dumps({"expression": e, "device": DEVICES[name]}) for name in DEVICES for e in EXPRESSIONS]
        out = subprocess.run([str(binary)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    answers = [json.loads(line) for line in out.stdout.splitlines()]
    cases = []
    for (name, expression), answer in zip([(n, e) for n in DEVICES for e in EXPRESSIONS], answers, strict=True):
        assert answer["expression"] == expression
        cases.append({"device": name, **answer})
    table = {"source": "k8s.io/dynamic-resource-allocation v0.36.1 cel (cel-go v0.26.0), consumable capacity on",
             "devices": DEVICES, "cases": cases}
    (root / "tests/data/cel_table.json").write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
