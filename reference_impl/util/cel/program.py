"""Compiling and running a selector as k8s.io/dynamic-resource-allocation's CompileCELExpression and
DeviceMatches do: parse, type-check in the NewExpressions (admission) or StoredExpressions (scheduler)
environment, run the AST validators, require a bool (or `any`) result, plan the program (whose failures are
compile errors too), and evaluate it on one device under the runtime cost limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schedcheck.reference.util.cel import libs  # noqa: F401  (registers the bindings)
from schedcheck.reference.util.cel import typesys as ty
from schedcheck.reference.util.cel.nodes import Call, Lit
from schedcheck.reference.util.cel.checker import Checked, check, walk
from schedcheck.reference.util.cel.errors import CompileError
from schedcheck.reference.util.cel.attributes import Activation, Tracker
from schedcheck.reference.util.cel.evaluator import Node
from schedcheck.reference.util.cel.planner import Planner
from schedcheck.reference.util.cel.libs.strformat import validate_format_calls
from schedcheck.reference.util.cel.parser import parse
from schedcheck.reference.util.cel.regex import compile_pattern
from schedcheck.reference.util.cel.values import CostLimitExceeded, Err, GoPanic

COST_LIMIT = 1_000_000  # resourceapi.CELSelectorExpressionMaxCost: the runtime limit, and the estimate's at admission
MAX_LENGTH = 10 * 1024  # resourceapi.CELSelectorExpressionMaxLength (the API server's check, before compiling)


@dataclass
class Program:
    text: str
    checked: Checked
    plan: Node


def _literal_calls(checked: Checked) -> None:
    """ValidateDurationLiterals, ValidateTimestampLiterals and ValidateRegexLiterals: a literal argument of
    duration(), timestamp() is evaluated, a literal first argument of matches() compiled, at check time."""
    for node, _parents in walk(checked.root):
        if not isinstance(node, Call) or not node.args or not isinstance(node.args[0], Lit):
            continue
        if node.function in ("duration", "timestamp"):
            sub = Checked(node, checked.types, checked.idents, checked.overloads)
            try:
                value = Planner(sub).plan(node).eval(Activation({}, Tracker(None)))
            except CompileError as err:
                raise CompileError(f"invalid {node.function} argument") from err
            if isinstance(value, Err):
                raise CompileError(f"invalid {node.function} argument")
        if node.function == "matches" and isinstance(node.args[0].value, str):
            if isinstance(compile_pattern(node.args[0].value), Err):
                raise CompileError("invalid matches argument")


def compile_expression(text: str, stored: bool) -> Program:
    """CompileCELExpression (a CompileError where it reports an error)."""
    checked = check(parse(text), stored, [_literal_calls, validate_format_calls])
    result = checked.type(checked.root)
    if result != ty.BOOL and result != ty.ANY:
        raise CompileError(f"must evaluate to bool or the unknown type, not {ty.format_type(result)}")
    return Program(text, checked, Planner(checked).plan(checked.root))


def run(program: Program, variables: dict[str, Any], limit: int | None = COST_LIMIT) -> tuple[Any, int]:
    """Evaluate: (the value or an Err, the cost counted); cel-go's panics and its cancellation end as errors."""
    tracker = Tracker(limit)
    try:
        value = program.plan.eval(Activation(variables, tracker))
    except CostLimitExceeded:
        return Err("operation cancelled: actual cost limit exceeded"), tracker.cost
    except GoPanic as panic:
        return Err(f"internal error: {panic}"), tracker.cost
    return value, tracker.cost
