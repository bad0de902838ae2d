"""The one way reports reach the disk: a new folder, assembled under a temporary name and renamed
into place, so an interrupted run leaves no half-written report and nothing earlier is overwritten."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path


def safe_name(text: str, fallback: str = "report") -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)[:60] or fallback


def write_report_folder(parent: Path, name: str, files: Callable[[Path], dict[str, str]]) -> Path:
    """Create <parent>/<UTC time>-<name>[-N]/ holding `files(final_folder)` ({file name: text}); return it.

    `files` is told the folder's final path, so a report can name where it will be read from.
    """
    parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=parent))
    try:
        for attempt in range(100):
            target = parent / (f"{stamp}-{safe_name(name)}" + (f"-{attempt}" if attempt else ""))
            if target.exists():
                continue
            for file_name, text in files(target).items():
                (staging / file_name).write_text(text, encoding="utf-8")
            try:
                os.rename(staging, target)  # atomic; fails if the target appeared meanwhile and is not empty
                return target
            except OSError:
                continue
        raise OSError(f"could not find a free report folder name under {parent}")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)  # never leave a half-written folder behind
        raise
