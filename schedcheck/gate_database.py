"""The gate's Hypothesis example database: a folder, or a Redis server shared by every worker.

A failure one worker found is saved to the database, and every worker (and every later run) replays
the saved examples first. A folder serves the workers of one machine; `redis://HOST:PORT/DB` serves
workers on many machines through Hypothesis's own RedisExampleDatabase.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
KEY_PREFIX = b"schedcheck-gate:"


class DatabaseError(ValueError):
    """The database named on the command line cannot be used (one line, for the user)."""


def is_redis(spec: str) -> bool:
    return spec.startswith(REDIS_SCHEMES)


def open_database(spec: str, check: bool = False) -> ExampleDatabase:
    """The example database `spec` names: a Redis URL or a folder (created when missing).

    With `check`, a Redis server is pinged first, so an unreachable one is a clear error up front
    rather than a failure deep inside a worker.
    """
    if not is_redis(spec):
        try:
            Path(spec).mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a file of that name, a read-only or missing parent
            raise DatabaseError(f"{spec}: cannot use it as the database folder: {exc.strerror or exc}") from None
        return DirectoryBasedExampleDatabase(spec)
    try:
        import redis
        from hypothesis.extra.redis import RedisExampleDatabase
    except ImportError as exc:
        raise DatabaseError(f"{spec}: a Redis database needs the redis package "
                            f"(pip install 'schedcheck[cluster]'): {exc}") from None
    try:
        client = redis.Redis.from_url(spec)
        if check:
            client.ping()
    except (ValueError, redis.RedisError) as exc:
        raise DatabaseError(f"{spec}: {exc}") from None
    return RedisExampleDatabase(client, key_prefix=KEY_PREFIX)


class FailureStore:
    """The failing scenarios the gate's workers found, kept in the example database so that every
    worker, on this machine or another, and every later run retries them before generating anything.

    Hypothesis's own replay of saved examples is off in the gate: each batch runs under `@seed` (the
    printed seed reproduces the run), and Hypothesis neither saves nor replays examples of a seeded
    test. So the gate stores the failing documents themselves, under a key per mutant and strictness.
    """

    LIMIT = 50  # documents retried at most per look

    def __init__(self, database: ExampleDatabase, mutant: str | None, strict: bool) -> None:
        self.database = database
        self.key = KEY_PREFIX + f"failures:{mutant or 'reference'}:{'strict' if strict else 'safety'}".encode()
        self.tried: set[bytes] = set()

    def untried(self) -> list[dict[str, Any]]:
        """Saved failing documents this store has not handed out yet, smallest first."""
        found = sorted((value for value in self.database.fetch(self.key) if value not in self.tried),
                       key=lambda value: (len(value), value))[:self.LIMIT]
        docs = []
        for value in found:
            self.tried.add(value)
            with contextlib.suppress(ValueError):
                doc = json.loads(value)
                if isinstance(doc, dict):
                    docs.append(doc)
        return docs

    def save(self, doc: dict[str, Any]) -> None:
        value = _encode(doc)
        self.tried.add(value)  # its finder need not retry it
        self.database.save(self.key, value)

    def forget(self, doc: dict[str, Any]) -> None:
        """A saved document that no longer fails (the bug was fixed) is dropped."""
        self.database.delete(self.key, _encode(doc))


def _encode(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str).encode()
