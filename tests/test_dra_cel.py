"""reference_impl/util/dra_cel.py against the answers Kubernetes' own CEL compiler gave (tests/data/cel_table.json,
recorded with adapters/celoracle by tests/data/regen_cel_table.py: k8s.io/dynamic-resource-allocation v0.36.1):
hand-picked expressions and seeded random ones (374 distinct of 600 draws), each on two devices."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schedcheck.reference.k8s_dra import SemVer
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util import dra_cel
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import scenario_from_document

TABLE = json.loads((Path(__file__).parent / "data/cel_table.json").read_text())
# Kubernetes accepts these; the reference reports them as not modelled rather than guess.
NOT_MODELLED = {'"%s-%d".format(["a", 1]) == "a-1"', '{"a": 1}.transformMapEntry(k, v, {v: k}) == {1: "a"}',
                'url("https://x.io/p").getHost() == "x.io"', 'isURL("nope")', 'ip("10.0.0.1").family() == 4',
                'cidr("10.0.0.0/8").containsIP("10.1.2.3")',
                'timestamp("2024-01-01T00:00:00Z") < timestamp("2025-01-01T00:00:00Z")', 'duration("1h") > duration("30m")',
                "[?optional.of(1)].size() == 1", '{?"a": optional.none()}.size() == 0',
                "optional.of(2).optMap(x, x * 2).value() == 4"}
# cel-go infers an empty list literal's element type from the first overload that takes it (here list(int), so
# join() no longer applies) and refuses these; the reference gives `[]` a dynamic element type and accepts them.
LENIENT = {'[].filter(x, x != 1).join("-") == ""', '[].sort().join("-") == ""'}


def variable(doc: dict[str, Any]) -> dict[str, Any]:
    attributes = {}
    for name, value in doc["attributes"].items():
        ((kind, raw),) = value.items()
        attributes[name] = SemVer(raw) if kind == "version" else raw
    capacity = {name: Quantity.parse(q) for name, q in doc["capacity"].items()}
    return dra_cel.device_variable(doc["driver"], attributes, capacity, doc["allowMultipleAllocations"])


def judge(expression: str, device: dict[str, Any]) -> tuple[str, Any]:
    try:
        compiled = dra_cel.parse(expression)
    except dra_cel.CompileError as err:
        return "compile_error", str(err)
    except dra_cel.NotModelled as err:
        return "not_modelled", str(err)
    try:
        return "result", dra_cel.result_bool(dra_cel.evaluate(compiled, variable(device)))
    except dra_cel.CelRuntimeError as err:
        return "runtime_error", str(err)


@pytest.mark.parametrize("case", TABLE["cases"], ids=lambda c: f"{c['device']}:{c['expression'][:60]}")
def test_reference_cel_agrees_with_kubernetes(case: dict[str, Any]) -> None:
    kind, value = judge(case["expression"], TABLE["devices"][case["device"]])
    if kind == "not_modelled":
        assert case["expression"] in NOT_MODELLED and "compile_error" not in case, value
        return
    if case["expression"] in LENIENT:
        assert "compile_error" in case and kind == "result"
        return
    assert kind in case, f"Kubernetes: {case}; reference: {kind} {value}"
    if kind in ("result", "runtime_error"):  # runtime errors keep cel-go's text (it reaches the pod's condition)
        assert value == case[kind]


def test_the_table_covers_every_outcome() -> None:
    kinds = {k for case in TABLE["cases"] for k in ("result", "compile_error", "runtime_error") if k in case}
    assert kinds == {"result", "compile_error", "runtime_error"} and len(TABLE["cases"]) > 1500


def test_a_broken_evaluator_disagrees_with_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table test can fail: int overflow unchecked, the overflow cases come out as results."""
    monkeypatch.setattr(dra_cel, "_int", lambda value: value)
    case = next(c for c in TABLE["cases"] if c["expression"] == "9223372036854775807 + 1 > 0")
    assert case["runtime_error"] == "integer overflow"
    assert judge(case["expression"], TABLE["devices"][case["device"]]) == ("result", True)


def test_a_version_attribute_that_does_not_parse_fails_before_evaluation() -> None:
    variable = dra_cel.device_variable("d", {"v": SemVer("1.2")}, {})
    assert dra_cel.bad_version(variable) == "attribute v: parse semantic version: No Major.Minor.Patch elements found"
    assert dra_cel.bad_version(dra_cel.device_variable("d", {"v": SemVer("1.2.0")}, {})) is None


def test_the_reader_refuses_a_selector_the_api_server_would_refuse() -> None:
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"selectors": [{"cel": {"expression": 'device.driver == "a"'}},
                                  {"cel": {"expression": "device.attributes['a'].v > semver('1.0.0')"}}]}}
    with pytest.raises(ScenarioError) as info:
        scenario_from_document({"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": [doc]}, "s.yaml")
    text = str(info.value)
    assert "s.yaml" in text and "DeviceClass gpu" in text and "spec.selectors[1].cel.expression" in text
    assert "does not compile" in text and "\n" not in text


def test_the_reader_refuses_a_version_attribute_that_is_not_semver() -> None:
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s1"},
              "spec": {"driver": "d", "nodeName": "n1", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                       "devices": [{"name": "g0", "attributes": {"v": {"version": "1.02.0"}}}]}}
    with pytest.raises(ScenarioError) as info:
        scenario_from_document({"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": [slice_]}, "s.yaml")
    assert "ResourceSlice s1" in str(info.value) and "attributes" in str(info.value)
    assert 'Minor number must not contain leading zeroes "02"' in str(info.value)


def test_quantities_keep_kubernetes_int64_amount() -> None:
    """isInteger answers from how apimachinery holds the quantity, not from its value."""
    def is_integer(text: str) -> bool:
        return dra_cel.result_bool(dra_cel.evaluate(dra_cel.parse(f'quantity("{text}").isInteger()'), {}))
    assert is_integer("1k") and is_integer("40Gi") and is_integer("0")
    assert not is_integer("1000m")  # an int64 amount with scale -3: never an integer to AsInt64
    assert not is_integer("1Ei")  # too little precision left for an int64 amount: a decimal


def test_malformed_expressions_fail_in_one_of_the_module_errors() -> None:
    """Mutated table expressions and random text: a CompileError or NotModelled, or a run that ends in a
    result or a CelRuntimeError, never another exception (the reader turns these into one-line errors)."""
    import random

    rnd = random.Random(5)
    pieces = list('.[]()!?:-+*/%<>=&|"\'\\ 0123456789uxeE{},_') + ["device", "\\x", "\\u12", "r'", "b'", "'''",
                                                                   ".?", "[?", "has(", "map(x,", "(" * 300]
    texts = [c["expression"] for c in TABLE["cases"][::7]]
    device = variable(TABLE["devices"]["a100"])
    for i in range(3000):
        base = rnd.choice(texts)
        k = rnd.randint(0, len(base))
        text = base[:k] + "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 3))) + base[k + rnd.randint(0, 4):]
        if i % 3 == 0:
            text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 20)))
        try:
            compiled = dra_cel.parse(text)
        except (dra_cel.CompileError, dra_cel.NotModelled):
            continue
        try:
            dra_cel.result_bool(dra_cel.evaluate(compiled, device))
        except dra_cel.CelRuntimeError:
            pass
