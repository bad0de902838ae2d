"""Shared test helpers: small builders for Kubernetes objects and resources."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

from schedcheck.reference.util import assertion

# The packages schedcheck installs under its one name (pyproject.toml's package-dir), walked from their folders.
PACKAGES = ("schedcheck", "schedcheck.reference", "schedcheck.invariants", "schedcheck.model", "schedcheck.generators")


def pytest_configure(config) -> None:
    """Import every schedcheck module before any test runs. Hypothesis draws some values from the literals of
    the local modules loaded so far (its "local constants"), so without this a document `sample_documents`
    draws for a seed would depend on which tests ran first in the worker."""
    for name in PACKAGES:
        package = importlib.import_module(name)
        for info in pkgutil.walk_packages(package.__path__, f"{name}."):
            if info.name.rsplit(".", 1)[-1] == "__main__":
                continue
            try:
                importlib.import_module(info.name)
            except Exception:  # noqa: BLE001 - a module needing an optional dependency: its tests say so
                pass


@pytest.fixture(autouse=True)
def _panic_on_error():
    """Every test starts with upstream's default: a failed assertion raises."""
    assertion.set_panic_on_error(True)
    assertion.recorded_assertions().clear()
    yield
    assertion.set_panic_on_error(True)
