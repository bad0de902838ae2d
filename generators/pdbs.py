"""PodDisruptionBudget documents over a job kind's pods (the pdb plugin): a selector on the kind's `app`
label, and the disruption controller's status.disruptionsAllowed, shrinking to 0 (nothing may go)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


@st.composite
def pod_disruption_budgets(draw: st.DrawFn, namespace: str, app: str) -> dict[str, Any]:
    allowed = draw(st.integers(0, 2))
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": f"{app}-pdb", "namespace": namespace},
        "spec": {"maxUnavailable": allowed, "selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed},
    }
