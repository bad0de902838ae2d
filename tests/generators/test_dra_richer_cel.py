"""generators/dra.py's richer selectors hold for exactly the devices of the model they name."""

from __future__ import annotations

import pytest

from schedcheck.generators import dra
from schedcheck.reference.k8s_dra import SemVer
from schedcheck.reference.util import dra_cel


@pytest.mark.parametrize("template", dra.RICHER)
@pytest.mark.parametrize("model", dra.MODELS)
def test_a_richer_selector_matches_like_the_plain_equality(template: str, model: str) -> None:
    expression = template.format(d=dra.DRIVER, model=model, upper=model.upper(), size=len(model))
    compiled = dra_cel.parse(expression)
    for device_model in dra.MODELS:
        variable = dra_cel.device_variable(dra.DRIVER, {"model": device_model,
                                                        "driverVersion": SemVer(dra.VERSIONS[device_model])}, {})
        assert dra_cel.result_bool(dra_cel.evaluate(compiled, variable)) is (device_model == model)
