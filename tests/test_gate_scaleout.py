"""Gate campaigns past one process: a Redis example database (against a real redis-server), workers on a
Dask distributed cluster, and the progress display."""

from __future__ import annotations

import io
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from schedcheck import gate_cluster
from schedcheck.cli import main
from schedcheck.gate_cluster import run_on_cluster
from schedcheck.gate_database import KEY_PREFIX, DatabaseError, open_database
from schedcheck.gate_properties import WorkerConfig, run_worker
from schedcheck.progress import Progress

FAST_MUTANT = "binding-not-allocated"  # the blind gate finds it within a second (docs/selftest.md)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = shutil.which("redis-server")
    assert server, "redis-server is not installed (.ci/run installs Debian's redis-server package)"
    port = _free_port()
    folder = tmp_path_factory.mktemp("redis")
    process = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no", "--dir", str(folder)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        for _ in range(100):
            try:
                open_database(url, check=True)
                break
            except DatabaseError:
                time.sleep(0.05)
        else:
            pytest.fail("redis-server did not start within 5 s")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_redis_database_keeps_examples(redis_url: str) -> None:
    database = open_database(redis_url)
    database.save(b"key", b"value")
    assert set(open_database(redis_url).fetch(b"key")) == {b"value"}


def test_a_failure_one_worker_found_is_retried_first_by_the_next(redis_url: str, tmp_path: Path) -> None:
    import redis

    config = WorkerConfig(budget=60, seed=11, database=redis_url, mutant=FAST_MUTANT, machine=False,
                          stats_dir=str(tmp_path))
    first, failure = run_worker(config)
    assert failure is not None and failure.invariant == "job.allocated-sum"
    assert redis.Redis.from_url(redis_url).keys(KEY_PREFIX + b"*"), "the failure was not saved to Redis"
    # another worker, another seed: the saved example replays first, so it fails on its first examples
    second, again = run_worker(WorkerConfig(**{**config.__dict__, "seed": 12345, "worker": 1}))
    assert again is not None and again.invariant == failure.invariant
    assert second.examples == 1, f"took {second.examples} examples: the shared failure was not retried first"


def test_an_unreachable_redis_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "--budget", "1", "--database", f"redis://127.0.0.1:{_free_port()}/0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("schedcheck: gate: --database: redis://")


def test_workers_run_as_tasks_on_a_dask_cluster(tmp_path: Path) -> None:
    config = WorkerConfig(budget=30, seed=3, database=str(tmp_path / "db"), max_examples=4, machine=False,
                          stats_dir=str(tmp_path))
    heard: list[int] = []
    stats, failures = run_on_cluster(config, 2, "local", lambda s, f: heard.append(s.worker))
    assert [s.worker for s in stats] == [0, 1] and sorted(heard) == [0, 1]
    assert all(s.examples >= 4 and s.cycles > 0 for s in stats) and failures == []


def test_a_failure_on_the_cluster_reaches_the_gate_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["gate", "--cluster", "local", "--workers", "2", "--budget", "30", "--seed", "1",
                 "--mutant", FAST_MUTANT, "--database", str(tmp_path / "db"), "--report", str(tmp_path / "r"),
                 "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1 and "VIOLATION job.allocated-sum" in out
    assert list((tmp_path / "r").glob("*/counterexample.yaml"))


def test_an_unreachable_cluster_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(gate_cluster, "CONNECT_TIMEOUT", "1s")
    assert main(["gate", "--budget", "1", "--cluster", f"tcp://127.0.0.1:{_free_port()}", "--no-progress"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("schedcheck: gate: --")]
    assert len(err) == 1 and "cannot reach the Dask scheduler" in err[0]


def test_progress_prints_plain_lines_off_a_terminal() -> None:
    out = io.StringIO()
    progress = Progress(out, "gate", 60, interval=0.0)
    progress.update(12.0, scenarios=40, findings=0)
    progress.close()
    assert out.getvalue() == "gate: 12.0/60 s, scenarios 40, findings 0\n"


def test_progress_throttles_plain_lines() -> None:
    out = io.StringIO()
    progress = Progress(out, "gate", 60, interval=3600.0)
    for second in range(10):
        progress.update(float(second), scenarios=second)
    assert out.getvalue() == ""


def test_progress_draws_a_bar_on_a_terminal() -> None:
    out = io.StringIO()
    progress = Progress(out, "selftest", 10, unit="mutants", terminal=True)
    progress.update(4, caught=4)
    text = out.getvalue()
    progress.close()
    assert "selftest:  40%" in text and "4/10 mutants" in text and "caught 4" in text and "\r" in text
