"""`schedcheck prove` and `schedcheck explain`: results, exit statuses, JSON."""

import json

import pytest

from schedcheck.model.catalog import all_obligations
from schedcheck.model.obligation import COUNTEREXAMPLE, PROVED, discharge
from schedcheck.cli import main as cli_main


def test_every_obligation_has_its_expected_result():
    obligations = all_obligations()
    assert len(obligations) >= 15
    assert len({o.name for o in obligations}) == len(obligations)
    for obligation in obligations:
        verdict = discharge(obligation)
        assert verdict.outcome.result == obligation.expect, (obligation.name, verdict.outcome)
        if obligation.expect == COUNTEREXAMPLE:
            assert verdict.outcome.counterexample and obligation.finding


def test_a_broken_law_is_refuted():
    """The machinery can fail: a wrong ledger rule (Releasing not counted in Used) is caught."""
    import z3

    from schedcheck.model import ledger as L
    from schedcheck.model.obligation import prove

    s, req = L._sym()
    wrong = L.replace(s, idle=L.vsub(s.idle, req), releasing=L.vadd(s.releasing, req),
                      sum_used=L.vadd(s.sum_used, req), sum_rel=L.vadd(s.sum_rel, req))
    assert prove(z3.And(*L.identities(wrong)), L._base(s, req), {}).result == COUNTEREXAMPLE
    assert prove(z3.BoolVal(True), [], {}).result == PROVED


def test_prove_json_and_only(capsys):
    assert cli_main(["prove", "--json", "--only", "gang,resource.le-transitive"]) == 0
    payload = json.loads(capsys.readouterr().out)
    names = [o["name"] for o in payload["obligations"]]
    assert "resource.le-transitive" in names and all(n.startswith(("gang.", "resource.")) for n in names)
    transitive = next(o for o in payload["obligations"] if o["name"] == "resource.le-transitive")
    assert transitive["result"] == "counterexample" and transitive["ok"] and "finding" in transitive
    assert all("seconds" in o and "statement" in o for o in payload["obligations"])


def test_prove_unknown_only_is_usage(capsys):
    assert cli_main(["prove", "--only", "no.such"]) == 2
    err = capsys.readouterr().err
    assert "no.such" in err and len(err.strip().splitlines()) == 1


def _explain(capsys, *argv):
    code = cli_main(["explain", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_explain_names_the_conflict(capsys):
    code, out, _ = _explain(capsys, "tests/scenarios/resources-insufficient-everywhere.yaml", "--job",
                            "bi/analytics", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["explained"] and payload["pending"]
    assert "node worker-2: cpu 4000m requested by bi/analytics-0 > 2000m idle" in payload["reasons"]
    assert "node worker-1: memory 16Gi requested by bi/analytics-0 > 8Gi idle" in payload["reasons"]
    assert any(r.startswith("gang bi/analytics") for r in payload["reasons"])


@pytest.mark.parametrize("scenario, job, needle", [
    ("proportion-capability-cap", "team-c/capped-job", "queue capped: deserved cpu 2000m < allocated 2000m + request 1000m"),
    ("proportion-closed-queue", "ops/frozen-admitted", "queue frozen: state Closed, not Open"),
    ("proportion-enqueue-rejected", "lab/too-big", "podgroup lab/too-big: phase Pending, not admitted by enqueue"),
])
def test_explain_queue_and_enqueue_reasons(capsys, scenario, job, needle):
    code, out, _ = _explain(capsys, f"tests/scenarios/{scenario}.yaml", "--job", job)
    assert code == 0 and needle in out


def test_explain_core_is_minimal(capsys):
    code, out, _ = _explain(capsys, "tests/scenarios/gang-discard.yaml", "--job", "ml/resnet", "--json")
    reasons = json.loads(out)["reasons"]
    assert code == 0
    # three nodes: two too small together, one too small for each task; the gang needs all three tasks
    assert len(reasons) == 6 and sum("idle for the tasks placed together" in r for r in reasons) == 2


def test_explain_not_pending_and_bad_input(capsys):
    code, out, _ = _explain(capsys, "tests/scenarios/preempt-excess-eviction.yaml", "--job", "default/new")
    assert code == 1 and "no Pending task" in out
    code, _, err = _explain(capsys, "tests/scenarios/gang-discard.yaml", "--job", "x/y")
    assert code == 2 and "gang-discard.yaml" in err and "x/y" in err and len(err.strip().splitlines()) <= 2
    code, _, err = _explain(capsys, "tests/scenarios/missing.yaml", "--job", "x/y")
    assert code == 2 and "missing.yaml" in err
