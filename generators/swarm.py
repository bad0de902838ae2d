"""Swarm testing: each scenario leans on a random subset of rare features.

A bug that needs a rare feature in a contested state (a running pod marked not preemptable where a
preemptor needs room, a preemptor whose class says preemptionPolicy: Never, a BestEffort
preemptor, admission with minResources in a full cluster) is found far sooner when some scenarios
have the feature often rather than every scenario having it rarely (Groce et al., "Swarm Testing",
ISSTA 2012). Every flag shrinks to False, which is the plain distribution, so a counterexample
keeps only the features its bug needs.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st


@dataclass(frozen=True)
class Swarm:
    not_preemptable: bool = False  # many pods marked volcano.sh/preemptable=false
    never_policy: bool = False  # PriorityClasses with preemptionPolicy: Never, often
    best_effort: bool = False  # roles of pods that request nothing
    min_resources: bool = False  # most PodGroups set minResources (admission decides)
    contested: bool = False  # a full cluster: the filler job takes what the nodes have left
    host_ports: bool = False  # jobs whose pods expose a host port (NodePorts)
    pod_affinity: bool = False  # jobs whose pods prefer or avoid other kinds of pods (InterPodAffinity)
    sharded: bool = False  # node sharding on (NodeShard objects, hard or soft mode)
    topology: bool = False  # HyperNodes over the nodes, jobs with network-topology constraints


PLAIN = Swarm()


def swarms() -> st.SearchStrategy[Swarm]:
    """A random subset of the features switched on; shrinks to none."""
    return st.builds(Swarm, *(st.booleans() for _ in range(9)))
