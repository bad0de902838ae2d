"""One scenario through an implementation: its answer, then every check in order of how much it
explains (faults, the answer's own consistency and outside-judged invariants, then the
differential against the reference). The first family that finds something is reported."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schedcheck.conform.findings import Finding
from schedcheck.conform.impl import Implementation, Outcome
from schedcheck.conform.protocol import validate
from schedcheck.scenario.model import Scenario


@dataclass
class Verdict:
    scenario: str
    findings: list[Finding] = field(default_factory=list)
    result: dict[str, Any] | None = None
    seconds: float = 0.0  # the implementation's call
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def kind(self) -> str | None:
        return self.findings[0].kind if self.findings else None


def check_answer(scenario: Scenario, result: dict[str, Any], seed: int = 0, differential: bool = True
                 ) -> list[Finding]:
    """Findings on a protocol result for a scenario ([] when it conforms)."""
    errors = validate(result)
    if errors:
        return [Finding("fault.schema", f"the result breaks the protocol-1 schema: {errors[0]}"
                        + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""), None, [],
                        {"errors": errors})]
    from schedcheck.conform.external import check_result

    findings = _not_shared_with_reference(scenario, check_result(scenario, result), seed)
    if findings or not differential:
        return findings
    from schedcheck.conform.differential import compare

    return compare(scenario, result, seed)


def _not_shared_with_reference(scenario: Scenario, findings: list[Finding], seed: int) -> list[Finding]:
    """Drop the outside-check findings the reference makes too, on the same objects: a rule the
    reference (faithful to upstream) breaks in the same way is upstream's behaviour, a finding about
    upstream (docs/findings.md), not a non-conformance of the implementation."""
    if not findings:
        return findings
    from schedcheck.conform.external import check_result
    from schedcheck.runner import run_scenario

    reference = run_scenario(scenario, seed=seed, check_invariants=False).to_json(with_trace=True)
    shared = {(f.kind, tuple(f.objects)) for f in check_result(scenario, reference)}
    return [f for f in findings if (f.kind, tuple(f.objects)) not in shared]


def _named(doc: dict[str, Any], name: str) -> dict[str, Any]:
    """The document as sent: a Scenario without metadata.name gets the name the harness knows it by (its
    file's), so the implementation answers for the same scenario."""
    if not isinstance(doc, dict) or doc.get("kind") != "Scenario":
        return doc
    metadata = doc.get("metadata")
    if isinstance(metadata, dict) and metadata.get("name"):
        return doc
    return {**doc, "metadata": {**(metadata if isinstance(metadata, dict) else {}), "name": name}}


def conform_one(impl: Implementation, scenario: Scenario, doc: dict[str, Any], seed: int = 0) -> Verdict:
    outcome: Outcome = impl.call(_named(doc, scenario.name), seed)
    verdict = Verdict(scenario.name, seconds=outcome.seconds, stderr=outcome.stderr)
    if outcome.fault is not None:
        fault = outcome.fault
        verdict.findings = [Finding(f"fault.{fault.kind}", f"the implementation {fault.message}", None, [],
                                    {"stderr": fault.stderr, "exitCode": fault.exit_code})]
        return verdict
    assert outcome.result is not None
    verdict.result = outcome.result
    verdict.findings = check_answer(scenario, outcome.result, seed)
    return verdict
