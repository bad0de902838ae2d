"""Function bindings, as the environment's libraries register them with cel-go.

A function is bound either as a singleton (one implementation for all its overloads, reached when the first
argument has the operand trait, cel-go's standard operators) or per overload (each implementation behind a
runtime type guard on the declared signature; a function-level dispatcher tries them in order when the checker
left more than one). The library modules fill these tables when `cel.libraries` imports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from schedcheck.reference.util.cel.values import Err


@dataclass(frozen=True)
class Binding:
    fn: Callable[..., Any]  # argument values (a member's receiver first) -> value or Err
    trait: str | None = None  # singletons: the trait the first argument must have
    non_strict: bool = False  # errors reach the implementation instead of ending the call
    varargs: bool = False  # a FunctionBinding: evaluated as cel-go's evalVarArgs whatever the argument count
    unguarded: bool = False  # the function disables cel-go's runtime type guards (DisableTypeGuards)


SINGLETONS: dict[str, Binding] = {}
OVERLOADS: dict[str, Binding] = {}
# Runtime cost of an overload, as an OverloadCostTracker reports it: (arguments, result) -> cost or None.
COST_TRACKERS: dict[str, Callable[[list[Any], Any], int | None]] = {}


def singleton(function: str, trait: str | None = None, non_strict: bool = False,
              varargs: bool = False) -> Callable[[Callable], Callable]:
    def register(fn: Callable) -> Callable:
        SINGLETONS[function] = Binding(fn, trait, non_strict, varargs)
        return fn
    return register


def overload(*ids: str, non_strict: bool = False, varargs: bool = False,
             unguarded: bool = False) -> Callable[[Callable], Callable]:
    """Bind overloads (a UnaryBinding or BinaryBinding, or with `varargs` a FunctionBinding)."""
    def register(fn: Callable) -> Callable:
        for overload_id in ids:
            OVERLOADS[overload_id] = Binding(fn, None, non_strict, varargs, unguarded)
        return fn
    return register


def returns(value: Any, error: str | None) -> Any:
    return Err(error) if error is not None else value
