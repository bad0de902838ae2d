"""Every proof obligation of the models, in the order `schedcheck prove` discharges them."""

from __future__ import annotations


def all_obligations() -> list:
    from schedcheck.model import drf, evictions, gang, ledger, proportion, resource

    return [*resource.OBLIGATIONS, *ledger.obligations(), *gang.obligations(), *drf.obligations(),
            *proportion.obligations(), *evictions.obligations()]


def select(names: list[str] | None) -> list:
    """The obligations named (exactly, or a whole group by its prefix such as `ledger`); KeyError names the
    first unknown one."""
    every = all_obligations()
    if not names:
        return every
    chosen = []
    for name in names:
        matched = [o for o in every if o.name == name or o.name.split(".", 1)[0] == name]
        if not matched:
            raise KeyError(name)
        chosen += [o for o in matched if o not in chosen]
    return chosen
