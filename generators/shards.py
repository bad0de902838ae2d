"""Node sharding: NodeShard objects and the scheduler's sharding options for a drawn cluster.

Shrinks towards soft mode with one shard holding the first node and no other shard.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

SHARD_NAME = "volcano"
SHARD_API = "shard.volcano.sh/v1alpha1"


def _shard(name: str, desired: list[str], in_use: list[str]) -> dict[str, Any]:
    return {"apiVersion": SHARD_API, "kind": "NodeShard", "metadata": {"name": name},
            "spec": {"nodesDesired": desired}, "status": {"nodesInUse": in_use}}


@st.composite
def node_shards(draw: st.DrawFn, node_names: list[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(schedulerOptions, NodeShard documents): this scheduler's shard desires a non-empty subset of the
    nodes; sometimes another scheduler's shard still has some of them in use (moving nodes between
    shards is where the in-use subtraction matters)."""
    mode = draw(st.sampled_from(("soft", "hard")))
    desired = draw(st.lists(st.sampled_from(node_names), min_size=1, max_size=len(node_names), unique=True))
    docs = [_shard(SHARD_NAME, sorted(desired), sorted(desired))]
    if draw(st.booleans()):
        held = draw(st.lists(st.sampled_from(node_names), max_size=len(node_names), unique=True))
        rest = sorted(set(node_names) - set(desired))
        docs.append(_shard("other", rest, sorted(held)))
    return {"shardingMode": mode, "shardName": SHARD_NAME}, docs
