"""Shared paths and small builders for the conformance tests."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
IMPLS = ROOT / "examples" / "impls"
SCENARIOS = Path(__file__).parent / "scenarios"


def impl_cmd(name: str, *extra: str) -> str:
    return " ".join([sys.executable, str(IMPLS / f"{name}.py"), *extra])


def fixture(name: str) -> dict:
    return yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
