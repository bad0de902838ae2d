"""Go's nil pointers where the reference has to carry one: a task decoded from an extender's reply without a
`Resreq`, an `InitResreq` or a `Pod`, or a `null` victim (plugins/extender_victims.py).

Upstream goes on with such a value and panics ("invalid memory address or nil pointer dereference") at the
first place that reads through it. A `Nil` stands in for it: reading an attribute, comparing or cloning it
raises `NilDereference`, an upstream assertion (util/assertion.py), so the run stops where upstream's process
would. Code that only passes it along (stores it, returns it, renders it as JSON null) goes on, as upstream's.
"""

from __future__ import annotations

from typing import Any, NoReturn

from schedcheck.reference.util.assertion import AssertionViolation


class NilDereference(AssertionViolation):
    """Upstream read through a nil pointer: its scheduler panics here."""


class Nil:
    """A nil pointer of the Go type `what` names (e.g. "*api.Resource of victim default/a-0")."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        object.__setattr__(self, "what", what)

    def _panic(self, reading: str) -> NoReturn:
        raise NilDereference(f"invalid memory address or nil pointer dereference: {reading} of a nil {self.what}")

    def __getattr__(self, name: str) -> Any:
        self._panic(name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._panic(name)

    def __eq__(self, other: object) -> bool:
        self._panic("a comparison")

    def __lt__(self, other: object) -> bool:
        self._panic("a comparison")

    __le__ = __gt__ = __ge__ = __lt__
    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> bool:
        self._panic("its value")

    def __iter__(self) -> NoReturn:
        self._panic("its elements")

    def __repr__(self) -> str:
        return f"nil({self.what})"


def is_nil(value: Any) -> bool:
    """None or a Nil: what Go's `x == nil` (and json.Marshal's null) sees."""
    return value is None or type(value) is Nil
