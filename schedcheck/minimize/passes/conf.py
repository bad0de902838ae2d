"""Passes over the scheduler conf: actions, per-action configurations, plugins (then tiers left
empty), and plugin arguments and enable flags."""

from __future__ import annotations

from schedcheck import document as d
from schedcheck.minimize.edits import Doc, Edit, dropper


def action_edits(doc: Doc) -> list[Edit]:
    conf = d.conf(doc)
    if conf is None:
        return []
    edits: list[Edit] = []
    actions = d.actions(conf)
    if len(actions) > 1:
        for index, name in enumerate(actions):
            def make(current: Doc, index: int = index) -> list[Doc]:
                remaining = actions[:index] + actions[index + 1:]
                current["schedulerConf"]["actions"] = ", ".join(remaining)
                return [current]
            edits.append((f"drop action {name}", make))
    configurations = conf.get("configurations")
    if isinstance(configurations, list):
        if configurations:
            edits.append(("drop configurations", dropper(("schedulerConf", "configurations"))))
        for index in range(len(configurations)):
            edits.append((f"drop configurations[{index}]", dropper(("schedulerConf", "configurations", index))))
    elif configurations is not None:
        edits.append(("drop configurations", dropper(("schedulerConf", "configurations"))))
    return edits


def plugin_edits(doc: Doc) -> list[Edit]:
    conf = d.conf(doc)
    if conf is None or not isinstance(conf.get("tiers"), list):
        return []
    edits: list[Edit] = []
    for t, tier in enumerate(conf["tiers"]):
        plugins = tier.get("plugins") if isinstance(tier, dict) else None
        if isinstance(plugins, list):
            for p in range(len(plugins)):
                edits.append((f"drop tiers[{t}].plugins[{p}]", dropper(("schedulerConf", "tiers", t, "plugins", p))))
    for t, tier in enumerate(conf["tiers"]):
        if not isinstance(tier, dict) or not tier.get("plugins"):
            edits.append((f"drop empty tiers[{t}]", dropper(("schedulerConf", "tiers", t))))
    return edits


def plugin_option_edits(doc: Doc) -> list[Edit]:
    conf = d.conf(doc)
    if conf is None:
        return []
    edits: list[Edit] = []
    for t, tier in enumerate(d.tiers(conf)):
        plugins = tier.get("plugins")
        if not isinstance(plugins, list):
            continue
        for p, plugin in enumerate(plugins):
            if not isinstance(plugin, dict):
                continue
            base = ("schedulerConf", "tiers", t, "plugins", p)
            if "arguments" in plugin:
                edits.append((f"drop {plugin.get('name')} arguments", dropper(base + ("arguments",))))
                if isinstance(plugin["arguments"], dict) and len(plugin["arguments"]) > 1:
                    for name in plugin["arguments"]:
                        edits.append((f"drop {plugin.get('name')} argument {name}",
                                      dropper(base + ("arguments", name))))
            for name in plugin:
                if name not in ("name", "arguments"):
                    edits.append((f"drop {plugin.get('name')} {name}", dropper(base + (name,))))
    return edits
