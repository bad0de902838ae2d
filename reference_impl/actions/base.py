"""The action interface and registry (pkg/scheduler/framework/interface.go, actions/factory.go)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reference_impl.framework.session import Session


class Action:
    name = ""

    def execute(self, ssn: Session) -> None:  # pragma: no cover - interface
        raise NotImplementedError


_actions: dict[str, type[Action]] = {}


def register_action(cls: type[Action]) -> type[Action]:
    _actions[cls.name] = cls
    return cls


def get_action(name: str) -> Action | None:
    import reference_impl.actions  # noqa: F401  (registers on import)

    cls = _actions.get(name)
    return cls() if cls is not None else None


def implemented_actions() -> list[str]:
    import reference_impl.actions  # noqa: F401

    return sorted(_actions)
