"""Build a real session over a small cluster for framework tests."""

from __future__ import annotations

from schedcheck.reference.cache.cache import SchedulerCache
from schedcheck.reference.framework.conf import PluginOption, SchedulerConf, Tier, apply_plugin_conf_defaults
from schedcheck.reference.framework.framework import open_session
from schedcheck.reference.framework.session import Session
from schedcheck.reference.k8s import ClusterObjects


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
