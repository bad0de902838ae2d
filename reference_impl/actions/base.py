"""The action interface and registry (pkg/scheduler/framework/interface.go, actions/factory.go)."""

from __future__ import annotations

import functools

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from schedcheck.reference.framework.session import Session


class Action:
    name = ""

    def execute(self, ssn: Session) -> None:  # pragma: no cover - interface
        raise NotImplementedError


_actions: dict[str, type[Action]] = {}


def register_action(cls: type[Action]) -> type[Action]:
    _actions[cls.name] = cls
    return cls


@functools.cache  # once per process (listing the modules per call cost 4% of a gate run)
def _load_builtin_actions() -> None:
    """Import every module of schedcheck.reference.actions; each registers its action on import."""
    import importlib
    import pkgutil

    import schedcheck.reference.actions as package

    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")


def get_action(name: str) -> Action | None:
    _load_builtin_actions()
    cls = _actions.get(name)
    return cls() if cls is not None else None


def implemented_actions() -> list[str]:
    _load_builtin_actions()
    return sorted(_actions)
