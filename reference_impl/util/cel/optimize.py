"""The plan-time optimizations of Kubernetes' CEL programs (cel-go's OptOptimize and regex precompilation).

`x in [constants]` against a list of primitive constants becomes a set lookup (an empty list, the constant
false); a conversion of a constant is computed once (its failure is a compile error, "program instantiation
failed"); `matches`, `find` and `findAll` with a constant pattern compile it once (an invalid one is a compile
error) and then call the compiled pattern.
"""

from __future__ import annotations

from typing import Any

from schedcheck.reference.util.cel import registry
from schedcheck.reference.util.cel.errors import CompileError
from schedcheck.reference.util.cel.attributes import Activation, Tracker
from schedcheck.reference.util.cel.evaluator import CONVERSIONS, CallNode, Const, Node, SetMembership
from schedcheck.reference.util.cel.regex import compile_pattern
from schedcheck.reference.util.cel.values import Err, UInt, hash_key, is_num, no_such_overload


def optimize_call(node: CallNode) -> Node:
    if node.overload == "in_list" and isinstance(node.args[1], Const):
        items = node.args[1].value
        if not items:
            return Const(node.id, False)
        members = _members(items)
        if members is not None:
            return SetMembership(node.id, node.args[0], members)
    if node.function in CONVERSIONS and len(node.args) == 1 and isinstance(node.args[0], Const):
        value = node.eval(Activation({}, Tracker(None)))
        if isinstance(value, Err):
            raise CompileError(f"program instantiation failed: {value.message}")
        return Const(node.id, value)
    if node.function in ("matches", "find", "findAll") and len(node.args) > 1 and isinstance(node.args[1], Const) \
            and isinstance(node.args[1].value, str):
        return _compiled_regex(node, node.args[1].value)
    return node


def _members(items: list[Any]) -> set[tuple[str, Any]] | None:
    members: set[tuple[str, Any]] = set()
    for item in items:
        if not (isinstance(item, (bool, str)) or is_num(item)):
            return None
        members.add(hash_key(item))
        if isinstance(item, bool) or not is_num(item):
            continue
        if isinstance(item, float):
            if item == item and item == int(item) and -2.0**63 <= item < 2.0**63:
                members.add(hash_key(int(item)))
            if item == item and item == int(item) and 0 <= item < 2.0**64:
                members.add(hash_key(UInt(int(item))))
        elif isinstance(item, UInt):
            members.add(hash_key(float(item)))
            if item <= 2**63 - 1:
                members.add(hash_key(int(item)))
        else:
            members.add(hash_key(float(item)))
            if item >= 0:
                members.add(hash_key(UInt(item)))
    return members


def _compiled_regex(node: CallNode, pattern: str) -> Node:
    compiled = compile_pattern(pattern)
    if isinstance(compiled, Err):
        raise CompileError(f"program instantiation failed: {compiled.message}")
    function = node.function

    def call(*values: Any) -> Any:
        if function == "matches":
            if len(values) != 2 or not isinstance(values[0], str):
                return Err("no such overload")
            return compiled.search(values[0])
        if not isinstance(values[0], str):
            return no_such_overload(values[0])
        if function == "find":
            return compiled.find(values[0]) if len(values) == 2 else Err("no such overload")
        limit = -1
        if len(values) == 3:
            if isinstance(values[2], bool) or not isinstance(values[2], int) or isinstance(values[2], UInt):
                return no_such_overload(values[2])
            limit = values[2]
        return compiled.find_all(values[0], limit)
    return CallNode(node.id, node.function, node.overload, node.args, registry.Binding(call, None, False, True),
                    "varargs")
