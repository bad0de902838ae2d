"""Upstream source trees at given commits, exported from a Volcano git repository into the cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from schedcheck.adapters.volcano import COMMIT_FILE, cache_root

MIRROR_HINT = "a Volcano git repository (a clone, or the bare mirror `fetch github:volcano-sh/volcano` gives)"


class SourceError(RuntimeError):
    """A one-line error about the repository or a commit."""


def default_git_dir() -> Path | None:
    for candidate in (os.environ.get("SCHEDCHECK_VOLCANO_GIT"), "/work/.mirror/volcano-sh+volcano/repo"):
        if candidate and Path(candidate).expanduser().is_dir():
            return Path(candidate).expanduser()
    return None


def _git(git_dir: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", f"--git-dir={_git_dir_of(git_dir)}", *args], capture_output=True,
                              timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SourceError(f"git {args[0]}: {exc}") from None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise SourceError(f"git {' '.join(args[:2])} in {git_dir}: {message[-1] if message else 'failed'}")
    return done.stdout.decode(errors="replace")


def _git_dir_of(path: Path) -> Path:
    return path / ".git" if (path / ".git").exists() else path


def resolve(git_dir: Path, revision: str) -> str:
    """The full commit id of a revision (a sha, a tag, `sha^`)."""
    return _git(git_dir, "rev-parse", "--verify", f"{revision}^{{commit}}").strip()


def export_commit(git_dir: Path, revision: str) -> Path:
    """The source tree at a commit, exported once into ~/.cache/schedcheck/volcano-src/<commit>/ (with a
    marker file naming the commit, which the adapter prints as its upstream version)."""
    commit = resolve(git_dir, revision)
    target = cache_root() / "volcano-src" / commit
    if (target / COMMIT_FILE).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{commit[:12]}-", dir=target.parent))
    try:
        with tempfile.TemporaryFile() as archive:
            try:
                subprocess.run(["git", f"--git-dir={_git_dir_of(git_dir)}", "archive", "--format=tar", commit],
                               stdout=archive, stderr=subprocess.PIPE, check=True, timeout=600)
            except (OSError, subprocess.SubprocessError) as exc:
                raise SourceError(f"git archive {commit[:12]}: {exc}") from None
            archive.seek(0)
            with tarfile.open(fileobj=archive) as tar:
                tar.extractall(staging, filter="data")
        (staging / COMMIT_FILE).write_text(commit + "\n")
        if target.exists():  # another process exported it meanwhile
            shutil.rmtree(staging)
        else:
            staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target
