"""The worst-case cost estimate the API server compares with the limit (1,000,000) before it admits a selector:
cel-go's checker.Cost over the checked expression, re-implemented, with Kubernetes' library estimator, the
estimators of the lists and sets extensions, and the DRA compiler's size estimator (the largest driver name,
domain, attribute name and value, and the number of attributes a device may have).

A cost or a size is a (min, max) pair of unsigned 64-bit numbers whose arithmetic saturates at 2^64-1.
"""

from __future__ import annotations

from dataclasses import dataclass

from schedcheck.reference.util.cel import typesys as ty
from schedcheck.reference.util.cel.nodes import ACCU, Call, Comp, Expr, Ident, ListLit, Lit, MapLit, Select
from schedcheck.reference.util.cel.checker import Checked
from schedcheck.reference.util.cel.cost_calls import call_estimate
from schedcheck.reference.util.cel.cost_sizes import MAX, Node, Range, add, device_size, mul, union
from schedcheck.reference.util.cel.parser import LEGACY_ACCU

UNKNOWN: Range = (0, MAX)


@dataclass
class _Local:
    path: list[str] | None
    size: Range | None
    entry: tuple[str, Range, Range] | None  # container kind, key size, value size


class Coster:
    def __init__(self, checked: Checked) -> None:
        self.checked = checked
        self.paths: dict[int, list[str]] = {}
        self.locals: dict[str, list[_Local]] = {}
        self.sizes: dict[int, Range] = {}
        self.entries: dict[int, tuple[str, Range, Range]] = {}

    # -- bookkeeping (paths, sizes, entry sizes of containers, local variables) --
    def type(self, e: Expr) -> ty.T:
        return self.checked.types[e.id]

    def local(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def push(self, name: str, local: _Local) -> None:
        self.locals.setdefault(name, []).append(local)

    def pop(self, name: str) -> None:
        self.locals[name].pop()

    def path(self, e: Expr) -> list[str]:
        if isinstance(e, Ident):
            found = self.local(e.name)
            if found is not None:
                return list(found.path or [])
        return list(self.paths.get(e.id, []))

    def node(self, e: Expr) -> Node:
        path: list[str] | None = self.path(e)
        if path and path[0] in (ACCU, LEGACY_ACCU):
            path = None
        return Node(path, self.type(e), e, self.size(e))

    def set_size(self, e: Expr, size: Range | None) -> None:
        if size is not None:
            self.sizes[e.id] = size

    def size(self, e: Expr) -> Range | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        literal = _literal_size(e)
        if literal is not None:
            return literal
        estimated = device_size(self.path(e))
        if estimated is not None:
            self.sizes[e.id] = estimated
            return estimated
        if ty.is_scalar(self.type(e)):
            return (1, 1)
        if isinstance(e, Ident):
            found = self.local(e.name)
            if found is not None and found.size is not None:
                return found.size
        return None

    def size_or_unknown(self, e: Expr | Node) -> Range:
        size = e.size if isinstance(e, Node) else self.size(e)
        return size if size is not None else UNKNOWN

    def entry(self, e: Expr) -> tuple[str, Range, Range] | None:
        if e.id in self.entries:
            return self.entries[e.id]
        if isinstance(e, Ident):
            found = self.local(e.name)
            if found is not None:
                return found.entry
        return None

    def copy_sizes(self, dst: Expr, src: Expr) -> None:
        self.set_size(dst, self.size(src))
        entry = self.entry(src)
        if entry is not None:
            self.entries[dst.id] = entry

    def push_iter(self, name: str, range_expr: Expr, which: str) -> None:
        entry = self.entry(range_expr)
        kind = entry[0] if entry is not None else self.type(range_expr).kind
        if which == "single":
            size = entry[1] if entry is not None else None
            sub = "@keys"
            if kind == "list":
                size, sub = (entry[2] if entry is not None else None), "@items"
        elif which == "key":
            size, sub = (entry[1] if entry is not None else None), ("@indices" if kind == "list" else "@keys")
        else:
            size, sub = (entry[2] if entry is not None else None), ("@items" if kind == "list" else "@values")
        self.push(name, _Local(self.path(range_expr) + [sub], size, None))

    # -- the walk --
    def cost(self, e: Expr) -> Range:
        if isinstance(e, Lit):
            return (0, 0)
        if isinstance(e, Ident):
            found = self.local(e.name)
            self.paths[e.id] = list(found.path or []) if found is not None else [e.name]
            return (1, 1)
        if isinstance(e, Select):
            return self.cost_select(e)
        if isinstance(e, Call):
            return self.cost_call(e)
        if isinstance(e, ListLit):
            total, item = (0, 0), ((0 if not e.elems else MAX), 0)
            for elem in e.elems:
                total = add(total, self.cost(elem))
                item = union(item, self.size_or_unknown(elem))
            self.entries[e.id] = ("list", (1, 1), item)
            return add(total, (10, 10))
        if isinstance(e, MapLit):
            total = (0, 0)
            key = value = ((0 if not e.entries else MAX), 0)
            for k, v, _opt in e.entries:
                total = add(add(total, self.cost(k)), self.cost(v))
                key, value = union(key, self.size_or_unknown(k)), union(value, self.size_or_unknown(v))
            self.entries[e.id] = ("map", key, value)
            return add(total, (30, 30))
        if isinstance(e, Comp):
            return self.cost_bind(e) if _is_bind(e) else self.cost_comprehension(e)
        return (0, 0)

    def cost_select(self, e: Select) -> Range:
        if e.test_only:
            return self.cost(e.operand)  # Kubernetes: a presence test costs nothing of its own
        total = self.cost(e.operand)
        if self.type(e.operand).kind in ("map", "struct", "typeparam"):
            total = add(total, (1, 1))
        self.paths[e.id] = self.path(e.operand) + [e.field]
        return total

    def cost_call(self, e: Call) -> Range:
        if e.function == "dyn":
            arg_cost = self.cost(e.args[0])
            self.copy_sizes(e, e.args[0])
            return add((1, 1), arg_cost)
        arg_costs = [self.cost(a) for a in e.args]
        args = [self.node(a) for a in e.args]
        overloads = self.checked.overloads.get(e.id, [])
        if not overloads:
            return (0, 0)
        total = (0, 0)
        target = None
        if e.target is not None:
            total = add(total, self.cost(e.target))
            target = self.node(e.target)
        fn_cost = (MAX, 0)
        result_size: Range | None = None
        for overload in overloads:
            est_cost, est_size = call_estimate(self, e, overload.id, target, args, arg_costs)
            fn_cost = union(fn_cost, est_cost)
            if est_size is not None:
                result_size = est_size if result_size is None else union(result_size, est_size)
            if overload.id in ("index_list", "index_map") and e.args:
                entry = self.entry(e.args[0])
                result_size = entry[2] if entry is not None else None
                self.paths[e.id] = self.path(e.args[0]) + ["@items" if overload.id == "index_list" else "@values"]
            if result_size is None:
                result_size = self.size(e)
        self.set_size(e, result_size)
        return add(total, fn_cost)

    def cost_comprehension(self, e: Comp) -> Range:
        total = add(self.cost(e.iter_range), self.cost(e.accu_init))
        self.push(e.accu_var, _Local(self.path(e.accu_init), self.size(e.accu_init), self.entry(e.accu_init)))
        if e.iter_var2:
            self.push_iter(e.iter_var, e.iter_range, "key")
            self.push_iter(e.iter_var2, e.iter_range, "value")
        else:
            self.push_iter(e.iter_var, e.iter_range, "single")
        loop = self.cost(e.loop_cond)
        step = self.cost(e.loop_step)
        self.pop(e.iter_var)
        if e.iter_var2:
            self.pop(e.iter_var2)
        total = add(total, self.cost(e.result))
        self.pop(e.accu_var)
        count = self.size_or_unknown(e.iter_range)
        total = add(total, mul(count, add(step, loop)))
        if isinstance(e.accu_init, Lit):
            self.set_size(e, self.size(e.accu_init))
        elif isinstance(e.accu_init, (ListLit, MapLit)):
            self.set_size(e, count)
            step_entry = self.entry(e.loop_step)
            if step_entry is not None:
                self.entries[e.id] = step_entry
        return total

    def cost_bind(self, e: Comp) -> Range:
        total = add(self.cost(e.iter_range), self.cost(e.accu_init))
        self.push(e.accu_var, _Local(self.path(e.accu_init), self.size(e.accu_init), self.entry(e.accu_init)))
        total = add(total, self.cost(e.result))
        self.pop(e.accu_var)
        self.copy_sizes(e, e.result)
        return total


def _is_bind(e: Comp) -> bool:
    return isinstance(e.iter_range, ListLit) and not e.iter_range.elems and isinstance(e.loop_cond, Lit) \
        and e.loop_cond.value is False and e.accu_var != ACCU


def _literal_size(e: Expr) -> Range | None:
    if isinstance(e, Lit):
        if isinstance(e.value, str):
            return (len(e.value), len(e.value))
        if isinstance(e.value, bytes):
            return (len(e.value), len(e.value))
        return (1, 1)
    if isinstance(e, ListLit):
        return (len(e.elems), len(e.elems))
    if isinstance(e, MapLit):
        return (len(e.entries), len(e.entries))
    return None


def estimate(checked: Checked) -> int:
    """The estimated maximum cost (checker.Cost(...).Max)."""
    return Coster(checked).cost(checked.root)[1]

