"""The numa-aware plugin's topology policies (pkg/scheduler/plugins/numaaware/policy/).

A hint is (NUMA affinity bitmask or None, preferred). Each hint provider answers, per container, a
map resource -> hints (None: no preference for that resource; an empty list: no possible affinity);
a provider answering nothing at all has no preference for any resource.

Merging, as the kubelet's topology manager: every provider's hints become one list per resource (no
preference -> [(None, preferred)], none possible -> [(None, not preferred)]); every permutation that
takes one hint from each list is ANDed over the node's NUMA ids (None counts as all of them) and is
preferred only when all its hints are; an empty result is skipped; the best is the first preferred
one found, then among equals the narrower (fewer NUMA nodes, then the lower mask value). The start is
(all NUMA nodes, not preferred).

none admits without computing anything and answers the empty hint (no affinity); best-effort admits
the best hint; restricted admits it only when preferred; single-numa-node first keeps, of each list,
only the preferred hints that name no NUMA node or exactly one, then merges, and admits only a
preferred result. A node whose topology-manager policy is none of the four names gets none's
behaviour.

Bitmasks are Python ints (bit i = NUMA node i); the loader rejects NUMA ids outside 0-63, where
upstream's bitmask constructor fails and its callers dereference the nil mask.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

NONE = "none"
BEST_EFFORT = "best-effort"
RESTRICTED = "restricted"
SINGLE_NUMA_NODE = "single-numa-node"
POLICIES = (NONE, BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE)


class TopologyHint(NamedTuple):
    affinity: int | None  # bitmask of NUMA ids; None: no affinity
    preferred: bool


def mask_of(ids: list[int] | tuple[int, ...] | frozenset[int]) -> int:
    out = 0
    for i in ids:
        out |= 1 << i
    return out


def mask_bits(mask: int) -> list[int]:
    """BitMask.GetBits: the set bits, ascending."""
    return [i for i in range(64) if mask >> i & 1]


def mask_count(mask: int) -> int:
    return bin(mask).count("1")


def is_narrower_than(mask: int, other: int) -> bool:
    """BitMask.IsNarrowerThan: fewer bits, or as many and a lower value."""
    if mask_count(mask) == mask_count(other):
        return mask < other
    return mask_count(mask) < mask_count(other)


def iterate_bit_masks(bits: list[int], callback: Callable[[int], None]) -> None:
    """bitmask.IterateBitMasks: every non-empty subset, by size, each size in lexicographic order."""
    def iterate(rest: list[int], accum: list[int], size: int) -> None:
        if len(accum) == size:
            callback(mask_of(accum))
            return
        for i in range(len(rest)):
            iterate(rest[i + 1:], [*accum, rest[i]], size)

    for size in range(1, len(bits) + 1):
        iterate(bits, [], size)


ProvidersHints = list[dict[str, list[TopologyHint] | None] | None]


def filter_providers_hints(providers_hints: ProvidersHints) -> list[list[TopologyHint]]:
    """filterProvidersHints: one list of hints per (provider, resource). Resources are taken in the map's
    order; upstream iterates a Go map there, which only matters with several resources per provider
    (the one provider, the CPU manager, answers for cpu alone)."""
    out: list[list[TopologyHint]] = []
    for hints in providers_hints:
        if not hints:
            out.append([TopologyHint(None, True)])
            continue
        for resource in hints:
            listed = hints[resource]
            if listed is None:
                out.append([TopologyHint(None, True)])
            elif not listed:
                out.append([TopologyHint(None, False)])
            else:
                out.append(list(listed))
    return out


def _iterate_permutations(all_hints: list[list[TopologyHint]], callback: Callable[[list[TopologyHint]], None]) -> None:
    def iterate(i: int, accum: list[TopologyHint]) -> None:
        if i == len(all_hints):
            callback(accum)
            return
        for hint in all_hints[i]:
            iterate(i + 1, [*accum, hint])

    iterate(0, [])


def merge_permutation(numa_nodes: list[int], permutation: list[TopologyHint]) -> TopologyHint:
    default = mask_of(numa_nodes)
    merged = default
    preferred = True
    for hint in permutation:
        merged &= default if hint.affinity is None else hint.affinity
        if not hint.preferred:
            preferred = False
    return TopologyHint(merged, preferred)


def merge_filtered_hints(numa_nodes: list[int], filtered: list[list[TopologyHint]]) -> TopologyHint:
    best = [TopologyHint(mask_of(numa_nodes), False)]

    def consider(permutation: list[TopologyHint]) -> None:
        merged = merge_permutation(numa_nodes, permutation)
        assert merged.affinity is not None
        if mask_count(merged.affinity) == 0:
            return
        current = best[0]
        if merged.preferred and not current.preferred:
            best[0] = merged
            return
        if not merged.preferred and current.preferred:
            return
        assert current.affinity is not None
        if not is_narrower_than(merged.affinity, current.affinity):
            return
        best[0] = merged

    _iterate_permutations(filtered, consider)
    return best[0]


def filter_single_numa_hints(all_hints: list[list[TopologyHint]]) -> list[list[TopologyHint]]:
    return [[h for h in hints if h.preferred and (h.affinity is None or mask_count(h.affinity) == 1)]
            for hints in all_hints]


class Policy:
    name = NONE

    def __init__(self, numa_nodes: list[int]) -> None:
        self.numa_nodes = numa_nodes

    def predicate(self, providers_hints: ProvidersHints) -> tuple[TopologyHint, bool]:
        return TopologyHint(None, False), True


class PolicyBestEffort(Policy):
    name = BEST_EFFORT

    def predicate(self, providers_hints: ProvidersHints) -> tuple[TopologyHint, bool]:
        best = merge_filtered_hints(self.numa_nodes, filter_providers_hints(providers_hints))
        return best, True


class PolicyRestricted(Policy):
    name = RESTRICTED

    def predicate(self, providers_hints: ProvidersHints) -> tuple[TopologyHint, bool]:
        best = merge_filtered_hints(self.numa_nodes, filter_providers_hints(providers_hints))
        return best, best.preferred


class PolicySingleNumaNode(Policy):
    name = SINGLE_NUMA_NODE

    def predicate(self, providers_hints: ProvidersHints) -> tuple[TopologyHint, bool]:
        filtered = filter_single_numa_hints(filter_providers_hints(providers_hints))
        best = merge_filtered_hints(self.numa_nodes, filtered)
        return best, best.preferred


_BY_NAME: dict[str, type[Policy]] = {
    NONE: Policy, BEST_EFFORT: PolicyBestEffort, RESTRICTED: PolicyRestricted,
    SINGLE_NUMA_NODE: PolicySingleNumaNode,
}


def get_policy(topology_manager_policy: str, numa_nodes: list[int]) -> Policy:
    """GetPolicy: by the node's topology-manager policy; an unknown name behaves as none."""
    return _BY_NAME.get(topology_manager_policy, Policy)(numa_nodes)
