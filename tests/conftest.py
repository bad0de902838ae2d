"""Shared test helpers: small builders for Kubernetes objects and resources."""

from __future__ import annotations

import pytest

from schedcheck.reference.util import assertion


@pytest.fixture(autouse=True)
def _panic_on_error():
    """Every test starts with upstream's default: a failed assertion raises."""
    assertion.set_panic_on_error(True)
    assertion.recorded_assertions().clear()
    yield
    assertion.set_panic_on_error(True)
