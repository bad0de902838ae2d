"""The one report-folder writer: <parent>/<UTC time>-<slug>/, written atomically, never overwriting.

A report folder is assembled under a temporary name (`.partial-*`) in the same
parent and renamed into place in one step, so an interrupted run never leaves
a half-written report behind. The final name is new: a name that exists is
skipped (`-1`, `-2`, ... appended), and a rename that would meet a folder
created meanwhile fails rather than replacing it (POSIX rename refuses a
non-empty target), so nothing a user has is overwritten. On any error the
staging folder is removed.

File contents may depend on the folder's final place (a report that prints
its own `schedcheck replay <folder>/counterexample.yaml` line): give those as
a function of the final path; they are written once the name is chosen.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

Content = str | Callable[[Path], str]  # the text, or the text given the folder's final path

ATTEMPTS = 100


def safe_name(text: str, fallback: str = "") -> str:
    """A file-name-safe slug of at most 60 characters (letters, digits, - _ .)."""
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)[:60] or fallback


def unusable_parent(parent: Path) -> str | None:
    """Why report folders cannot be written under `parent` (created when missing), or None: checked before a
    long run, so that its findings are not lost to a folder it cannot write."""
    if parent.exists() and not parent.is_dir():
        return "not a folder"
    try:
        parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        return f"cannot write reports there: {exc.strerror or exc}"
    return None


def write_report_folder(parent: Path, slug: str, files: Mapping[str, Content]) -> Path:
    """Write the files into a new folder <parent>/<time>-<slug>[-N]/ atomically; return its path."""
    parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=parent))
    try:
        for name, content in files.items():
            if isinstance(content, str):
                (staging / name).write_text(content, encoding="utf-8")
        for attempt in range(ATTEMPTS):
            target = parent / (f"{stamp}-{slug}" + (f"-{attempt}" if attempt else ""))
            if target.exists():
                continue
            for name, content in files.items():
                if not isinstance(content, str):
                    (staging / name).write_text(content(target), encoding="utf-8")
            try:
                os.rename(staging, target)  # atomic; fails if a non-empty folder appeared meanwhile
                return target
            except OSError:
                continue
        raise OSError(f"could not find a free report folder name under {parent}")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)  # never leave a half-written folder behind
        raise
