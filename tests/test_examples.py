"""The newcomer examples under examples/: each must run cleanly (`schedcheck run` exits 0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedcheck.cli import main
from schedcheck.scenario.loader import load_scenario

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FILES = sorted(EXAMPLES.glob("*.yaml"))
REQUIRED = {"gpu-training-gang.yaml", "cluster-dump.yaml", "mixed-best-effort.yaml"}


def test_the_required_examples_exist() -> None:
    assert REQUIRED <= {p.name for p in FILES}, f"missing: {REQUIRED - {p.name for p in FILES}}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_example_runs_with_exit_zero(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["run", str(path)])
    out, err = capsys.readouterr()
    assert status == 0, f"schedcheck run {path.name} exited {status}\n{out}\n{err}"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_example_asserts_something(path: Path) -> None:
    assert not load_scenario(path).expect.is_empty(), f"{path.name} has no expectations"
