"""Build a real session over a small cluster for framework tests."""

from __future__ import annotations

from reference_impl.cache.cache import SchedulerCache
from reference_impl.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from reference_impl.framework.framework import open_session
from reference_impl.framework.session import Session
from reference_impl.k8s import ClusterObjects


def conf(*tiers: list[str], actions: str = "enqueue, allocate", **flags: dict[str, bool]) -> SchedulerConf:
    built = []
    for names in tiers:
        options = []
        for name in names:
            option = PluginOption(name, flags=dict(flags.get(name, {})))
            apply_plugin_conf_defaults(option)
            options.append(option)
        built.append(Tier(options))
    return SchedulerConf(actions=[a.strip() for a in actions.split(",")], tiers=built)


def session(objects: ClusterObjects, scheduler_conf: SchedulerConf | None = None, seed: int = 0) -> Session:
    cache = SchedulerCache(objects)
    return open_session(cache, scheduler_conf or conf(["gang"]), cycle=0, seed=seed)
