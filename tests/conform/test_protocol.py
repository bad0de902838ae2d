"""Protocol 1: the shipped schema, its validator, and the reference speaking it."""

from __future__ import annotations

import copy
import json

import pytest

from schedcheck.conform.protocol import SUPPORTED_KEYWORDS, result_schema, schema_keywords, validate
from schedcheck.conform.reference import run
from tests.conform.helpers import fixture


@pytest.fixture(scope="module")
def good() -> dict:
    return run(fixture("releasing-pod"))


def test_the_validator_understands_every_keyword_the_schema_uses():
    assert schema_keywords(result_schema()) <= SUPPORTED_KEYWORDS


def test_the_reference_speaks_protocol_1(good):
    assert good["protocol"] == 1 and validate(good) == []
    assert good["ledgers"] and set(good["ledgers"][0]["nodes"]["node-1"]) >= {"allocatable", "idle", "used"}


def test_run_json_trace_carries_protocol_and_ledgers(capsys):
    from schedcheck.cli import main
    from tests.conform.helpers import SCENARIOS

    assert main(["run", str(SCENARIOS / "tied-nodes.yaml"), "--json", "--trace"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["protocol"] == 1 and len(out["ledgers"]) == out["cycles"] and validate(out) == []


@pytest.mark.parametrize("breakage, fragment", [
    (lambda r: r.pop("binds"), "missing required field 'binds'"),
    (lambda r: r.update(protocol=2), "$.protocol: expected 1"),
    (lambda r: r.update(cycles="1"), "$.cycles: expected integer"),
    (lambda r: r.update(binds=[["a/b", "n"]]), "$.binds: expected object"),
    (lambda r: r.update(evicted=["no-namespace"]), "not of the form namespace/name"),
    (lambda r: r["trace"].append({"cycle": 0, "op": "teleport", "task": "a/b"}), "expected one of allocate"),
    (lambda r: r["ledgers"][0]["nodes"]["node-1"]["idle"].update(cpu="4"), "expected number"),
])
def test_the_validator_rejects_broken_results(good, breakage, fragment):
    broken = copy.deepcopy(good)
    breakage(broken)
    errors = validate(broken)
    assert errors and any(fragment in e for e in errors), errors
