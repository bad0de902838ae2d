"""The optional `schedulerOptions` block: the scheduler's command-line flags that change decisions,
named as upstream's ServerOption fields in camelCase (cmd/scheduler/app/options/options.go)."""

from __future__ import annotations

from typing import Any

from schedcheck.reference.features import MODELLED_FEATURE_GATES, VOLCANO_FEATURE_GATES
from schedcheck.reference.util.scheduler_helper import (
    HARD_SHARDING,
    NONE_SHARDING,
    SOFT_SHARDING,
    ServerOptions,
)
from schedcheck.scenario.errors import describe
from schedcheck.scenario.fields import Fields

OPTIONS_KEY = "schedulerOptions"
# document key -> ServerOptions attribute
OPTION_FIELDS = {
    "shardingMode": "sharding_mode",  # --scheduler-sharding-mode
    "shardName": "shard_name",  # --scheduler-sharding-name
    "minNodesToFind": "min_nodes_to_find",  # --minimum-feasible-nodes
    "minPercentageOfNodesToFind": "min_percentage_of_nodes_to_find",  # --minimum-percentage-nodes-to-find
    "percentageOfNodesToFind": "percentage_of_nodes_to_find",  # --percentage-nodes-to-find
    "ignoredProvisioners": "ignored_provisioners",  # --ignored-provisioners
    "featureGates": "feature_gates",  # --feature-gates (Volcano's gates, as a mapping of name to bool)
}


def read_options(f: Fields, value: Any, warnings: list[str]) -> ServerOptions:
    """ServerOptions from the block (defaults as upstream's); unknown keys are warnings."""
    doc = f.mapping(value, OPTIONS_KEY)
    unknown = sorted(set(doc) - set(OPTION_FIELDS))
    if unknown:
        warnings.append(f"{OPTIONS_KEY}: ignored unknown keys {', '.join(map(str, unknown))} "
                        f"(known: {', '.join(OPTION_FIELDS)})")
    options = ServerOptions()
    options.sharding_mode = f.choice(doc.get("shardingMode"), f"{OPTIONS_KEY}.shardingMode",
                                     {NONE_SHARDING, HARD_SHARDING, SOFT_SHARDING}, default=NONE_SHARDING)
    options.shard_name = f.string(doc.get("shardName"), f"{OPTIONS_KEY}.shardName", default=options.shard_name)
    for key in ("minNodesToFind", "minPercentageOfNodesToFind", "percentageOfNodesToFind"):
        number = f.integer(doc.get(key), f"{OPTIONS_KEY}.{key}", minimum=0)
        if number is not None:
            setattr(options, OPTION_FIELDS[key], number)
    field = f"{OPTIONS_KEY}.ignoredProvisioners"
    options.ignored_provisioners = tuple(f.string(item, f"{field}[{i}]", required=True)
                                         for i, item in enumerate(f.sequence(doc.get("ignoredProvisioners"), field)))
    options.feature_gates = read_feature_gates(f, doc.get("featureGates"), warnings)
    return options


def read_feature_gates(f: Fields, value: Any, warnings: list[str]) -> dict[str, bool]:
    """`featureGates: {Name: true|false}`, as the scheduler's --feature-gates flag: Volcano's gates only
    (pkg/features); only SchedulingGatesQueueAdmission changes what the reference does."""
    field = f"{OPTIONS_KEY}.featureGates"
    gates: dict[str, bool] = {}
    for name, on in f.mapping(value, field).items():
        if name not in VOLCANO_FEATURE_GATES:
            f.fail(f"{field}.{name}", f"not a Volcano feature gate (known: {', '.join(VOLCANO_FEATURE_GATES)})")
        if not isinstance(on, bool):
            f.fail(f"{field}.{name}", f"expected true or false, got {describe(on)}")
        gates[name] = on
        if name not in MODELLED_FEATURE_GATES and on != VOLCANO_FEATURE_GATES[name]:
            warnings.append(f"{field}.{name}: not modelled; the reference and the adapter keep its default "
                            f"({str(VOLCANO_FEATURE_GATES[name]).lower()})")
    return gates


def shard_warnings(options: ServerOptions, objects: Any, warnings: list[str]) -> None:
    """Sharding that cannot do what the user likely meant still runs as upstream would, with a warning."""
    if options.sharding_mode == NONE_SHARDING:
        if objects.node_shards:
            warnings.append(f"NodeShard objects are read but not used: {OPTIONS_KEY}.shardingMode is none")
        return
    names = {shard.name for shard in objects.node_shards}
    if options.shard_name not in names:
        effect = "no node is usable, so nothing is placed" if options.sharding_mode == HARD_SHARDING else \
            "every node counts as another shard's"
        warnings.append(f"{OPTIONS_KEY}.shardName: no NodeShard named {options.shard_name!r} among the objects; "
                        f"upstream then leaves this scheduler's shard empty ({effect})")
    known = {node.name for node in objects.nodes}
    for shard in objects.node_shards:
        missing = sorted(set(shard.nodes_desired) - known)
        if missing:
            warnings.append(f"NodeShard {shard.name}: spec.nodesDesired names nodes not among the objects: "
                            f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}")
