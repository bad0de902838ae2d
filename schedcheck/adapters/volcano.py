"""Build (once, cached) and locate the upstream-Volcano adapter of adapters/volcano/.

`adapter_command()` returns the argv of a program speaking the conformance
protocol with upstream's own scheduler inside. The binary is cached under
~/.cache/schedcheck/volcano-adapter/<hash>/, the hash covering the adapter's Go
sources, go.mod, go.sum and the Volcano source it is built against, so an edit
of any of them rebuilds it.

Environment:
  SCHEDCHECK_VOLCANO_ADAPTER  a prebuilt adapter binary: used as is, nothing is built.
  SCHEDCHECK_VOLCANO_SRC      a Volcano checkout (a local fork, or upstream at another
                              commit): volcano.sh/volcano and its staged volcano.sh/apis
                              are replaced by that tree for the build.
  SCHEDCHECK_CACHE_DIR        the cache root (default $XDG_CACHE_HOME/schedcheck or ~/.cache/schedcheck).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

ADAPTER_DIR = Path(__file__).resolve().parents[2] / "adapters" / "volcano"
BINARY_NAME = "volcano-adapter"
APIS_STAGING = Path("staging") / "src" / "volcano.sh" / "apis"


class AdapterError(RuntimeError):
    """The adapter cannot be had; the message is one line."""


def adapter_command() -> list[str]:
    """The argv of the Volcano adapter (the scenario path is appended by the caller)."""
    prebuilt = os.environ.get("SCHEDCHECK_VOLCANO_ADAPTER")
    if prebuilt:
        path = Path(prebuilt).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise AdapterError(f"SCHEDCHECK_VOLCANO_ADAPTER={prebuilt}: not an executable file")
        return [str(path)]
    return [str(build_adapter())]


def cache_root() -> Path:
    if os.environ.get("SCHEDCHECK_CACHE_DIR"):
        return Path(os.environ["SCHEDCHECK_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "schedcheck"


NODE_SHARDS_MARKER = "pkg/scheduler/cache/shard_coordinator.go"  # upstream has NodeShards (after v1.14)


def volcano_source() -> Path | None:
    """The Volcano checkout named by SCHEDCHECK_VOLCANO_SRC, checked, or None."""
    value = os.environ.get("SCHEDCHECK_VOLCANO_SRC")
    if not value:
        return None
    src = Path(value).expanduser().resolve()
    go_mod = src / "go.mod"
    if not go_mod.is_file() or "module volcano.sh/volcano" not in go_mod.read_text(errors="replace"):
        raise AdapterError(f"SCHEDCHECK_VOLCANO_SRC={value}: not a Volcano checkout (no go.mod of volcano.sh/volcano)")
    if not (src / APIS_STAGING / "go.mod").is_file():
        raise AdapterError(f"SCHEDCHECK_VOLCANO_SRC={value}: no {APIS_STAGING}/go.mod")
    return src


def source_files() -> list[Path]:
    files = sorted(ADAPTER_DIR.glob("*.go")) + [ADAPTER_DIR / "go.mod", ADAPTER_DIR / "go.sum"]
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise AdapterError(f"{ADAPTER_DIR}: missing {', '.join(missing)}")
    return files


def source_hash(src: Path | None) -> str:
    digest = hashlib.sha256()
    for f in source_files():
        digest.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    if src is not None:
        digest.update(b"src\0" + str(src).encode())
        for rel in ("go.mod", "go.sum", str(APIS_STAGING / "go.mod")):
            p = src / rel
            digest.update(p.read_bytes() if p.is_file() else b"")
        head = _git_head(src)
        digest.update(head.encode())
    return digest.hexdigest()[:16]


def _git_head(src: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def build_adapter() -> Path:
    """Build the adapter unless the cache already holds this version; return the binary."""
    go = shutil.which("go")
    if go is None:
        raise AdapterError("go not found on PATH (install Go >= 1.26, or set SCHEDCHECK_VOLCANO_ADAPTER)")
    src = volcano_source()
    target_dir = cache_root() / "volcano-adapter" / source_hash(src)
    binary = target_dir / BINARY_NAME
    if binary.is_file():
        return binary
    target_dir.mkdir(parents=True, exist_ok=True)
    with open(target_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build per version, whatever the number of test workers
        if not binary.is_file():
            _build(go, src, target_dir, binary)
    return binary


def module_replaces(go_mod: Path) -> list[tuple[str, str]]:
    """The `replace` directives of a go.mod that name a module version (not a directory), as (old, "path@version")."""
    out: list[tuple[str, str]] = []
    in_block = False
    for raw in go_mod.read_text(errors="replace").splitlines():
        line = raw.split("//", 1)[0].strip()
        if line.startswith("replace ("):
            in_block = True
            continue
        if in_block and line == ")":
            in_block = False
            continue
        if line.startswith("replace "):
            line = line[len("replace "):]
        elif not in_block:
            continue
        old, sep, new = line.partition("=>")
        parts = new.split()
        if sep and len(parts) == 2 and not parts[0].startswith((".", "/")):
            out.append((old.split()[0], f"{parts[0]}@{parts[1]}"))
    return out


def _build(go: str, src: Path | None, target_dir: Path, binary: Path) -> None:
    work = target_dir / "src"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    for f in source_files():
        shutil.copy2(f, work / f.name)
    env = {**os.environ, "GOFLAGS": (os.environ.get("GOFLAGS", "") + " -mod=mod").strip()}
    steps = []
    if src is not None:
        # The checkout's own version pins (k8s.io/* of its Kubernetes release) replace
        # the pinned release's, so a checkout of master builds against master's Kubernetes.
        pins = [f"-replace={old}={new}" for old, new in module_replaces(src / "go.mod")]
        steps.append([go, "mod", "edit", *pins, f"-replace=volcano.sh/volcano={src}",
                      f"-replace=volcano.sh/apis={src / APIS_STAGING}"])
    partial = target_dir / (BINARY_NAME + ".partial")
    tags = []
    if src is not None and (src / NODE_SHARDS_MARKER).is_file():
        tags = ["-tags", "volcano_nodeshards"]  # the per-version shim: NodeShards exist upstream
    if src is not None:
        head = _git_head(src)
        tags += ["-ldflags", f"-X main.upstreamSource={head[:12] if head else 'local-tree:' + src.name}"]
    steps.append([go, "build", "-trimpath", *tags, "-o", str(partial), "."])
    for argv in steps:
        try:
            done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True)
        except OSError as err:
            raise AdapterError(f"{argv[0]}: {err}") from None
        if done.returncode != 0:
            lines = [ln for ln in (done.stderr or done.stdout).splitlines() if ln.strip()]
            last = lines[-1].strip() if lines else f"exit status {done.returncode}"
            raise AdapterError(f"building the Volcano adapter failed: {last}")
    os.replace(partial, binary)
