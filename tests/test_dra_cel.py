"""reference_impl/util/dra_cel.py (and schedcheck.reference.util.cel behind it) against the answers Kubernetes' own
CEL compiler gave (tests/data/cel_table.json, recorded with adapters/celoracle by tests/data/regen_cel_table.py:
k8s.io/dynamic-resource-allocation v0.36.1, cel-go v0.26.0): per case, the API server's verdict on the selector as
a new one (refused, or its estimated cost), the scheduler's compile, the result or the runtime error, and the cost
counted at run time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schedcheck.reference.k8s_dra import SemVer
from schedcheck.reference.quantity import Quantity
from schedcheck.reference.util import dra_cel
from schedcheck.reference.util.cel import cost_calls, program
from schedcheck.reference.util.cel.libs import std
from schedcheck.reference.util.cel.values import Err
from schedcheck.scenario.errors import ScenarioError
from schedcheck.scenario.loader import scenario_from_document

TABLE = json.loads((Path(__file__).parent / "data/cel_table.json").read_text())
# Offered by Kubernetes' environment, reported as not modelled: protobuf message literals and message types.
NOT_MODELLED = {"google.protobuf.Timestamp{seconds: 1} == timestamp(1)",
                'google.protobuf.Duration{seconds: 1} == duration("1s")',
                'kubernetes.DRADevice{driver: "x"}.driver == "x"', "google.protobuf.Int64Value{value: 1} == 1",
                "type(google.protobuf.Empty) == type"}


def variable(doc: dict[str, Any]) -> dict[str, Any]:
    attributes = {}
    for name, value in doc["attributes"].items():
        ((kind, raw),) = value.items()
        attributes[name] = SemVer(raw) if kind == "version" else raw
    capacity = {name: Quantity.parse(q) for name, q in doc["capacity"].items()}
    return dra_cel.device_variable(doc["driver"], attributes, capacity, doc["allowMultipleAllocations"])


def judge(expression: str, device: dict[str, Any]) -> dict[str, Any]:
    """What the reference says, in the table's terms."""
    out: dict[str, Any] = {}
    try:
        out["max_cost"] = dra_cel.admit(expression)
    except dra_cel.CompileError as err:
        out["admission_error"] = str(err)
        if "exceeds cost limit" in str(err):
            out["max_cost"] = int(str(err).split("estimated cost ")[1].split(",")[0])
    except dra_cel.NotModelled as err:
        return {"not_modelled": str(err)}
    try:
        compiled = dra_cel.parse(expression)
    except dra_cel.CompileError as err:
        out["compile_error"] = str(err)
        return out
    value, cost = program.run(compiled, {"device": variable(device)})
    out["actual_cost"] = cost
    problem = dra_cel.bad_version(variable(device))
    if problem is not None:
        out["runtime_error"], out["actual_cost"] = problem, 0
    elif isinstance(value, Err):
        out["runtime_error"] = value.message
    else:
        try:
            out["result"] = dra_cel.result_bool(value)
        except dra_cel.CelRuntimeError as err:
            out["runtime_error"] = str(err)
    return out


def disagreements(case: dict[str, Any], mine: dict[str, Any]) -> list[str]:
    found = []
    for key in ("admission_error", "compile_error"):  # refused or not (cel-go's wording is not kept)
        if (key in case) != (key in mine):
            found.append(f"{key}: Kubernetes {case.get(key)!r}, reference {mine.get(key)!r}")
    if "compile_error" not in case and case.get("max_cost") != mine.get("max_cost"):
        found.append(f"max_cost: Kubernetes {case.get('max_cost')}, reference {mine.get('max_cost')}")
    for key in ("result", "runtime_error"):  # runtime errors keep cel-go's text (it reaches the pod's condition)
        if case.get(key) != mine.get(key):
            found.append(f"{key}: Kubernetes {case.get(key)!r}, reference {mine.get(key)!r}")
    order_dependent = "actual_cost" in case.get("order_dependent", {})  # Go's map order decides when it stops
    if "compile_error" not in case and not order_dependent and case.get("actual_cost") != mine.get("actual_cost"):
        found.append(f"actual_cost: Kubernetes {case.get('actual_cost')}, reference {mine.get('actual_cost')}")
    return found


@pytest.mark.parametrize("case", TABLE["cases"], ids=lambda c: f"{c['device']}:{c['expression'][:60]}")
def test_reference_cel_agrees_with_kubernetes(case: dict[str, Any]) -> None:
    mine = judge(case["expression"], TABLE["devices"][case["device"]])
    if "not_modelled" in mine:
        assert case["expression"] in NOT_MODELLED, mine
        return
    assert not disagreements(case, mine), f"{case['expression']}: {disagreements(case, mine)}"


def test_the_table_covers_every_outcome() -> None:
    cases = TABLE["cases"]
    kinds = {k for case in cases for k in ("result", "compile_error", "runtime_error") if k in case}
    assert kinds == {"result", "compile_error", "runtime_error"} and len(cases) > 4000
    assert any("exceeds cost limit" in c.get("admission_error", "") and "compile_error" not in c for c in cases)
    assert any(c.get("runtime_error") == "operation cancelled: actual cost limit exceeded" for c in cases)
    assert any("admission_error" in c and "compile_error" not in c and "includes" in c["expression"] for c in cases)
    assert any(c.get("compile_error", "").startswith("panic:") for c in cases)


def test_a_broken_evaluator_disagrees_with_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table test can fail: int overflow unchecked, the overflow cases come out as results."""
    overflowing = next(c for c in TABLE["cases"] if c["expression"] == 'device.attributes["gpu.example.com"].cores + 1 > 8'
                       and c["device"] == "t4")
    assert overflowing["runtime_error"] == "integer overflow"
    monkeypatch.setattr(std, "checked_int", lambda value: value)
    assert disagreements(overflowing, judge(overflowing["expression"], TABLE["devices"]["t4"]))


def test_a_broken_estimator_disagrees_with_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The estimates are held too: a string traversal costed at half, the admission verdicts move."""
    monkeypatch.setattr(cost_calls, "STRING", 0.05)
    moved = [c for c in TABLE["cases"][:400] if disagreements(c, judge(c["expression"], TABLE["devices"][c["device"]]))]
    assert moved and all("max_cost" in " ".join(disagreements(c, judge(c["expression"],
                                                                         TABLE["devices"][c["device"]])))
                         for c in moved)


def test_a_version_attribute_that_does_not_parse_fails_before_evaluation() -> None:
    bad = dra_cel.device_variable("d", {"v": SemVer("1.2")}, {})
    assert dra_cel.bad_version(bad) == "attribute v: parse semantic version: No Major.Minor.Patch elements found"
    assert dra_cel.bad_version(dra_cel.device_variable("d", {"v": SemVer("1.2.0")}, {})) is None
    with pytest.raises(dra_cel.CelRuntimeError, match="attribute v: parse semantic version"):
        dra_cel.matches(dra_cel.compile_selector("true"), bad)


def _device_class(*expressions: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]}}


def _load(*docs: dict[str, Any]) -> Any:
    return scenario_from_document({"apiVersion": "schedcheck/v1", "kind": "Scenario", "objects": list(docs)}, "s.yaml")


def test_the_reader_refuses_a_selector_the_api_server_would_refuse() -> None:
    with pytest.raises(ScenarioError) as info:
        _load(_device_class('device.driver == "a"', "device.attributes['a'].v > semver('1.0.0')"))
    text = str(info.value)
    assert "s.yaml" in text and "DeviceClass gpu" in text and "spec.selectors[1].cel.expression" in text
    assert "is refused by the API server" in text and "\n" not in text


def test_the_reader_refuses_a_selector_over_the_estimated_cost_limit() -> None:
    """type(x) == int has no size bound for either side of ==: its worst case is past 1,000,000."""
    expensive = "type(device.driver) == string"
    with pytest.raises(ScenarioError) as info:
        _load(_device_class(expensive))
    text = str(info.value)
    assert "spec.selectors[0].cel.expression" in text and "too complex, exceeds cost limit" in text
    assert "\n" not in text
    _load(_device_class('device.driver == "a"'))  # a cheap selector loads


def test_the_reader_refuses_includes_which_new_selectors_do_not_have() -> None:
    """`includes` is declared only under DRAListTypeAttributes (alpha, off): a new selector may not use it,
    while the scheduler's (StoredExpressions) environment has it."""
    with pytest.raises(ScenarioError, match="undeclared reference to 'includes'"):
        _load(_device_class('device.driver.includes("a")'))
    assert dra_cel.matches(dra_cel.compile_selector('device.driver.includes("a")'),
                           dra_cel.device_variable("a", {}, {})) is True


def test_the_runtime_cost_limit_ends_the_evaluation_as_cel_go_reports_it() -> None:
    """The scheduler compiles without an estimate; the counted cost stops a stored selector past 1,000,000."""
    heavy = dra_cel.compile_selector("lists.range(2000).all(x, lists.range(1000).all(y, true))")
    with pytest.raises(dra_cel.CelRuntimeError, match="^operation cancelled: actual cost limit exceeded$"):
        dra_cel.matches(heavy, dra_cel.device_variable("a", {}, {}))
    with pytest.raises(dra_cel.CompileError, match="too complex"):
        dra_cel.admit("lists.range(2000).all(x, lists.range(1000).all(y, true))")


def test_regular_expressions_are_re2() -> None:
    """Python's re takes lookaheads and backreferences; RE2 (Go's regexp) refuses them at compile time, and
    refuses \\C, which C++ RE2 would take."""
    for pattern in ("(?=a)", "(a)\\\\1", "\\\\C"):
        with pytest.raises(dra_cel.CompileError):
            dra_cel.compile_selector(f'device.driver.matches("{pattern}")')
    found = dra_cel.evaluate(dra_cel.compile_selector('"baaac".findAll("a*") == ["", "aaa", ""]'), {})
    assert found is True  # Go skips an empty match right after a match (Python's re.findall gives 4)


def test_the_reader_refuses_a_version_attribute_that_is_not_semver() -> None:
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s1"},
              "spec": {"driver": "d", "nodeName": "n1", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                       "devices": [{"name": "g0", "attributes": {"v": {"version": "1.02.0"}}}]}}
    with pytest.raises(ScenarioError) as info:
        _load(slice_)
    assert "ResourceSlice s1" in str(info.value) and "attributes" in str(info.value)
    assert 'Minor number must not contain leading zeroes "02"' in str(info.value)


def test_quantities_keep_kubernetes_int64_amount() -> None:
    """isInteger answers from how apimachinery holds the quantity, not from its value."""
    def is_integer(text: str) -> bool:
        return dra_cel.evaluate(dra_cel.compile_selector(f'quantity("{text}").isInteger()'), {}) is True
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
    texts = [c["expression"] for c in TABLE["cases"][::11]]
    device = variable(TABLE["devices"]["a100"])
    for i in range(3000):
        base = rnd.choice(texts)
        k = rnd.randint(0, len(base))
        text = base[:k] + "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 3))) + base[k + rnd.randint(0, 4):]
        if i % 3 == 0:
            text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 20)))
        try:
            dra_cel.admit(text)
        except (dra_cel.CompileError, dra_cel.NotModelled):
            pass
        try:
            compiled = dra_cel.parse(text)
        except (dra_cel.CompileError, dra_cel.NotModelled):
            continue
        try:
            dra_cel.matches(compiled, device)
        except dra_cel.CelRuntimeError:
            pass
