"""Plugin interface and registry (pkg/scheduler/framework/interface.go, plugins/factory.go)."""

from __future__ import annotations

import functools

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from schedcheck.reference.framework.session import Session


class Plugin:
    """A scheduler plugin: registers callbacks on the session when it opens."""

    name = ""

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.arguments = arguments

    def on_session_open(self, ssn: Session) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def on_session_close(self, ssn: Session) -> None:
        pass


PluginBuilder = Callable[[dict[str, Any]], Plugin]
_builders: dict[str, PluginBuilder] = {}


def register_plugin_builder(name: str, builder: PluginBuilder) -> None:
    _builders[name] = builder


def get_plugin_builder(name: str) -> PluginBuilder | None:
    _load_builtin_plugins()
    return _builders.get(name)


def registered_plugins() -> list[str]:
    _load_builtin_plugins()
    return sorted(_builders)


@functools.cache  # once per process: listing the package's modules cost 13% of a gate run when done per call
def _load_builtin_plugins() -> None:
    """Import every module of schedcheck.reference.plugins; each registers its builder on import."""
    import importlib
    import pkgutil

    import schedcheck.reference.plugins as package

    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
