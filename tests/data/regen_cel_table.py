"""Regenerate cel_table.json: every expression below, on every device below, as Kubernetes v1.36.1 judges it.

Run from the repository root with the Go toolchain (the Go module proxy or a warm module cache):
    python tests/data/regen_cel_table.py
It builds adapters/celoracle (Kubernetes' own DRA CEL compiler, k8s.io/dynamic-resource-allocation v0.36.1) and
records, per case, what the API server says of the selector as a new one (admission_error, or max_cost, the
estimated cost) and what the scheduler does with it (the compile error, or the result or the runtime error, and
actual_cost, the cost counted). The expressions here were the first table; cel_expressions_libraries.py holds
the later ones (every library of the environment), which run on all three devices. The oracle runs RUNS times:
Go iterates maps in a random order, so where runs disagree (an `exists` over a map stops at a different key) the
case is marked order_dependent with every value seen. tests/test_dra_cel.py holds the reference to the answers.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cel_expressions_libraries import LIBRARIES, random_library_expressions  # noqa: E402

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
    "edge": {"driver": D, "allowMultipleAllocations": True,
             "attributes": {"model": {"string": "gpu-0"}, "cores": {"int": 4}, "healthy": {"bool": True},
                            "driverVersion": {"version": "1.0.0"}, "addr": {"string": "10.0.0.5"},
                            "subnet": {"string": "10.0.0.0/24"},
                            "endpoint": {"string": "https://dev.example.com:8443/api?v=1"},
                            "built": {"string": "2024-05-01T12:00:00Z"}, "ttl": {"string": "90s"}},
             "capacity": {"memory": "8Gi"}},
}
FIRST_DEVICES = ("a100", "t4")  # the first table's expressions run on these
A = f'device.attributes["{D}"]'
C = f'device.capacity["{D}"]'
EXPRESSIONS = [
    # the old subset
    f'device.driver == "{D}"', f'{A}.model == "a100"', f'{A}["cores"] >= 8 && {A}.healthy', f'!{A}.healthy',
    '"other.example.com" in device.attributes', f'{A}.model == 4', f'false && {A}.missing', f'true || {A}.missing',
    f'{A}.missing', 'device.attributes["none.io"].x == 1', 'device.attributes["none.io"] == {}',
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
    f'"  {D}  ".trim() == device.driver', '["a", "b"].join("-") == "a-b"', '["a", "b"].join() == "ab"',
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
    'device.capacity["other.example.com"].slots.isGreaterThan(quantity("3"))', f'{C}.memory > quantity("1")',
    f'{C}.memory == 42949672960', f'{C}.missing.isInteger()',
    # the device itself
    'device.allowMultipleAllocations', '!device.allowMultipleAllocations', 'device.foo == 1', 'device.driver.size() > 3',
    'device.driver > 1', 'device.driver == 1', 'device.driver', 'device.attributes', '1', '"true"', 'x == 1',
    'device.attributes["a"]["b"]["c"] == 1', 'unknownFunc(1)', f'{A}.model.noSuchMethod()', '1 +', '[1, "a"].size() == 2',
    'device["driver"] == "x"', 'optional.of(1).hasValue()', f'{A}.?model.orValue("") == "a100"',
    'url("https://x.io/p").getHost() == "x.io"', 'isURL("nope")', 'ip("10.0.0.1").family() == 4', 'cidr("10.0.0.0/8").containsIP("10.1.2.3")',
    'timestamp("2024-01-01T00:00:00Z") < timestamp("2025-01-01T00:00:00Z")', 'duration("1h") > duration("30m")',
    '"x".matches("[")', f'{A}.model.matches(device.driver)',
    # more edges
    '[1, 2] == [1.0, 2.0]', 'dyn([1, 2]) == [1.0, 2]', '{1: "a"}[1.0] == "a"', '{1: "a"}[1u] == "a"',
    '[1, 2][1u] == 2', '[1, 2][-1] == 1', '[1, 2][dyn(1.0)] == 2', '1 in [1.0]', 'dyn(1u) in [1]',
    '"a" in {"a": 1}', '2 in {"a": 1}', 'dyn("a") in dyn([1, 2])', '[1, 2].exists_one(x, x / 0 == 1)',
    '[1, 2].exists(x, x / (x - 1) > 0)', '[1, 2].all(x, [x].all(y, y == x))', '[[1, 2], [3]].map(l, l.size()) == [2, 1]',
    '{"a": {"b": 1}}.a.b == 1', 'has({"a": {"b": 1}}.a.b)', 'has({"a": {"b": 1}}.a.c)', 'has({"a": 1}.b)',
    f'has({A}.model) && {A}.model.size() > 0',
    f'has({C}.memory)', 'has(device.capacity.nope)', f'has({A}.model.x)',
    'size("\u00e9\u00e9") == 2', 'size(b"\xc3\xa9") == 2', '"\xff" == "\u00ff"', 'b"\xff".size() == 1',
    '"abc"[0] == "a"', '"a" * 2 == "aa"', '1.5 % 1.0 == 0.5', '5u / 2u == 2u', '5u % 0u == 0u', '-1u == 1u',
    '-(1u) == 1u', '0.1 + 0.2 == 0.3', '0.1 + 0.2 > 0.3', 'double("1e400") > 0.0', 'double("nan") != double("nan")',
    'double("0x1.8p1") == 3.0', 'double("1_000.5") == 1000.5', 'double("0x1p-1075") == 0.0', 'double("+nan") != 0.0',
    'double("1_") == 1.0', 'double("-Infinity") < 0.0', 'double("0x1p1024") > 0.0', 'double("0x1") == 1.0',
    'int(9.3e18) > 0', 'int(-9.3e18) < 0', 'uint(1.8e19) > 0u', 'uint(2.0e19) > 0u', 'string(1e21) == "1e+21"',
    'string(0.000001) == "1e-06"', 'string(100.0) == "100"', 'string(-0.0) == "-0"', 'string(1u) == "1"',
    'int("-9223372036854775808") < 0', 'int("9223372036854775808") > 0', 'int(" 1") == 1', 'uint("-1") == 0u',
    'bool("TRUE") && !bool("f")', 'type(1u) == uint', 'type([1]) == list', 'type({"a": 1}) == map',
    'type(null) == null_type', f'type({A}.driverVersion) == type(semver("1.0.0"))',
    'type(quantity("1")) == type(quantity("2"))', 'int == type(1)', 'dyn(1) == dyn(1u)', 'dyn(1.0) == dyn(1u)',
    '[1, 2, 3].sum() == 6.0', '[1.5, 2.5].sum() == 4.0', '[1u, 2u].sum() == 3u', '["a"].sum() == "a"',
    '[1, 2.5].max() == 2.5', 'dyn([1, 2.5]).max() == 2.5', '["b", "a"].min() == "a"', '[true, false].isSorted()',
    '[1, 1].isSorted()', '["a", "b"].indexOf("b") == 1', '[1, 2].lastIndexOf(3) == -1', '[[1], [1]].distinct() == [[1]]',
    '[1, [2, [3]]].flatten() == [1, 2, [3]]', 'dyn([1, [2, [3]]]).flatten(2) == [1, 2, 3]', '[1].flatten(-1) == [1]',
    '[3, 1].sort() == [1, 3]', '["b", "a"].sort() == ["a", "b"]', 'dyn([1, "a"]).sort() == [1]', '[1, 2].slice(2, 2) == []',
    '[1, 2].slice(1, 3) == [2]', '[1, 2].slice(2, 1) == []', 'lists.range(0) == []', 'sets.contains([], [])',
    'sets.contains([1], [1.0])', 'sets.equivalent([1], [1u])', 'sets.intersects([[1]], [[1]])',
    '"abc".charAt(3) == ""', '"abc".indexOf("c", 3) == -1', '"abc".indexOf("c", 4) == -1', '"abcabc".lastIndexOf("b", 3) == 1',
    '"abcabc".lastIndexOf("b", 6) == 4', '"".lastIndexOf("") == 0', '"abc".lastIndexOf("", 1) == 1', '"héllo".indexOf("l") == 2',
    '"héllo".substring(1, 2) == "é"', '"héllo".charAt(1) == "é"', '"HÉllo".lowerAscii() == "hÉllo"', '"a,b,,c".split(",") == ["a", "b", "", "c"]',
    '"a,b,c".split(",", 2) == ["a", "b,c"]', '"a,b".split(",", 0) == []', '"a,b".split(",", -1) == ["a", "b"]',
    '"aaa".replace("a", "b", 0) == "aaa"', '"aaa".replace("", "-") == "-a-a-a-"', '"\t x \n".trim() == "x"',
    '[].join(",") == ""', '"abc".matches("b")', '"abc".matches("^b")', 'matches("abc", "c$")', '"a.b".matches("a\\\\.b")',
    '"a1b22".findAll("\\\\d+") == ["1", "22"]', '"abc".findAll("x") == []', '"abc".findAll("", 2) == ["", ""]',
    '"abc".find("(") == ""', '"aaa".findAll("a", 0) == []', '"AbC".matches("(?i)abc")',
    'semver("1.2.3").compareTo(semver("1.2.4")) == -1', 'semver("1.2.3") != semver("1.2.4")', 'semver("1.2.3", false) == semver("1.2.3")',
    'semver("v1", true).major() == 1', 'semver("1.02.3", true) == semver("1.2.3")', 'semver("1.2.3-01") == semver("1.2.3")',
    'semver("1.2.3-rc.1").isLessThan(semver("1.2.3-rc.1.1"))', 'semver("1.2.3+b1") == semver("1.2.3+b2")', 'isSemver("1.2.3-")',
    'isSemver("1.2.3+")', 'isSemver("1.2.3-a..b")', 'isSemver(" 1.2.3")', 'isSemver("9999999999999999999.0.0")', 'isSemver("1.2.3-x-y.z")',
    'semver("1.2.3").major() == semver("1.9.9").major()', 'semver("1.2.3") == 1', f'{A}.driverVersion.isGreaterThan(1)',
    'quantity("1Ki") == quantity("1024")', 'quantity("1.5").isInteger()', 'quantity("0.5").asInteger() == 0', 'quantity("1Ei").isInteger()',
    'quantity("8Ei").isInteger()', 'quantity("1000m").isInteger()', 'quantity("1000m").asInteger() == 1', 'quantity("100m").asApproximateFloat() == 0.1', 'quantity("1").add(quantity("500m")) == quantity("1.5")',
    'quantity("1").sub(2).isLessThan(quantity("0"))', 'quantity("1").compareTo(quantity("1000m")) == 0', 'quantity("1") == quantity("1000m")',
    'quantity(" 1") == quantity("1")', 'quantity("1.") == quantity("1")', 'quantity(".5") == quantity("500m")', 'isQuantity("1e")',
    'isQuantity("1k1")', 'isQuantity("")', 'isQuantity("1KiB")', 'quantity("1") == semver("1.0.0")',
    'quantity("1").sub(-9223372036854775808).isInteger()', 'quantity("2").sub(-9223372036854775808).isLessThan(quantity("0"))',
    'quantity("1") == quantity("1").add(0)', 'quantity("1").add(0) == quantity("1")', 'quantity("2").sub(1) == quantity("1").add(0)',
    f'{C}.memory == {C}.memory.sub(0)', f'{C}.memory.sub(0) == {C}.memory', 'quantity("1").add(0) in [quantity("1")]',
    'quantity("1") in [quantity("1").add(0)]', 'string(1e10) == "1e+10"', 'string(123456.0) == "123456"', 'string(1234567.0) == "1.234567e+06"',
    'string(0.0001) == "0.0001"', 'string(-2.5e7) == "-2.5e+07"',
    '(' * 249 + 'true' + ')' * 249, '(' * 250 + 'true' + ')' * 250, '[' * 251 + ']' * 251 + ' == []',
    '[1 / 0].distinct() == []', f'[{A}.missing].sort() == []', f'{A}.exists(k, v, k == "cores" && v > 4)',
    f'{C}.memory.isGreaterThan({C}.memory.sub(1))',
    'device.capacity.all(d, device.capacity[d].all(n, device.capacity[d][n].isGreaterThan(quantity("1"))))',
    f'{A}.exists(n, n == "cores" && {A}[n] > 4)',
    f'{A}.filter(n, n.startsWith("c")) == ["cores"]', f'{A}.map(n, n).size() >= 5',
    'device.driver.split(".")[0] == "gpu"', 'device.driver.endsWith(".example.com") ? device.driver.startsWith("gpu") : false',
    f'cel.bind(a, {A}, a.model.size() > 1 && a.cores >= 0)',
    'cel.bind(x, 1, cel.bind(x, x + 1, x == 2))', f'{A}.cores + 1u > 0',
    f'{A}.cores + 0.5 > 0.0', f'{A}.model + 1 == ""',
    f'[{A}.cores, 1].size() == 2', '[device.driver, 1].size() == 2',
    '{device.driver: 1, "x": 2}.size() == 2', '{"x": 1, "x": 2}.size() == 1', '{"x": 1, dyn("x"): 2}.size() == 1',
    '!(1 == 2) && !!true', '(1 < 2) == true', 'true == dyn(1)', 'null == dyn(null)', 'null != 1', '[null] == [null]',
    f'{A}.model == null', '1 < 2 < 3', '1 == 1 == true', '"a" < 1',
    'true && false || true', 'false || true && false', 'true ? false : true ? true : false',
    '-(1) == -1', '--1 == 1', '!!!false', '- -9223372036854775807 > 0',
    '9223372036854775807 == 9223372036854775807', '9223372036854775808 > 0', '18446744073709551615u > 0u', '18446744073709551616u > 0u',
    '0x7fffffffffffffff > 0', '-0x8000000000000000 < 0', '1e-3 == 0.001', '.5 == 0.5', '5. == 5.0',
    '"""multi\nline""".size() == 10', "'''x''' == 'x'", 'r"\\n".size() == 2', '"\\x41" == "A"', '"\\101" == "A"', '"\\z" == "z"',
    'b"a" == b"a"', 'b"ab".size() == 2', 'bytes("é").size() == 2', 'string(b"\\xff") == "x"',
    'in == 1', 'device.in == 1', 'if == 1', 'device.attributes.all(for, true)', 'int.foo == 1',
    f'{A}.model.startsWith()', 'size() == 0', 'size(1) == 1', 'size(1, 2) == 1',
    'matches("a") == true', '[1, 2].all(x)', '[1, 2].all(1, true)', '[1, 2].map(x, y, x) == []', 'has(device)', 'has(1)',
    f'has({A})', '[1][0', '(1 == 1', '1 == 1)', '', '   ', 'true true',
    f'{A}.model.lowerAscii("x") == ""', '"a".contains(dyn(1))',
    'dyn("abc").startsWith("a")', 'dyn(1).startsWith("a")', 'dyn(semver("1.0.0")).major() == 1', 'dyn(quantity("1")).isInteger()',
    f'{A}.cores.isInteger()', f'{A}.model.major() == 1',
    '[].filter(x, x != 1).join("-") == ""', '[].sort().join("-") == ""',
    # two-variable comprehensions
    '[1, 2].exists(i, v, i == 1 && v == 2)', '[1, 2].existsOne(i, v, v > 1)', '[1, 2].exists_one(i, v, v > 0)',
    '{"a": 1, "b": 2}.all(k, v, k.size() == 1 && v > 0)', '{"a": 1}.transformMap(k, v, v + 1) == {"a": 2}',
    '[1, 2, 3].transformList(i, v, i > 0, v * 10) == [20, 30]', '[5].transformMap(i, v, v) == {0: 5}',
    '{"a": 1, "b": 2}.transformList(k, v, k).size() == 2', '{"a": 1}.transformMap(k, v, v > 5, v) == {}',
    f'{A}.exists(k, v, k == "cores" && v == 8)', 'device.attributes.all(d, names, names.size() > 0)',
    f'{A}.transformMap(k, v, k.size()).size() > 3', '[1, 2].all(x, x, true)', '[1, 2].existsOne(x, true)',
    '[0, 1].all(i, v, 1 / v > 0)', '[0, 1].exists(i, v, 1 / v > 0)', '{"a": 1}.transformMapEntry(k, v, {v: k}) == {1: "a"}',
    '[1, 2].all(i, v, v)', '"ab".all(i, v, true)',
    # optional types
    f'{A}.?model.hasValue()', f'{A}.?missing.hasValue()', f'{A}.?missing.orValue("x") == "x"', f'{A}.?cores.value() == 8',
    f'{A}.?missing.value() == 1', 'device.attributes.?nodomain.hasValue()', 'device.attributes.?nodomain.?x.hasValue()',
    f'device.attributes[?"{D}"].?model.orValue("") == "a100"', 'optional.none().hasValue()', 'optional.of(1) == optional.of(1)',
    'optional.none() == optional.none()', 'optional.of(1) != optional.none()', 'optional.ofNonZeroValue(0).hasValue()',
    'optional.ofNonZeroValue("").hasValue()', 'optional.ofNonZeroValue([1]).hasValue()', 'optional.none().or(optional.of(2)).value() == 2',
    'optional.of(1).or(optional.of(2)).value() == 1', '[1, 2][?5].orValue(0) == 0', '[1, 2][?1].value() == 2', '{"a": 1}[?"a"].value() == 1',
    '[].first().hasValue()', '[1, 2].last().value() == 2', f'{A}.?model', 'device.?driver.value() == "gpu.example.com"',
    'device.?foo.hasValue()', 'optional.of(1).value() == "a"', 'optional.of(1).orValue("a") == 1', '[?optional.of(1)].size() == 1',
    '{?"a": optional.none()}.size() == 0', 'optional.of(2).optMap(x, x * 2).value() == 4', f'{C}.?memory.value().isInteger()',
    f'{A}.?model.value().startsWith("a")', 'optional.of(1).hasValue() && optional.none().orValue(true)',
]


def random_expressions(seed: int, count: int) -> list[str]:
    """Random boolean expressions over the device, its attributes and capacities and the libraries (typed
    loosely on purpose: many do not compile, many fail at run time). Seeded: the same list every run."""
    rnd = random.Random(seed)
    atoms = {
        "int": ["0", "1", "-3", "8", "9223372036854775807", f"{A}.cores", f"{A}.index", "size(device.driver)", "[1, 2].size()"],
        "uint": ["0u", "2u", "18446744073709551615u"],
        "double": ["0.5", "-2.0", "1e10", f"double({A}.cores)"],
        "string": ['"a100"', '"T4-pcie"', '""', "device.driver", f"{A}.model", f"string({A}.cores)", f"{A}.model.lowerAscii()"],
        "bool": ["true", "false", f"{A}.healthy", "device.allowMultipleAllocations", f'has({A}.model)', f'"model" in {A}'],
        "any": [f"{A}.model", f"{A}.cores", f"{A}.healthy", f"{A}.missing", 'device.attributes["other.example.com"].zone', f"{A}.driverVersion"],
        "semver": [f"{A}.driverVersion", 'semver("1.2.3")', 'semver("2.0.0-rc.1")'],
        "quantity": [f"{C}.memory", 'quantity("1Gi")', 'quantity("500m")', f"{C}.power"],
        "list": ["[1, 2, 3]", '["a", "b"]', f'{A}.model.split("-")', "lists.range(3)"],
    }
    def expr(t: str, d: int = 0) -> str:
        if d > 3 or rnd.random() < 0.3:
            pool = atoms.get(t) or atoms[rnd.choice(list(atoms))]
            return rnd.choice(pool)
        if t == "bool":
            choices = [
              lambda: f"{expr('int', d+1)} {rnd.choice(['<','<=','==','!=','>','>='])} {expr(rnd.choice(['int','double','uint','any']), d+1)}",
              lambda: f"{expr('string', d+1)} {rnd.choice(['==','!=','<'])} {expr(rnd.choice(['string','any']), d+1)}",
              lambda: f"({expr('bool', d+1)} {rnd.choice(['&&','||'])} {expr('bool', d+1)})",
              lambda: f"!{expr('bool', d+1)}",
              lambda: f"{expr('string', d+1)}.{rnd.choice(['startsWith','endsWith','contains','matches'])}({expr('string', d+1)})",
              lambda: f"{expr('semver', d+1)}.{rnd.choice(['isGreaterThan','isLessThan'])}({expr('semver', d+1)})",
              lambda: f"{expr('quantity', d+1)}.{rnd.choice(['isGreaterThan','isLessThan'])}({expr('quantity', d+1)})",
              lambda: f"{expr('quantity', d+1)}.isInteger()",
              lambda: expr('list', d+1) + "." + rnd.choice(['all','exists','exists_one']) + "(x, " + rnd.choice(['x == 1', 'x == "a"', 'size(string(x)) > 0', 'x != null']) + ")",
              lambda: f"{expr('any', d+1)} in {expr('list', d+1)}",
              lambda: f"({expr('bool', d+1)} ? {expr('bool', d+1)} : {expr(rnd.choice(['bool','any']), d+1)})",
              lambda: f"{expr('any', d+1)} == {expr(rnd.choice(list(atoms)), d+1)}",
              lambda: f"isSemver({expr('string', d+1)})",
              lambda: f"{expr('list', d+1)}.isSorted()",
            ]
            return rnd.choice(choices)()
        if t == "int":
            return rnd.choice([lambda: f"({expr('int', d+1)} {rnd.choice(['+','-','*','/','%'])} {expr(rnd.choice(['int','any']), d+1)})",
                               lambda: f"{expr('string', d+1)}.size()", lambda: f"{expr('semver', d+1)}.major()",
                               lambda: f"{expr('quantity', d+1)}.compareTo({expr('quantity', d+1)})",
                               lambda: f"{expr('string', d+1)}.indexOf({expr('string', d+1)})", lambda: f"int({expr(rnd.choice(['string','double','uint']), d+1)})"])()
        if t == "string":
            return rnd.choice([lambda: f"{expr('string', d+1)} + {expr(rnd.choice(['string','any']), d+1)}",
                               lambda: f"{expr('string', d+1)}.substring({rnd.randint(-1, 4)})", lambda: f"{expr('string', d+1)}.upperAscii()",
                               lambda: expr('list', d+1) + '.join("-")', lambda: f"string({expr(rnd.choice(['int','double','bool','uint']), d+1)})",
                               lambda: f"{expr('string', d+1)}.charAt({rnd.randint(0, 5)})", lambda: expr('string', d+1) + '.replace("a", "b")'])()
        if t == "list":
            return rnd.choice([lambda: f"{expr('list', d+1)}.map(x, x)", lambda: f"{expr('list', d+1)}.filter(x, x != 1)",
                               lambda: f"{expr('list', d+1)} + {expr('list', d+1)}", lambda: f"{expr('list', d+1)}.sort()",
                               lambda: f"[{expr('int', d+1)}, {expr('int', d+1)}]"])()
        if t == "quantity":
            return f"{expr('quantity', d+1)}.{rnd.choice(['add','sub'])}({expr(rnd.choice(['quantity','int']), d+1)})"
        pool = atoms.get(t) or atoms["any"]
        return rnd.choice(pool)
    return sorted({expr("bool") for _ in range(count)})


RANDOM = random_expressions(1, 600)
RANDOM_LIBRARIES = random_library_expressions(2, 400)
RUNS = 3


def _merge(runs: list[dict]) -> dict:
    """One case from the oracle's runs: as is when they agree, else marked with every value each field took."""
    first = runs[0]
    if all(run == first for run in runs[1:]):
        return first
    seen = {key: sorted({json.dumps(run.get(key)) for run in runs}) for key in {k for run in runs for k in run}}
    varying = {key: [json.loads(v) for v in values] for key, values in seen.items() if len(values) > 1}
    return {**first, "order_dependent": varying}


def main() -> None:
    root = Path(__file__).resolve().parents[2]
    first = EXPRESSIONS + [e for e in RANDOM if e not in EXPRESSIONS]
    later = [e for e in dict.fromkeys(LIBRARIES + RANDOM_LIBRARIES) if e not in first]
    pairs = [(n, e) for n in FIRST_DEVICES for e in first] + [(n, e) for n in DEVICES for e in later]
    lines = [json.dumps({"expression": e, "device": DEVICES[name]}) for name, e in pairs]
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "celoracle"
        env = {**os.environ, "GOFLAGS": (os.environ.get("GOFLAGS", "") + " -mod=mod").strip()}
        subprocess.run(["go", "build", "-o", str(binary), "."], cwd=root / "adapters/celoracle", env=env, check=True)
        for _ in range(RUNS):
            out = subprocess.run([str(binary)], input="\n".join(lines) + "\n", capture_output=True, text=True,
                                 check=True)
            runs.append([json.loads(line) for line in out.stdout.splitlines()])
    cases = []
    for i, (name, expression) in enumerate(pairs):
        answer = _merge([run[i] for run in runs])
        for key in ("admission_error", "compile_error"):  # cel-go's excerpt of the source (lines 2-3) left out
            if key in answer:
                answer[key] = answer[key].split("\n")[0]
        assert answer["expression"] == expression
        cases.append({"device": name, **answer})
    table = {"source": "k8s.io/dynamic-resource-allocation v0.36.1 cel (cel-go v0.26.0), consumable capacity on",
             "devices": DEVICES, "cases": cases}
    body = ",\n".join(json.dumps(case, ensure_ascii=False, sort_keys=True) for case in cases)
    head = json.dumps({k: v for k, v in table.items() if k != "cases"}, indent=1, ensure_ascii=False)[:-2]
    (root / "tests/data/cel_table.json").write_text(head + ',\n "cases": [\n' + body + "\n ]\n}\n")
    print(f"{len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
