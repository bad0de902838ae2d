"""HypoFuzz drives the gate's properties (tests/fuzz/test_gate_targets.py): a short smoke run."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

TARGETS = Path(__file__).resolve().with_name("test_gate_targets.py")
SECONDS = 25


def test_hypofuzz_fuzzes_the_gate_property(tmp_path: Path) -> None:
    command = shutil.which("hypothesis", path=str(Path(sys.executable).parent))
    assert command, "HypoFuzz is not installed (it is in the test extra: pip install -e '.[test]')"
    # Its own process group: HypoFuzz's worker processes hold the output pipe too, so the final kill goes to
    # the whole group (a worker left running when the main process stopped kept the pipe open, and the test
    # waited for it forever). Ctrl-C goes to the main process only, which stops its workers itself.
    process = subprocess.Popen([command, "fuzz", "--no-dashboard", "-n", "1", "--", str(TARGETS),
                                "-p", "no:cacheprovider"], cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = process.communicate(timeout=SECONDS)
    except subprocess.TimeoutExpired:  # it fuzzes until stopped
        process.send_signal(signal.SIGINT)
        try:
            out, _ = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, _ = process.communicate()
    before_stop = out.split("Aborted!")[0]  # HypoFuzz's workers print their own shutdown traceback on ctrl-C
    assert re.search(r"to fuzz [12] tests?", before_stop) and "Traceback" not in before_stop, out
    corpus = tmp_path / ".hypothesis" / "examples"
    assert corpus.is_dir() and sum(1 for _ in corpus.rglob("*") if _.is_file()) >= 10, \
        "HypoFuzz saved no corpus: it did not run the property"
