"""Read a volcano-scheduler.conf document into a SchedulerConf.

What upstream does (pkg/scheduler/util.go UnmarshalSchedulerConf and
scheduler.go loadSchedulerConf, read at ed72c7c8):
- the document is unmarshalled into conf.SchedulerConfiguration; keys it does
  not know are ignored;
- for every plugin of every tier, a drf entry with enableHierarchy true and a
  proportion entry in the same tier reject the conf; then every unset enable
  flag but enableHierarchy and enabledClusterOrder is set to true
  (plugins/defaults.go ApplyPluginConfDefaults);
- `actions` is split on commas and each trimmed name looked up. A missing
  `actions` key is the empty string, which splits into one empty name that is
  no action, so a conf without actions is rejected like one naming an unknown
  action. A rejected conf is logged and the scheduler keeps the conf it had
  (the built-in default at start). Here a rejected conf is an input error;
- a missing `tiers` key is not an error: the conf runs with no plugins at all;
- `configurations` is searched by action name, first match wins
  (framework/arguments.go GetArgOfActionFromConf); names are not checked.
`pipelinePersistence` (upstream | persistent, default upstream) is schedcheck's own key, not
upstream's: it selects the unmerged cross-session pipelined-state design (conf.py).
`builtDirectly: true` is schedcheck's too: the conf is taken as upstream's unit tests hand it to
OpenSession, not through the loader, so unset enable flags stay off and the drf-hierarchy / proportion
conflict is not refused (`schedcheck upstream-tests` writes it on every case it extracts).
Upstream skips (with an error log) a plugin name it has no builder for, at
session open; here an unknown plugin name is an input error. The names of upstream's
test-only plugins (testplugins.py) are known too, with their arguments checked.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

import yaml

from schedcheck.reference.framework.conf import (
    BUILT_DIRECTLY_KEY,
    ENABLE_FLAGS,
    KNOWN_ACTIONS,
    KNOWN_PLUGINS,
    PERSISTENCE_MODES,
    PERSISTENCE_UPSTREAM,
    PluginOption,
    SchedulerConf,
    Tier,
    apply_plugin_conf_defaults,
)
from schedcheck.scenario.errors import ScenarioError, describe
from schedcheck.scenario.fields import Fields
from schedcheck.scenario.testplugins import TEST_PLUGINS, check_arguments

CONF_OBJECT = "schedulerConf"
CONFIGMAP_KEY = "volcano-scheduler.conf"
PERSISTENCE_KEY = "pipelinePersistence"
_TOP_KEYS = {"actions", "tiers", "configurations", "metrics", PERSISTENCE_KEY, BUILT_DIRECTLY_KEY}
_PLUGIN_KEYS = {"name", "arguments"} | set(ENABLE_FLAGS)


class StrictYamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml's parser when built with it
    """PyYAML's safe loader, but a key repeated in one mapping is an error, and a plain y, Y, n or N is a
    boolean, as YAML 1.1 says and as Kubernetes' and Volcano's readers (sigs.k8s.io/yaml over go-yaml v2)
    take it: PyYAML leaves those four strings, so `pool: y` would load here and fail upstream."""

    bool_values = {**yaml.constructor.SafeConstructor.bool_values, "y": True, "n": False}

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:
                continue  # unhashable; the base class reports it
            if duplicate:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        return super().construct_mapping(node, deep)


_YAML_11_SHORT_BOOLS = re.compile(r"^(?:y|Y|n|N)$")
StrictYamlLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _YAML_11_SHORT_BOOLS, list("yYnN"))
# and yaml.safe_dump, which every scenario and counterexample writer uses, quotes the strings "y" and "n" so
# that what it writes reads back the same
yaml.SafeDumper.add_implicit_resolver("tag:yaml.org,2002:bool", _YAML_11_SHORT_BOOLS, list("yYnN"))


def load_yaml_documents(text: str, file: str, obj: str = "") -> list[Any]:
    """Every document of a YAML stream; a syntax error becomes a ScenarioError."""
    try:
        return list(yaml.load_all(text, Loader=StrictYamlLoader))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = err.problem or err.context or "syntax error"
        raise ScenarioError(file, obj, where, f"invalid YAML: {problem}") from None
    except (yaml.YAMLError, ValueError, RecursionError) as err:
        raise ScenarioError(file, obj, "", f"invalid YAML: {err}") from None


class _ConfReader(Fields):
    """Typed reads of the conf document (fail, mapping, sequence from Fields), plus its warnings."""

    def __init__(self, where: str, warnings: list[str] | None) -> None:
        super().__init__(where, CONF_OBJECT)
        self.warnings = warnings if warnings is not None else []

    def warn(self, field: str, message: str) -> None:
        self.warnings.append(f"{CONF_OBJECT}: {field}: {message}" if field else f"{CONF_OBJECT}: {message}")

    def unknown_keys(self, doc: Mapping[str, Any], known: set[str], field: str) -> None:
        for key in doc:
            if key not in known:
                close = difflib.get_close_matches(str(key), sorted(known), n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                self.warn(field, f"ignored unknown key {key}{hint}")


def parse_scheduler_conf(
    doc: Mapping[str, Any] | str | None, where: str, warnings: list[str] | None = None
) -> SchedulerConf:
    """Read a conf document (a mapping or YAML text) as upstream's loader would.

    `where` names the file the conf came from, for errors. Things upstream
    silently ignores are appended to `warnings` when a list is given. A
    ConfigMap holding the conf under `volcano-scheduler.conf` is accepted too.
    """
    reader = _ConfReader(where, warnings)
    if isinstance(doc, str):
        doc = _single_document(doc, where)
    if isinstance(doc, Mapping) and doc.get("kind") == "ConfigMap":
        doc = _from_configmap(reader, doc)
    if doc is None:
        doc = {}
    root = reader.mapping(doc, "")
    reader.unknown_keys(root, _TOP_KEYS, "")
    built_directly = _built_directly(reader, root.get(BUILT_DIRECTLY_KEY))
    tiers = [_tier(reader, t, f"tiers[{i}]", built_directly)
             for i, t in enumerate(reader.sequence(root.get("tiers"), "tiers"))]
    _deviceshare_conflicts(reader, tiers)
    return SchedulerConf(
        actions=_actions(reader, root.get("actions")),
        tiers=tiers,
        configurations=_configurations(reader, root.get("configurations")),
        pipeline_persistence=_persistence(reader, root.get(PERSISTENCE_KEY)),
        built_directly=built_directly,
    )


def _built_directly(reader: _ConfReader, value: Any) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        reader.fail(BUILT_DIRECTLY_KEY, f"expected true or false, got {describe(value)}")
    return value


def _persistence(reader: _ConfReader, value: Any) -> str:
    if value is None:
        return PERSISTENCE_UPSTREAM
    if value not in PERSISTENCE_MODES:
        reader.fail(PERSISTENCE_KEY, f"expected one of {', '.join(PERSISTENCE_MODES)}, got {describe(value)}")
    return value


def _single_document(text: str, where: str) -> Any:
    docs = [d for d in load_yaml_documents(text, where, CONF_OBJECT) if d is not None]
    if len(docs) > 1:
        raise ScenarioError(where, CONF_OBJECT, "", f"expected one YAML document, got {len(docs)}")
    return docs[0] if docs else None


def _from_configmap(reader: _ConfReader, doc: Mapping[str, Any]) -> Any:
    data = reader.mapping(doc.get("data"), "data")
    if CONFIGMAP_KEY in data:
        key = CONFIGMAP_KEY
    elif len(data) == 1:
        key = next(iter(data))
    else:
        reader.fail("data", f"a ConfigMap holding the conf needs a {CONFIGMAP_KEY} key")
    text = data[key]
    if not isinstance(text, str):
        reader.fail(f"data.{key}", f"expected the conf as a string, got {describe(text)}")
    return _single_document(text, reader.file)


def _actions(reader: _ConfReader, value: Any) -> list[str]:
    if value is None:
        reader.fail(
            "actions",
            'missing: upstream finds no action named "" and rejects the conf (keeping the default conf it runs with)',
        )
    if not isinstance(value, str):
        reader.fail("actions", f'expected a comma-separated string such as "enqueue, allocate", got {describe(value)}')
    names = [name.strip() for name in value.split(",")]
    for name in names:
        if name not in KNOWN_ACTIONS:
            shown = f'unknown action "{name}"' if name else "empty action name"
            reader.fail("actions", f"{shown} (known: {', '.join(sorted(KNOWN_ACTIONS))}); upstream rejects the conf")
    return names


def _tier(reader: _ConfReader, value: Any, field: str, built_directly: bool = False) -> Tier:
    doc = reader.mapping(value, field)
    reader.unknown_keys(doc, {"plugins"}, field)
    plugins = [
        _plugin(reader, p, f"{field}.plugins[{j}]")
        for j, p in enumerate(reader.sequence(doc.get("plugins"), f"{field}.plugins"))
    ]
    names = {p.name for p in plugins}
    hierarchical_drf = any(p.name == "drf" and p.flags.get("enableHierarchy") for p in plugins)
    if built_directly:  # a unit test's conf: the loader's check and defaults below never run
        return Tier(plugins=plugins)
    if hierarchical_drf and "proportion" in names:
        reader.fail(
            field, "drf with enableHierarchy: true and proportion in one tier conflict; upstream rejects the conf"
            f" (a conf a unit test builds directly skips that check: {BUILT_DIRECTLY_KEY}: true)"
        )
    for option in plugins:
        apply_plugin_conf_defaults(option)
    return Tier(plugins=plugins)


def _plugin(reader: _ConfReader, value: Any, field: str) -> PluginOption:
    doc = reader.mapping(value, field)
    reader.unknown_keys(doc, _PLUGIN_KEYS, field)
    name = doc.get("name")
    if not isinstance(name, str):
        reader.fail(f"{field}.name", f"expected a plugin name, got {describe(name)}")
    if name not in KNOWN_PLUGINS and name not in TEST_PLUGINS:
        close = difflib.get_close_matches(name, sorted(KNOWN_PLUGINS), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        reader.fail(f"{field}.name", f'unknown plugin "{name}"{hint}')
    flags: dict[str, bool | None] = {}
    for key in ENABLE_FLAGS:
        flag = doc.get(key)
        if flag is not None and not isinstance(flag, bool):
            reader.fail(f"{field}.{key}", f"expected true or false, got {describe(flag)}")
        if flag is not None:  # an unset flag is absent, as in default_scheduler_conf()
            flags[key] = flag
    arguments = reader.mapping(doc.get("arguments"), f"{field}.arguments")
    if name in TEST_PLUGINS:  # upstream's test-only fixtures (testplugins.py): their arguments are required
        check_arguments(name, arguments, lambda key, why: reader.fail(f"{field}.arguments.{key}", why),
                        lambda key, why: reader.warn(f"{field}.arguments.{key}", why))
    if name == "deviceshare":
        _deviceshare_arguments(reader, arguments, f"{field}.arguments")
    return PluginOption(name=name, arguments=arguments, flags=flags)


def _deviceshare_conflicts(reader: _ConfReader, tiers: list[Tier]) -> None:
    """Upstream exits when a build of deviceshare leaves both GPU-share switches, or one with vGPU, on
    (the switches accumulate over the conf's deviceshare entries)."""
    from schedcheck.reference.plugins import deviceshare

    flags = None
    for t, tier in enumerate(tiers):
        for p, option in enumerate(tier.plugins):
            if option.name == deviceshare.PLUGIN_NAME:
                flags = deviceshare.flags_from_arguments(option.arguments, flags)
                problem = deviceshare.conflict(flags)
                if problem:
                    reader.fail(f"tiers[{t}].plugins[{p}].arguments", f"{problem} (upstream's scheduler exits)")


def _deviceshare_arguments(reader: _ConfReader, arguments: Mapping[str, Any], field: str) -> None:
    """The combinations upstream exits on are one-line errors; values upstream reads leniently are warned
    about by name."""
    from schedcheck.reference.plugins import deviceshare

    rules = arguments.get(deviceshare.GPU_EXCLUSIVE_RULES)
    if rules is not None and not isinstance(rules, list):
        reader.warn(f"{field}.{deviceshare.GPU_EXCLUSIVE_RULES}", "not a list of label maps: no rule applies")


def _configurations(reader: _ConfReader, value: Any) -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(reader.sequence(value, "configurations")):
        field = f"configurations[{i}]"
        doc = reader.mapping(entry, field)
        reader.unknown_keys(doc, {"name", "arguments"}, field)
        name = doc.get("name")
        if not isinstance(name, str):
            reader.fail(f"{field}.name", f"expected an action name, got {describe(name)}")
        arguments = reader.mapping(doc.get("arguments"), f"{field}.arguments")
        if name not in KNOWN_ACTIONS:
            reader.warn(f"{field}.name", f'"{name}" is no action; upstream ignores these arguments')
        if name in result:
            reader.warn(f"{field}.name", f'a second entry for "{name}"; upstream uses only the first')
            continue
        result[name] = arguments
    return result
