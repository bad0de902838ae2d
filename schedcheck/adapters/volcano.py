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
import re
import shutil
import subprocess
from pathlib import Path

ADAPTER_DIR = Path(__file__).resolve().parents[2] / "adapters" / "volcano"
BINARY_NAME = "volcano-adapter"
APIS_STAGING = Path("staging") / "src" / "volcano.sh" / "apis"


class AdapterError(RuntimeError):
    """The adapter cannot be had; the message is one line."""


def adapter_command(src: Path | None = None) -> list[str]:
    """The argv of the Volcano adapter (the scenario path is appended by the caller): built from the checkout
    `src` when given, else as the environment says (a prebuilt binary, SCHEDCHECK_VOLCANO_SRC, or the pin)."""
    if src is not None:
        return [str(build_adapter(src))]
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
PINNED_VERSION_TAGS = ("volcano_hypernodes", "volcano_shardstatus", "volcano_nodeshards", "volcano_kubemetrics")  # what v1.14.1 (the pin) has


def version_tags(src: Path | None) -> list[str]:
    """The adapter's per-version shims (build tags) a Volcano checkout needs: which upstream APIs it has."""
    if src is None:
        return list(PINNED_VERSION_TAGS)
    tags = []
    if _mentions(src / "pkg/scheduler/api", "func NewHyperNodesInfo("):
        tags.append("volcano_hypernodes")
    if _mentions(src / "pkg/scheduler/cache", "UpdateNodeShardStatus("):
        tags.append("volcano_shardstatus")
    if (src / NODE_SHARDS_MARKER).is_file():
        tags.append("volcano_nodeshards")
    if _mentions(src / "pkg/scheduler/metrics", "func InitKubeSchedulerRelatedMetrics("):
        tags.append("volcano_kubemetrics")
    if re.search(r"func NewCustomMockSchedulerCache\([^)]*VolumeBinder", _read(src / "pkg/scheduler/cache/cache_mock.go")):
        tags.append("volcano_volumebinder")
    if _mentions(src / "pkg/scheduler/cache", "func (sc *SchedulerCache) buildTaskDRAInfo("):
        tags.append("volcano_dra")  # the cache reads resource.k8s.io/v1 claims (DRA quotas, after v1.14)
    if _mentions(src / "pkg/scheduler/cache", "func (sc *SchedulerCache) AddUnassignedNumaPods("):
        tags.append("volcano_numa")  # the cache keeps numa-aware's CPU decisions across sessions (after v1.14)
    if _mentions(src / "pkg/scheduler/api/devices", "func SetClient("):
        tags.append("volcano_devclient")  # the device ConfigMap is read through a client that can be set
    if _mentions(src / "pkg/scheduler/api", "func (ti *TaskInfo) MergePodAnnotations("):
        tags.append("volcano_podannotations")  # the bind carries the scheduler's pod annotations (device choice)
    if _mentions(src / "pkg/scheduler/gate", "func NewSchGateManager("):
        tags.append("volcano_schgate")  # the queue-allocation gate manager (SchedulingGatesQueueAdmission)
    return tags


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.is_file() else ""


def _mentions(folder: Path, text: str) -> bool:
    return any(text in f.read_text(errors="replace") for f in folder.glob("*.go") if not f.name.endswith("_test.go"))


def volcano_source() -> Path | None:
    """The Volcano checkout named by SCHEDCHECK_VOLCANO_SRC, checked, or None."""
    value = os.environ.get("SCHEDCHECK_VOLCANO_SRC")
    if not value:
        return None
    src = Path(value).expanduser().resolve()
    go_mod = src / "go.mod"
    if not go_mod.is_file() or "module volcano.sh/volcano" not in go_mod.read_text(errors="replace"):
        raise AdapterError(f"SCHEDCHECK_VOLCANO_SRC={value}: not a Volcano checkout (no go.mod of volcano.sh/volcano)")
    if not (src / APIS_STAGING / "go.mod").is_file() and required_apis_version(go_mod) is None:
        raise AdapterError(f"SCHEDCHECK_VOLCANO_SRC={value}: no {APIS_STAGING}/go.mod and no volcano.sh/apis version "
                           "required in go.mod")
    return src


def required_apis_version(go_mod: Path) -> str | None:
    """The published volcano.sh/apis version a checkout requires (releases before v1.14 have no staging copy)."""
    match = re.search(r"^\s*(?:require\s+)?volcano\.sh/apis\s+(v\S+)", go_mod.read_text(errors="replace"), re.M)
    return match.group(1) if match and match.group(1) != "v0.0.0" else None


COMMIT_FILE = ".schedcheck-commit"  # written by `schedcheck rediscover` into a tree exported without .git


def source_commit(src: Path) -> str:
    """The commit a checkout was made from: git's HEAD, else the exporter's marker file, else ''."""
    head = _git_head(src)
    if head:
        return head
    marker = src / COMMIT_FILE
    return marker.read_text().strip() if marker.is_file() else ""


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
        digest.update(source_commit(src).encode())
    return digest.hexdigest()[:16]


def _git_head(src: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def build_adapter(src: Path | None = None) -> Path:
    """Build the adapter (from the checkout `src`, else SCHEDCHECK_VOLCANO_SRC's, else the pinned release)
    unless the cache already holds this version; return the binary."""
    go = shutil.which("go")
    if go is None:
        raise AdapterError("go not found on PATH (install Go >= 1.26, or set SCHEDCHECK_VOLCANO_ADAPTER)")
    src = src if src is not None else volcano_source()
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


def _require_lines(go_mod_text: str) -> list[str]:
    """The `module version` lines of a go.mod's require directives (single and block forms)."""
    out: list[str] = []
    in_block = False
    for raw in go_mod_text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if line.startswith("require ("):
            in_block = True
        elif in_block and line == ")":
            in_block = False
        elif in_block and line:
            out.append(line)
        elif line.startswith("require "):
            out.append(line[len("require "):].strip())
    return out


def checkout_go_mod(src: Path) -> str:
    """The adapter's go.mod for a Volcano checkout: the checkout's requires and version pins, Volcano itself
    from the checkout, volcano.sh/apis from its staging directory (v1.14 and later) or the published version
    it requires (earlier releases)."""
    text = (src / "go.mod").read_text(errors="replace")
    go_line = re.search(r"^go\s+(\S+)", (ADAPTER_DIR / "go.mod").read_text(), re.M)  # the adapter's language
    staging = src / APIS_STAGING
    apis = str(staging) if (staging / "go.mod").is_file() else f"volcano.sh/apis {required_apis_version(src / 'go.mod')}"
    requires = [line for line in _require_lines(text) if not line.startswith("volcano.sh/apis ")]
    present = {line.split()[0] for line in requires}
    for line in _require_lines((ADAPTER_DIR / "go.mod").read_text()):  # the adapter's own requires, when missing
        name = line.split()[0]
        if name not in present and not name.startswith("volcano.sh/"):
            requires.append(line)
    lines = ["module schedcheck.dev/adapters/volcano", "", f"go {go_line.group(1) if go_line else '1.26.0'}", "",
             "require (", "\tvolcano.sh/volcano v0.0.0", "\tvolcano.sh/apis v0.0.0",
             *(f"\t{line}" for line in requires), ")", "",
             f"replace volcano.sh/volcano => {src}", f"replace volcano.sh/apis => {apis}"]
    lines += [f"replace {old} => {new.replace('@', ' ')}" for old, new in module_replaces(src / "go.mod")]
    return "\n".join(lines) + "\n"


def _build(go: str, src: Path | None, target_dir: Path, binary: Path) -> None:
    work = target_dir / "src"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    for f in source_files():
        shutil.copy2(f, work / f.name)
    env = {**os.environ, "GOFLAGS": (os.environ.get("GOFLAGS", "") + " -mod=mod").strip()}
    steps = []
    if src is not None:
        # Build against the checkout's own dependency versions (its Kubernetes release, whatever its age):
        # the adapter's go.mod gives way to one made from the checkout's requires and version pins.
        (work / "go.mod").write_text(checkout_go_mod(src))
        sums = (src / "go.sum").read_text(errors="replace") if (src / "go.sum").is_file() else ""
        (work / "go.sum").write_text(sums + (ADAPTER_DIR / "go.sum").read_text())
    partial = target_dir / (BINARY_NAME + ".partial")
    flags = ["-tags", ",".join(version_tags(src))]
    if src is not None:
        head = source_commit(src)
        flags += ["-ldflags", f"-X main.upstreamSource={head[:12] if head else 'local-tree:' + src.name}"]
    steps.append([go, "build", "-trimpath", *flags, "-o", str(partial), "."])
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
